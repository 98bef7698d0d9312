// The dp_model type: a varlena holding the coefficients for fast prediction
// and the model's JSON text, which is its text form (DESIGN.md section 1).
#include "dperm/model.hpp"

#include <cmath>
#include <cstddef>

#include "arrays.hpp"
#include "model_type.hpp"
#include "options_pg.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
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
int Classes(const ModelDatum* m) {
  return m->version == kSoftmaxModelVersion ? m->classes : 0;
}

int64 CoefficientCount(LossKind loss, int d, int classes, bool fit_intercept) {
  if (loss == LossKind::kSoftmax) return int64(classes) * (int64(d) + (fit_intercept ? 1 : 0));
  return d;
}

const char* ModelJsonText(const ModelDatum* m) {
  int64 count = CoefficientCount(static_cast<LossKind>(m->loss), m->d, Classes(m),
                                 m->fit_intercept);
  return reinterpret_cast<const char*>(m->coef + count);
}

// The model argument, detoasted and checked: a known version whose loss,
// sizes and JSON text agree with its length.
ModelDatum* GetModel(FunctionCallInfo fcinfo, int arg) {
  ModelDatum* m = reinterpret_cast<ModelDatum*>(PG_DETOAST_DATUM(PG_GETARG_DATUM(arg)));
  if (m->version != kBinaryModelVersion && m->version != kSoftmaxModelVersion)
    ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED),
                    errmsg("unsupported dp_model version %d", m->version)));
  LossKind loss = static_cast<LossKind>(m->loss);
  bool softmax = m->version == kSoftmaxModelVersion;
  bool ok = m->d >= 0 &&
            (softmax ? loss == LossKind::kSoftmax && m->classes >= 2
                     : loss == LossKind::kLogistic || loss == LossKind::kHuber);
  Size size = VARSIZE(m);
  Size header = offsetof(ModelDatum, coef);
  if (ok) {
    int64 count = CoefficientCount(loss, m->d, Classes(m), m->fit_intercept);
    ok = size > header && count <= int64((size - header - 1) / sizeof(double)) &&
         reinterpret_cast<const char*>(m)[size - 1] == '\0';
  }
  if (!ok)
    ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("invalid dp_model value")));
  return m;
}

[[noreturn]] void BadModel(const char* why) {
  ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                  errmsg("invalid dp_model: %s", why)));
  pg_unreachable();
}

// Reading the model JSON. Every member is checked for its kind before use:
// a jbvBinary value is an array or an object container, and reading an
// array as an object (or the reverse) is undefined, so each container is
// tested with JsonContainerIsObject / JsonContainerIsArray first.

// A member of an object container, or nullptr when absent.
JsonbValue* Field(JsonbContainer* object, const char* key) {
  Assert(JsonContainerIsObject(object));
  return getKeyJsonValueFromContainer(object, key, strlen(key), nullptr);
}

// v as an object container; anything else is an error naming `what`.
JsonbContainer* AsObject(JsonbValue* v, const char* what) {
  if (v == nullptr || v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
    BadModel(psprintf("\"%s\" must be an object", what));
  return v->val.binary.data;
}

// v as an array container; anything else is an error naming `what`.
JsonbContainer* AsArray(JsonbValue* v, const char* what) {
  if (v == nullptr || v->type != jbvBinary || !JsonContainerIsArray(v->val.binary.data) ||
      JsonContainerIsScalar(v->val.binary.data))
    BadModel(psprintf("\"%s\" must be an array", what));
  return v->val.binary.data;
}

// Element i of an array container (i < its size).
JsonbValue* Element(JsonbContainer* array, int i) {
  return getIthJsonbValueFromContainer(array, uint32(i));
}

// A JSON number as a finite double. jsonb numbers are finite (JSON has no
// NaN or Infinity) but may lie beyond double precision: 1e400 is an error
// naming the field; 1e-400 reads as 0, as strtod gives it.
double NumberField(JsonbValue* v, const char* key) {
  if (v == nullptr || v->type != jbvNumeric) BadModel(psprintf("\"%s\" must be a number", key));
  double x = DatumGetFloat8(
      DirectFunctionCall1(numeric_float8_no_overflow, NumericGetDatum(v->val.numeric)));
  if (!std::isfinite(x))
    BadModel(psprintf("\"%s\" is out of range for type double precision", key));
  return x;
}

// Most classes a model may have (the limit of the classes option).
const int kMaxClasses = 100000;

// Coefficient buffers stay below palloc's limit: a model with more
// coefficients could not be stored anyway (a varlena is at most 1 GB).
void CheckCoefficientCount(int64 count) {
  if (count + 1 > int64(MaxAllocSize / sizeof(double)))
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("dp_model with %lld coefficients is too large",
                           static_cast<long long>(count))));
}

