// dp_predict, dp_predict_class and dp_predict_proba (model_predict.hpp): a
// column of models read row by row is decoded once per distinct stored
// value, and the features are clipped as in training.
#include "dperm/model/model.hpp"

#include <cmath>

#include "base/arrays.hpp"
#include "types/model_predict.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "utils/array.h"
}

namespace dperm::pg {

void LoadModel(PredictCache* c, MemoryContext mcxt, Datum datum) {
  if (c->model != nullptr) {
    pfree(c->model);
    pfree(c->x);
    pfree(c->scratch);
    pfree(c->proba);
    c->model = nullptr;
  }
  ModelDatum* m = CheckedModel(datum);
  ModelDatum* copy = static_cast<ModelDatum*>(MemoryContextAlloc(mcxt, VARSIZE(m)));
  memcpy(copy, m, VARSIZE(m));
  c->x = static_cast<double*>(MemoryContextAlloc(mcxt, sizeof(double) * (m->d + 1)));
  c->scratch = static_cast<double*>(MemoryContextAlloc(mcxt, sizeof(double) * (m->d + 1)));
  c->proba =
      static_cast<double*>(MemoryContextAlloc(mcxt, sizeof(double) * Max(ModelClasses(m), 2)));
  c->model = copy;
}

const double* PredictFeatures(FunctionCallInfo fcinfo, int arg, PredictCache* c) {
  int d = c->model->d;
  ArrayType* array = PG_GETARG_ARRAYTYPE_P(arg);
  if (ARR_NDIM(array) > 1)
    ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
                    errmsg("features must be a one-dimensional array")));
  int n = ARR_NDIM(array) == 0 ? 0 : ARR_DIMS(array)[0];
  if (n != d)
    ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
                    errmsg("features have %d dimensions, the model expects %d", n, d)));
  if (!ARR_HASNULL(array)) return reinterpret_cast<const double*>(ARR_DATA_PTR(array));
  Datum* values;
  bool* nulls;
  deconstruct_array(array, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &values,
                    &nulls, &n);
  for (int i = 0; i < n; i++) c->x[i] = nulls[i] ? NAN : DatumGetFloat8(values[i]);
  return c->x;
}

int ClassProbabilities(PredictCache* c, const double* x) {
  const ModelDatum* m = c->model;
  const LossKind loss = static_cast<LossKind>(m->loss);
  if (dperm::LossLink(loss) == dperm::Link::kSoftmax) {
    dperm::PredictSoftmax(m->coef, ModelClasses(m), m->d, m->fit_intercept, m->feature_bound, x,
                          c->scratch, c->proba);
    return ModelClasses(m);
  }
  double p = dperm::Predict(loss, m->coef, m->d, m->intercept, m->feature_bound, x, c->scratch);
  c->proba[0] = 1 - p;
  c->proba[1] = p;
  return 2;
}

}  // namespace dperm::pg

using dperm::LossKind;
using namespace dperm::pg;

namespace {

// The model argument of a prediction and its call site's buffers: decoded
// again only when the argument's bytes differ from the last row's.
PredictCache* CachedModel(FunctionCallInfo fcinfo) {
  PredictCache* c = static_cast<PredictCache*>(fcinfo->flinfo->fn_extra);
  const varlena* raw = reinterpret_cast<const varlena*>(DatumGetPointer(PG_GETARG_DATUM(0)));
  Size raw_size = VARSIZE_ANY(raw);
  if (c != nullptr && c->raw_size == raw_size && memcmp(c->raw, raw, raw_size) == 0) return c;
  MemoryContext mcxt = fcinfo->flinfo->fn_mcxt;
  if (c == nullptr) {
    c = static_cast<PredictCache*>(MemoryContextAllocZero(mcxt, sizeof(PredictCache)));
    fcinfo->flinfo->fn_extra = c;
  } else {
    pfree(c->raw);
    c->raw = nullptr;
    c->raw_size = 0;
  }
  LoadModel(c, mcxt, PG_GETARG_DATUM(0));
  c->raw = static_cast<char*>(MemoryContextAlloc(mcxt, raw_size));
  memcpy(c->raw, raw, raw_size);
  c->raw_size = raw_size;
  return c;
}

// dp_predict_class and dp_predict_proba need a classifier: not a target label.
void RequireClassifier(const ModelDatum* m, const char* function) {
  if (dperm::LossLabel(static_cast<LossKind>(m->loss)) == dperm::LabelKind::kTarget)
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("%s needs a classification model, not a Huber regression model", function),
             errhint("Use dp_predict(model, features) for the predictions of a Huber model.")));
}

}  // namespace

// dp_predict(model, features): probability (logistic) or prediction (Huber),
// with the training clipping applied to the features.
DPERM_FUNCTION(dp_predict) {
  PredictCache* c = CachedModel(fcinfo);
  const ModelDatum* m = c->model;
  if (dperm::LossLink(static_cast<LossKind>(m->loss)) == dperm::Link::kSoftmax)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("dp_predict does not apply to softmax models"),
                    errhint("Use dp_predict_class(model, features) for the most likely class "
                            "or dp_predict_proba(model, features) for the class probabilities.")));
  const double* x = PredictFeatures(fcinfo, 1, c);
  PG_RETURN_FLOAT8(dperm::Predict(static_cast<LossKind>(m->loss), m->coef, m->d, m->intercept,
                                  m->feature_bound, x, c->scratch));
}

// dp_predict_class(model, features): the most likely class (0 .. K-1; binary
// logistic models: 1 when p > 0.5, else 0), with the training clipping.
DPERM_FUNCTION(dp_predict_class) {
  PredictCache* c = CachedModel(fcinfo);
  RequireClassifier(c->model, "dp_predict_class");
  int classes = ClassProbabilities(c, PredictFeatures(fcinfo, 1, c));
  if (dperm::LossLabel(static_cast<LossKind>(c->model->loss)) == dperm::LabelKind::kBinary)
    PG_RETURN_INT32(c->proba[1] > 0.5 ? 1 : 0);
  PG_RETURN_INT32(dperm::ArgMax(c->proba, classes));
}

// dp_predict_proba(model, features): the class probabilities, class 0 first
// (binary logistic models: {1 - p, p}), with the training clipping.
DPERM_FUNCTION(dp_predict_proba) {
  PredictCache* c = CachedModel(fcinfo);
  RequireClassifier(c->model, "dp_predict_proba");
  int classes = ClassProbabilities(c, PredictFeatures(fcinfo, 1, c));
  return Float8ArrayDatum(c->proba, classes);
}
