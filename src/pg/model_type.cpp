// The dp_model type: a varlena holding the coefficients for fast prediction
// and the model's JSON text, which is its text form (DESIGN.md section 1).
#include "dperm/model.hpp"

#include <cmath>

#include "dperm_pg.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "libpq/pqformat.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
}

namespace dperm::pg {
namespace {

const uint16 kModelVersion = 1;

// On-disk layout: header, d coefficients, then the JSON text with its NUL.
struct ModelDatum {
  int32 vl_len_;
  uint16 version;
  uint8 loss;
  uint8 fit_intercept;
  int32 d;
  double feature_bound;
  double huber_delta;
  double intercept;  // 0 when not fitted
  double coef[FLEXIBLE_ARRAY_MEMBER];
};

const char* ModelJsonText(const ModelDatum* m) {
  return reinterpret_cast<const char*>(m->coef + m->d);
}

ModelDatum* GetModel(FunctionCallInfo fcinfo, int arg) {
  ModelDatum* m = reinterpret_cast<ModelDatum*>(PG_DETOAST_DATUM(PG_GETARG_DATUM(arg)));
  if (m->version != kModelVersion)
    ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED),
                    errmsg("unsupported dp_model version %d", m->version)));
  return m;
}

[[noreturn]] void BadModel(const char* why) {
  ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                  errmsg("invalid dp_model: %s", why)));
  pg_unreachable();
}

JsonbValue* Field(Jsonb* j, const char* key) {
  return getKeyJsonValueFromContainer(&j->root, key, strlen(key), nullptr);
}

double NumberField(JsonbValue* v, const char* key) {
  if (v == nullptr || v->type != jbvNumeric) BadModel(psprintf("\"%s\" must be a number", key));
  return DatumGetFloat8(DirectFunctionCall1(numeric_float8, NumericGetDatum(v->val.numeric)));
}

// Parses a model's JSON text back into a dp_model (dump and restore, casts).
Datum ParseModel(const char* text) {
  Jsonb* j = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
  if (!JB_ROOT_IS_OBJECT(j) || JB_ROOT_IS_SCALAR(j)) BadModel("not a JSON object");
  JsonbValue* loss = Field(j, "loss");
  if (loss == nullptr || loss->type != jbvString) BadModel("\"loss\" must be a string");
  LossKind kind = ParseLossName(pnstrdup(loss->val.string.val, loss->val.string.len));
  JsonbValue* pre = Field(j, "preprocessing");
  if (pre == nullptr || pre->type != jbvBinary) BadModel("\"preprocessing\" must be an object");
  Jsonb* pre_j = JsonbValueToJsonb(pre);
  double bound = NumberField(Field(pre_j, "feature_bound"), "feature_bound");
  double huber_delta = NumberField(Field(pre_j, "huber_delta"), "huber_delta");
  if (!(bound > 0) || !(huber_delta > 0)) BadModel("feature_bound and huber_delta must be positive");
  JsonbValue* fit = Field(pre_j, "fit_intercept");
  if (fit == nullptr || fit->type != jbvBool) BadModel("\"fit_intercept\" must be a boolean");
  JsonbValue* coefs = Field(j, "coefficients");
  if (coefs == nullptr || coefs->type != jbvBinary) BadModel("\"coefficients\" must be an array");
  Jsonb* coef_j = JsonbValueToJsonb(coefs);
  if (!JB_ROOT_IS_ARRAY(coef_j) || JB_ROOT_IS_SCALAR(coef_j)) BadModel("\"coefficients\" must be an array");
  int d = JB_ROOT_COUNT(coef_j);
  double* w = static_cast<double*>(palloc(sizeof(double) * (d + 1)));
  for (int i = 0; i < d; i++)
    w[i] = NumberField(getIthJsonbValueFromContainer(&coef_j->root, i), "coefficients");
  JsonbValue* intercept = Field(j, "intercept");
  w[d] = fit->val.boolean ? NumberField(intercept, "intercept") : 0;
  return MakeModelDatum(kind, d, fit->val.boolean, bound, huber_delta, w, text);
}

}  // namespace