// Reads a softmax model's coefficients into the core's layout: K blocks of
// (d weights, intercept when fitted). Every row is checked before the
// buffer is allocated, so its size follows the input's. Sets *d.
double* ReadSoftmaxCoefficients(JsonbContainer* j, int classes, bool fit_intercept, int* d) {
  JsonbContainer* coef = AsArray(Field(j, "coefficients"), "coefficients");
  if (int(JsonContainerSize(coef)) != classes)
    BadModel(psprintf("\"coefficients\" must hold %d arrays, one per class", classes));
  JsonbContainer* intercept = fit_intercept ? AsArray(Field(j, "intercept"), "intercept") : nullptr;
  if (intercept != nullptr && int(JsonContainerSize(intercept)) != classes)
    BadModel(psprintf("\"intercept\" must hold %d numbers, one per class", classes));
  JsonbContainer** rows = static_cast<JsonbContainer**>(palloc(sizeof(JsonbContainer*) * classes));
  for (int k = 0; k < classes; k++) {
    rows[k] = AsArray(Element(coef, k), "coefficients");
    if (k == 0)
      *d = int(JsonContainerSize(rows[0]));
    else if (int(JsonContainerSize(rows[k])) != *d)
      BadModel("every class needs the same number of coefficients");
  }
  int per_class = *d + (fit_intercept ? 1 : 0);
  if (per_class < 1) BadModel("a model without features needs an intercept");
  CheckCoefficientCount(int64(classes) * per_class);
  double* w = static_cast<double*>(palloc(sizeof(double) * Size(per_class) * classes));
  for (int k = 0; k < classes; k++) {
    double* block = w + Size(k) * per_class;
    CHECK_FOR_INTERRUPTS();  // PostgreSQL phase: no C++ object is alive
    for (int i = 0; i < *d; i++) block[i] = NumberField(Element(rows[k], i), "coefficients");
    if (fit_intercept) block[*d] = NumberField(Element(intercept, k), "intercept");
  }
  return w;
}

// feature_names, when present and not null, is an array of d strings: the
// names dp_coefficients prints. dp_coefficients still reads any shape
// (models stored before this check), falling back to x1, x2, ...
void CheckFeatureNames(JsonbContainer* j, int d) {
  JsonbValue* names = Field(j, "feature_names");
  if (names == nullptr || names->type == jbvNull) return;
  JsonbContainer* a = AsArray(names, "feature_names");
  if (int(JsonContainerSize(a)) != d)
    BadModel(psprintf("\"feature_names\" must hold %d names, one per feature", d));
  for (int i = 0; i < d; i++) {
    JsonbValue* name = Element(a, i);
    if (name == nullptr || name->type != jbvString) BadModel("\"feature_names\" must hold strings");
  }
}

