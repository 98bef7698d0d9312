// The dp_model type (model_type.cpp).
#pragma once

#include "dperm/options/options.hpp"
#include "boundary.hpp"

namespace dperm::pg {

// A dp_model value from the released coefficients and the model's JSON
// text. Binary models (classes = 0): w holds the d feature weights, then the
// intercept when fitted. Softmax models: `classes` blocks of that shape,
// class after class (softmax.hpp).
Datum MakeModelDatum(LossKind loss, int d, int classes, bool fit_intercept,
                     double feature_bound, double huber_delta, const double* w,
                     const char* json);

// A Huber model trained on a spec label's targets scaled from [lo, hi],
// mapped back to the label's units (the core's RescaleTargetModel):
// post-processing of the release.
Datum RescaledTargetModel(Datum model, double lo, double hi);

}  // namespace dperm::pg
