// The dp_model type (model_type.cpp): its layout, checked access to a
// stored value, and making one from a release.
#pragma once

#include "dperm/options/options.hpp"
#include "base/boundary.hpp"

namespace dperm {
struct FeatureSpec;
}

namespace dperm::pg {

// On-disk layout: header, the coefficients, then the JSON text with its NUL.
struct ModelDatum {
  int32 vl_len_;
  uint16 version;
  uint8 loss;
  uint8 fit_intercept;
  int32 d;
  int32 classes;  // version 2: K >= 2; version 1: padding, read as 0
  double feature_bound;
  double huber_delta;
  double intercept;  // version 1: the intercept (0 when not fitted); version 2: 0
  // Version 1: d weights. Version 2: K blocks of d weights followed by the
  // class's intercept when fitted, class after class (softmax.hpp).
  double coef[FLEXIBLE_ARRAY_MEMBER];
};
static_assert(offsetof(ModelDatum, classes) == 12 && offsetof(ModelDatum, feature_bound) == 16,
              "the header of version 1 models must not move");

// K of a softmax model, 0 for binary models (whatever a version 1 padding holds).
int ModelClasses(const ModelDatum* m);

// The model's JSON text, after its coefficients.
const char* ModelJsonText(const ModelDatum* m);

// A dp_model datum, detoasted and checked: a known version whose loss,
// sizes and JSON text agree with its length.
ModelDatum* CheckedModel(Datum datum);

// The model argument `arg`, detoasted and checked (CheckedModel).
ModelDatum* GetModel(FunctionCallInfo fcinfo, int arg);

// A dp_model value from the released coefficients and the model's JSON
// text. Binary models (classes = 0): w holds the d feature weights, then the
// intercept when fitted. Softmax models: `classes` blocks of that shape,
// class after class (softmax.hpp).
Datum MakeModelDatum(LossKind loss, int d, int classes, bool fit_intercept, double feature_bound,
                     double huber_delta, const double* w, const char* json);

// A Huber model trained on a spec label's targets scaled from [lo, hi],
// mapped back to the label's units (the core's RescaleTargetModel):
// post-processing of the release.
Datum RescaledTargetModel(Datum model, double lo, double hi);

// A model trained through `spec`, stating it as "feature_spec"
// (dperm::WithFeatureSpec): dp_coefficients then reads it in the raw
// columns' units, in the spec's order. Post-processing: no charge.
Datum SpecStatedModel(Datum model, const dperm::FeatureSpec& spec);

}  // namespace dperm::pg