// Parses a model's JSON text back into a dp_model (dump and restore, casts,
// binary COPY). Errors are 22P02 naming the field (54000 for a model too
// large to store; jsonb_in's own errors for text that is not JSON).
Datum ParseModel(const char* text) {
  Jsonb* jb = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
  if (!JB_ROOT_IS_OBJECT(jb) || JB_ROOT_IS_SCALAR(jb)) BadModel("not a JSON object");
  JsonbContainer* j = &jb->root;
  JsonbValue* loss = Field(j, "loss");
  if (loss == nullptr || loss->type != jbvString) BadModel("\"loss\" must be a string");
  const char* loss_name = pnstrdup(loss->val.string.val, loss->val.string.len);
  if (strcmp(loss_name, "logistic") != 0 && strcmp(loss_name, "huber") != 0 &&
      strcmp(loss_name, "softmax") != 0)
    BadModel("\"loss\" must be \"logistic\", \"huber\" or \"softmax\"");
  LossKind kind = ParseLossName(loss_name);
  JsonbContainer* pre = AsObject(Field(j, "preprocessing"), "preprocessing");
  double bound = NumberField(Field(pre, "feature_bound"), "feature_bound");
  double huber_delta = NumberField(Field(pre, "huber_delta"), "huber_delta");
  if (!(bound > 0) || !(huber_delta > 0)) BadModel("feature_bound and huber_delta must be positive");
  JsonbValue* fit = Field(pre, "fit_intercept");
  if (fit == nullptr || fit->type != jbvBool) BadModel("\"fit_intercept\" must be a boolean");
  bool fit_intercept = fit->val.boolean;
  if (kind == LossKind::kSoftmax) {
    JsonbValue* classes_v = Field(j, "classes");
    if (classes_v == nullptr || classes_v->type != jbvNumeric) BadModel("\"classes\" must be a number");
    // Compared as numeric, so 1e400 or -1e400 gets this message too.
    Datum k = NumericGetDatum(classes_v->val.numeric);
    bool in_range =
        DatumGetBool(DirectFunctionCall2(numeric_ge, k, NumericGetDatum(int64_to_numeric(2)))) &&
        DatumGetBool(
            DirectFunctionCall2(numeric_le, k, NumericGetDatum(int64_to_numeric(kMaxClasses))));
    double kd = in_range ? NumberField(classes_v, "classes") : 0;
    if (!in_range || kd != std::floor(kd))
      BadModel(psprintf("\"classes\" must be an integer between 2 and %d", kMaxClasses));
    int classes = int(kd);
    int d = 0;
    double* w = ReadSoftmaxCoefficients(j, classes, fit_intercept, &d);
    CheckFeatureNames(j, d);
    return MakeModelDatum(kind, d, classes, fit_intercept, bound, huber_delta, w, text);
  }
  JsonbContainer* coef = AsArray(Field(j, "coefficients"), "coefficients");
  int d = int(JsonContainerSize(coef));
  CheckCoefficientCount(d);
  double* w = static_cast<double*>(palloc(sizeof(double) * (Size(d) + 1)));
  for (int i = 0; i < d; i++) {
    if ((i & 4095) == 4095) CHECK_FOR_INTERRUPTS();  // PostgreSQL phase: no C++ object is alive
    w[i] = NumberField(Element(coef, i), "coefficients");
  }
  w[d] = fit_intercept ? NumberField(Field(j, "intercept"), "intercept") : 0;
  CheckFeatureNames(j, d);
  return MakeModelDatum(kind, d, 0, fit_intercept, bound, huber_delta, w, text);
}

}  // namespace

Datum MakeModelDatum(LossKind loss, int d, int classes, bool fit_intercept,
                     double feature_bound, double huber_delta, const double* w,
                     const char* json) {
  bool softmax = loss == LossKind::kSoftmax;
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

namespace {

// The features argument as d doubles (NULL elements become NaN, which
// clipping turns into 0, as in training).
double* PredictFeatures(FunctionCallInfo fcinfo, int arg, int d) {
  ArrayType* array = PG_GETARG_ARRAYTYPE_P(arg);
  if (ARR_NDIM(array) > 1)
    ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
                    errmsg("features must be a one-dimensional array")));
  Datum* values;
  bool* nulls;
  int n;
  deconstruct_array(array, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
                    &values, &nulls, &n);
  if (n != d)
    ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
                    errmsg("features have %d dimensions, the model expects %d", n, d)));
  double* x = static_cast<double*>(palloc(sizeof(double) * (n + 1)));
  for (int i = 0; i < n; i++) x[i] = nulls[i] ? NAN : DatumGetFloat8(values[i]);
  return x;
}

// dp_predict_class and dp_predict_proba need a classifier.
void RequireClassifier(const ModelDatum* m, const char* function) {
  if (static_cast<LossKind>(m->loss) == LossKind::kHuber)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s needs a classification model, not a Huber regression model",
                           function),
                    errhint("Use dp_predict(model, features) for the predictions of a Huber model.")));
}

// Class probabilities of a classifier (PostgreSQL phase: Predict and
// PredictSoftmax are noexcept functions of plain buffers). Binary logistic
// models have two classes, 0 (label false / <= 0) and 1: {1 - p, p}.
double* ClassProbabilities(const ModelDatum* m, const double* x, int* classes) {
  double* scratch = static_cast<double*>(palloc(sizeof(double) * (m->d + 1)));
  if (static_cast<LossKind>(m->loss) == LossKind::kSoftmax) {
    *classes = Classes(m);
    double* proba = static_cast<double*>(palloc(sizeof(double) * *classes));
    dperm::PredictSoftmax(m->coef, *classes, m->d, m->fit_intercept, m->feature_bound, x,
                          scratch, proba);
    return proba;
  }
  double p = dperm::Predict(LossKind::kLogistic, m->coef, m->d, m->intercept,
                            m->feature_bound, x, scratch);
  *classes = 2;
  double* proba = static_cast<double*>(palloc(sizeof(double) * 2));
  proba[0] = 1 - p;
  proba[1] = p;
  return proba;
}

}  // namespace

