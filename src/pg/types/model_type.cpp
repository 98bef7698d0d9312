// The dp_model type: a varlena holding the coefficients for fast prediction
// and the model's JSON text, which is its text form (docs/design.md section
// 1): its layout, its text and binary I/O, and making one from a release.
// Prediction is model_predict.cpp, dp_coefficients model_coefficients.cpp.
#include "dperm/model/feature_spec.hpp"
#include "dperm/model/model.hpp"

#include <cstddef>

#include "types/model_type.hpp"

extern "C" {
#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
}

namespace dperm::pg {
namespace {

// Binary models (logistic, Huber) keep the layout of dperm 0.1.0 and its
// version 1, byte for byte, so every stored model still loads and libraries
// before 0.4.0 still read binary models made by this one. Softmax models are
// version 2: the same header with `classes` in what was padding, and the
// coefficient blocks of the core's layout; older libraries refuse them with
// "unsupported dp_model version 2" instead of misreading them.
const uint16 kBinaryModelVersion = 1;
const uint16 kSoftmaxModelVersion = 2;

// How many coefficients a model of this shape stores.
int64 CoefficientCount(LossKind loss, int d, int classes, bool fit_intercept) {
  if (dperm::LossIsMulticlass(loss)) return int64(classes) * (int64(d) + (fit_intercept ? 1 : 0));
  return d;
}

// Parses a model's JSON text back into a dp_model (dump and restore, casts,
// binary COPY). The schema is the core's (ParseModelJson, beside ModelJson);
// jsonb_in reads the text first, so text that is not JSON gets PostgreSQL's
// own 22P02 error. Other errors: 22P02 naming the field, 54000 for a model
// too large to store.
Datum ParseModel(const char* text) {
  DirectFunctionCall1(jsonb_in, CStringGetDatum(text));
  // A coefficient buffer stays below palloc's limit: a model with more
  // coefficients could not be stored anyway (a varlena is at most 1 GB).
  const int64 max_coefficients = int64(MaxAllocSize / sizeof(double)) - 1;
  PgBox<ModelFields> fields(CurrentMemoryContext);
  RunCore([&] { fields.Emplace(ParseModelJson(text, max_coefficients)); });
  const ModelFields& f = *fields;
  return MakeModelDatum(f.loss, f.d, f.classes, f.fit_intercept, f.feature_bound, f.huber_delta,
                        f.w.data(), text);
}

}  // namespace

int ModelClasses(const ModelDatum* m) {
  return m->version == kSoftmaxModelVersion ? m->classes : 0;
}

const char* ModelJsonText(const ModelDatum* m) {
  int64 count =
      CoefficientCount(static_cast<LossKind>(m->loss), m->d, ModelClasses(m), m->fit_intercept);
  return reinterpret_cast<const char*>(m->coef + count);
}

ModelDatum* CheckedModel(Datum datum) {
  ModelDatum* m = reinterpret_cast<ModelDatum*>(PG_DETOAST_DATUM(datum));
  if (m->version != kBinaryModelVersion && m->version != kSoftmaxModelVersion)
    ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED),
                    errmsg("unsupported dp_model version %d", m->version)));
  LossKind loss = static_cast<LossKind>(m->loss);
  bool softmax = m->version == kSoftmaxModelVersion;
  // A loss of losses.def; multi-class ones have the multi-class layout.
  bool known = size_t(m->loss) < dperm::AllLosses().size();
  bool ok =
      m->d >= 0 && known &&
      (softmax ? dperm::LossIsMulticlass(loss) && m->classes >= 2 : !dperm::LossIsMulticlass(loss));
  Size size = VARSIZE(m);
  Size header = offsetof(ModelDatum, coef);
  if (ok) {
    int64 count = CoefficientCount(loss, m->d, ModelClasses(m), m->fit_intercept);
    ok = size > header && count <= int64((size - header - 1) / sizeof(double)) &&
         reinterpret_cast<const char*>(m)[size - 1] == '\0';
  }
  if (!ok) ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("invalid dp_model value")));
  return m;
}

ModelDatum* GetModel(FunctionCallInfo fcinfo, int arg) {
  return CheckedModel(PG_GETARG_DATUM(arg));
}

Datum MakeModelDatum(LossKind loss, int d, int classes, bool fit_intercept, double feature_bound,
                     double huber_delta, const double* w, const char* json) {
  bool softmax = dperm::LossIsMulticlass(loss);
  int64 count = CoefficientCount(loss, d, classes, fit_intercept);
  Size json_size = strlen(json) + 1;
  Size size = offsetof(ModelDatum, coef) + sizeof(double) * Size(count) + json_size;
  if (!AllocSizeIsValid(size))
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("dp_model of %zu bytes is too large", size)));
  ModelDatum* m = static_cast<ModelDatum*>(palloc0(size));
  SET_VARSIZE(m, size);
  m->version = softmax ? kSoftmaxModelVersion : kBinaryModelVersion;
  m->loss = static_cast<uint8>(loss);
  m->fit_intercept = fit_intercept;
  m->d = d;
  m->classes = softmax ? classes : 0;
  m->feature_bound = feature_bound;
  m->huber_delta = huber_delta;
  // Binary: w = (d weights, intercept); softmax: w is stored as it is.
  m->intercept = !softmax && fit_intercept ? w[d] : 0;
  memcpy(m->coef, w, sizeof(double) * Size(count));
  memcpy(m->coef + count, json, json_size);
  return PointerGetDatum(m);
}

Datum RescaledTargetModel(Datum model, double lo, double hi) {
  std::string json(ModelJsonText(CheckedModel(model)));
  PgBox<std::string> rescaled(CurrentMemoryContext);
  RunCore([&] { rescaled.Emplace(dperm::RescaleTargetModel(json, lo, hi)); });
  return ParseModel(rescaled->c_str());
}

Datum SpecStatedModel(Datum model, const dperm::FeatureSpec& spec) {
  std::string json(ModelJsonText(CheckedModel(model)));
  PgBox<std::string> stated(CurrentMemoryContext);
  RunCore([&] { stated.Emplace(dperm::WithFeatureSpec(json, spec)); });
  return ParseModel(stated->c_str());
}

}  // namespace dperm::pg

using dperm::LossKind;
using namespace dperm::pg;

// dp_model input: the JSON text form.
DPERM_FUNCTION(dp_model_in) { return ParseModel(PG_GETARG_CSTRING(0)); }

// dp_model output: the JSON text form.
DPERM_FUNCTION(dp_model_out) { PG_RETURN_CSTRING(pstrdup(ModelJsonText(GetModel(fcinfo, 0)))); }

// dp_model binary input: the JSON text, as for text input.
DPERM_FUNCTION(dp_model_recv) {
  StringInfo buf = reinterpret_cast<StringInfo>(PG_GETARG_POINTER(0));
  int nbytes;
  char* text = pq_getmsgtext(buf, buf->len - buf->cursor, &nbytes);
  return ParseModel(text);
}

// dp_model binary output: the JSON text.
DPERM_FUNCTION(dp_model_send) {
  const char* json = ModelJsonText(GetModel(fcinfo, 0));
  StringInfoData buf;
  pq_begintypsend(&buf);
  pq_sendtext(&buf, json, strlen(json));
  PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}