Datum MakeModelDatum(LossKind loss, int d, bool fit_intercept,
                     double feature_bound, double huber_delta, const double* w,
                     const char* json) {
  Size json_size = strlen(json) + 1;
  Size size = offsetof(ModelDatum, coef) + sizeof(double) * d + json_size;
  ModelDatum* m = static_cast<ModelDatum*>(palloc0(size));
  SET_VARSIZE(m, size);
  m->version = kModelVersion;
  m->loss = static_cast<uint8>(loss);
  m->fit_intercept = fit_intercept;
  m->d = d;
  m->feature_bound = feature_bound;
  m->huber_delta = huber_delta;
  m->intercept = fit_intercept ? w[d] : 0;
  memcpy(m->coef, w, sizeof(double) * d);
  memcpy(m->coef + d, json, json_size);
  return PointerGetDatum(m);
}

}  // namespace dperm::pg

using dperm::LossKind;
using namespace dperm::pg;

// dp_model input: the JSON text form.
DPERM_FUNCTION(dp_model_in) {
  return ParseModel(PG_GETARG_CSTRING(0));
}

// dp_model output: the JSON text form.
DPERM_FUNCTION(dp_model_out) {
  PG_RETURN_CSTRING(pstrdup(ModelJsonText(GetModel(fcinfo, 0))));
}

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

// dp_predict(model, features): probability (logistic) or prediction (Huber),
// with the training clipping applied to the features.
DPERM_FUNCTION(dp_predict) {
  ModelDatum* m = GetModel(fcinfo, 0);
  ArrayType* array = PG_GETARG_ARRAYTYPE_P(1);
  if (ARR_NDIM(array) > 1)
    ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
                    errmsg("features must be a one-dimensional array")));
  Datum* values;
  bool* nulls;
  int n;
  deconstruct_array(array, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
                    &values, &nulls, &n);
  if (n != m->d)
    ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
                    errmsg("features have %d dimensions, the model expects %d", n, m->d)));
  double* x = static_cast<double*>(palloc(sizeof(double) * (n + 1)));
  double* scratch = static_cast<double*>(palloc(sizeof(double) * (n + 1)));
  for (int i = 0; i < n; i++) x[i] = nulls[i] ? NAN : DatumGetFloat8(values[i]);
  PG_RETURN_FLOAT8(dperm::Predict(static_cast<LossKind>(m->loss), m->coef, m->d,
                                  m->intercept, m->feature_bound, x, scratch));
}

// dp_coefficients(model): one row per coefficient, the intercept first.
DPERM_FUNCTION(dp_coefficients) {
  ModelDatum* m = GetModel(fcinfo, 0);
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  Jsonb* j = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(ModelJsonText(m))));
  JsonbValue* names = getKeyJsonValueFromContainer(&j->root, "feature_names", 13, nullptr);
  Jsonb* names_j = names != nullptr && names->type == jbvBinary ? JsonbValueToJsonb(names) : nullptr;
  Datum values[2];
  bool nulls[2] = {false, false};
  if (m->fit_intercept) {
    values[0] = CStringGetTextDatum("intercept");
    values[1] = Float8GetDatum(m->intercept);
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
  }
  for (int i = 0; i < m->d; i++) {
    JsonbValue* name = names_j != nullptr ? getIthJsonbValueFromContainer(&names_j->root, i) : nullptr;
    values[0] = name != nullptr && name->type == jbvString
                    ? PointerGetDatum(cstring_to_text_with_len(name->val.string.val, name->val.string.len))
                    : CStringGetTextDatum(psprintf("x%d", i + 1));
    values[1] = Float8GetDatum(m->coef[i]);
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
  }
  return (Datum)0;
}