// dp_predict(model, features): probability (logistic) or prediction (Huber),
// with the training clipping applied to the features.
DPERM_FUNCTION(dp_predict) {
  ModelDatum* m = GetModel(fcinfo, 0);
  if (static_cast<LossKind>(m->loss) == LossKind::kSoftmax)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("dp_predict does not apply to softmax models"),
                    errhint("Use dp_predict_class(model, features) for the most likely class "
                            "or dp_predict_proba(model, features) for the class probabilities.")));
  double* x = PredictFeatures(fcinfo, 1, m->d);
  double* scratch = static_cast<double*>(palloc(sizeof(double) * (m->d + 1)));
  PG_RETURN_FLOAT8(dperm::Predict(static_cast<LossKind>(m->loss), m->coef, m->d,
                                  m->intercept, m->feature_bound, x, scratch));
}

// dp_predict_class(model, features): the most likely class (0 .. K-1; binary
// logistic models: 1 when p > 0.5, else 0), with the training clipping.
DPERM_FUNCTION(dp_predict_class) {
  ModelDatum* m = GetModel(fcinfo, 0);
  RequireClassifier(m, "dp_predict_class");
  double* x = PredictFeatures(fcinfo, 1, m->d);
  int classes;
  double* proba = ClassProbabilities(m, x, &classes);
  if (static_cast<LossKind>(m->loss) == LossKind::kLogistic) PG_RETURN_INT32(proba[1] > 0.5 ? 1 : 0);
  PG_RETURN_INT32(dperm::ArgMax(proba, classes));
}

// dp_predict_proba(model, features): the class probabilities, class 0 first
// (binary logistic models: {1 - p, p}), with the training clipping.
DPERM_FUNCTION(dp_predict_proba) {
  ModelDatum* m = GetModel(fcinfo, 0);
  RequireClassifier(m, "dp_predict_proba");
  double* x = PredictFeatures(fcinfo, 1, m->d);
  int classes;
  double* proba = ClassProbabilities(m, x, &classes);
  return Float8ArrayDatum(proba, classes);
}

// dp_coefficients(model): one row per coefficient, the intercept first; a
// softmax model lists class 0's intercept and terms, then class 1's, ...
// The class column (NULL for binary models) exists from 0.4.0; under an
// older catalog (two columns) binary models are listed without it.
DPERM_FUNCTION(dp_coefficients) {
  ModelDatum* m = GetModel(fcinfo, 0);
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  bool has_class = rsinfo->setDesc->natts >= 3;
  bool softmax = static_cast<LossKind>(m->loss) == LossKind::kSoftmax;
  if (softmax && !has_class)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("dp_coefficients of a softmax model needs dperm 0.4.0"),
                    errhint("Run ALTER EXTENSION dperm UPDATE.")));
  // The names, if feature_names is an array (input checks it is one of d
  // strings; a model stored before that check may hold anything there).
  Jsonb* j = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(ModelJsonText(m))));
  JsonbValue* names = JB_ROOT_IS_OBJECT(j) && !JB_ROOT_IS_SCALAR(j)
                          ? getKeyJsonValueFromContainer(&j->root, "feature_names", 13, nullptr)
                          : nullptr;
  JsonbContainer* names_a = names != nullptr && names->type == jbvBinary &&
                                    JsonContainerIsArray(names->val.binary.data)
                                ? names->val.binary.data
                                : nullptr;
  int n_names = names_a != nullptr ? int(JsonContainerSize(names_a)) : 0;
  Datum* terms = static_cast<Datum*>(palloc(sizeof(Datum) * (m->d + 1)));
  for (int i = 0; i < m->d; i++) {
    JsonbValue* name = i < n_names ? getIthJsonbValueFromContainer(names_a, uint32(i)) : nullptr;
    terms[i] = name != nullptr && name->type == jbvString
                   ? PointerGetDatum(cstring_to_text_with_len(name->val.string.val, name->val.string.len))
                   : CStringGetTextDatum(psprintf("x%d", i + 1));
  }
  Datum intercept_term = CStringGetTextDatum("intercept");
  Datum values[3];
  bool nulls[3] = {false, false, !softmax};
  // Binary: one block of (d weights) with m->intercept; softmax: K blocks of
  // (d weights, intercept when fitted).
  int blocks = softmax ? Classes(m) : 1;
  int per_class = softmax ? m->d + (m->fit_intercept ? 1 : 0) : m->d;
  for (int k = 0; k < blocks; k++) {
    const double* w = m->coef + Size(k) * per_class;
    values[2] = Int32GetDatum(k);
    if (m->fit_intercept) {
      values[0] = intercept_term;
      values[1] = Float8GetDatum(softmax ? w[m->d] : m->intercept);
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
    for (int i = 0; i < m->d; i++) {
      values[0] = terms[i];
      values[1] = Float8GetDatum(w[i]);
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
  }
  return (Datum)0;
}
