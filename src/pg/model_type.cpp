// The dp_model type: a varlena holding the coefficients for fast prediction
// and the model's JSON text, which is its text form (docs/design.md section 1).
#include "dperm/model/feature_spec.hpp"
#include "dperm/model/model.hpp"

#include <cmath>
#include <cstddef>

#include "arrays.hpp"
#include "feature_spec_pg.hpp"
#include "internal_sql.hpp"
#include "model_type.hpp"
#include "options_pg.hpp"

extern "C" {
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/snapmgr.h"
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
  if (dperm::LossIsMulticlass(loss)) return int64(classes) * (int64(d) + (fit_intercept ? 1 : 0));
  return d;
}

const char* ModelJsonText(const ModelDatum* m) {
  int64 count = CoefficientCount(static_cast<LossKind>(m->loss), m->d, Classes(m),
                                 m->fit_intercept);
  return reinterpret_cast<const char*>(m->coef + count);
}

// A dp_model datum, detoasted and checked: a known version whose loss,
// sizes and JSON text agree with its length.
ModelDatum* CheckedModel(Datum datum) {
  ModelDatum* m = reinterpret_cast<ModelDatum*>(PG_DETOAST_DATUM(datum));
  if (m->version != kBinaryModelVersion && m->version != kSoftmaxModelVersion)
    ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED),
                    errmsg("unsupported dp_model version %d", m->version)));
  LossKind loss = static_cast<LossKind>(m->loss);
  bool softmax = m->version == kSoftmaxModelVersion;
  // A loss of losses.def; multi-class ones have the multi-class layout.
  bool known = size_t(m->loss) < dperm::AllLosses().size();
  bool ok = m->d >= 0 && known &&
            (softmax ? dperm::LossIsMulticlass(loss) && m->classes >= 2
                     : !dperm::LossIsMulticlass(loss));
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

// The model argument `arg`, detoasted and checked (CheckedModel).
ModelDatum* GetModel(FunctionCallInfo fcinfo, int arg) {
  return CheckedModel(PG_GETARG_DATUM(arg));
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

Datum MakeModelDatum(LossKind loss, int d, int classes, bool fit_intercept,
                     double feature_bound, double huber_delta, const double* w,
                     const char* json) {
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

// A call site's decoded model (fn_extra): a column of models read row by
// row is detoasted (often decompressed) and checked once per distinct
// stored value, not once per row, and the buffers are allocated once.
struct PredictCache {
  Size raw_size;      // the argument as stored: inline, compressed or a TOAST pointer
  char* raw;          // its bytes, to recognise the same value on the next row
  ModelDatum* model;  // detoasted and checked (GetModel)
  double* x;          // the features, d doubles
  double* scratch;    // d + 1 doubles
  double* proba;      // one per class
};

// Decodes `datum` (detoasted and checked, GetModel) into *c, in `mcxt`, with
// its buffers; frees what *c held before.
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
  c->proba = static_cast<double*>(MemoryContextAlloc(mcxt, sizeof(double) * Max(Classes(m), 2)));
  c->model = copy;
}

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

// The features argument as d doubles (NULL elements become NaN, which
// clipping turns into 0, as in training): the array's own data when it has
// no NULL, else c->x.
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
  deconstruct_array(array, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
                    &values, &nulls, &n);
  for (int i = 0; i < n; i++) c->x[i] = nulls[i] ? NAN : DatumGetFloat8(values[i]);
  return c->x;
}

// dp_predict_class and dp_predict_proba need a classifier.
void RequireClassifier(const ModelDatum* m, const char* function) {
  if (static_cast<LossKind>(m->loss) == LossKind::kHuber)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s needs a classification model, not a Huber regression model",
                           function),
                    errhint("Use dp_predict(model, features) for the predictions of a Huber model.")));
}

// Class probabilities of a classifier into c->proba (PostgreSQL phase:
// Predict and PredictSoftmax are noexcept functions of plain buffers).
// Binary logistic models have two classes, 0 (label false / <= 0) and 1:
// {1 - p, p}.
int ClassProbabilities(PredictCache* c, const double* x) {
  const ModelDatum* m = c->model;
  if (static_cast<LossKind>(m->loss) == LossKind::kSoftmax) {
    dperm::PredictSoftmax(m->coef, Classes(m), m->d, m->fit_intercept, m->feature_bound, x,
                          c->scratch, c->proba);
    return Classes(m);
  }
  double p = dperm::Predict(LossKind::kLogistic, m->coef, m->d, m->intercept,
                            m->feature_bound, x, c->scratch);
  c->proba[0] = 1 - p;
  c->proba[1] = p;
  return 2;
}

}  // namespace

// dp_predict(model, features): probability (logistic) or prediction (Huber),
// with the training clipping applied to the features.
DPERM_FUNCTION(dp_predict) {
  PredictCache* c = CachedModel(fcinfo);
  const ModelDatum* m = c->model;
  if (static_cast<LossKind>(m->loss) == LossKind::kSoftmax)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("dp_predict does not apply to softmax models"),
                    errhint("Use dp_predict_class(model, features) for the most likely class "
                            "or dp_predict_proba(model, features) for the class probabilities.")));
  const double* x = PredictFeatures(fcinfo, 1, c);
  PG_RETURN_FLOAT8(dperm::Predict(static_cast<LossKind>(m->loss), m->coef, m->d,
                                  m->intercept, m->feature_bound, x, c->scratch));
}

// dp_predict_class(model, features): the most likely class (0 .. K-1; binary
// logistic models: 1 when p > 0.5, else 0), with the training clipping.
DPERM_FUNCTION(dp_predict_class) {
  PredictCache* c = CachedModel(fcinfo);
  RequireClassifier(c->model, "dp_predict_class");
  int classes = ClassProbabilities(c, PredictFeatures(fcinfo, 1, c));
  if (static_cast<LossKind>(c->model->loss) == LossKind::kLogistic)
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

namespace {

// What a dperm.predict call site resolved its name to, and under which
// circumstances (fn_extra). The lookup (dperm.model, with its errors and
// the caller's row-level security) runs once per statement: again whenever
// the name or version differs, the role differs (a SECURITY DEFINER
// function in between), or the data the lookup saw may differ — another
// transaction, subtransaction or command, or a snapshot that sees other
// commits (a PL/pgSQL loop keeps its call sites from one statement to the
// next: each statement takes a new snapshot there).
struct NamedModelCache {
  bool valid;
  char* name;  // the name's bytes (name_len of them, no NUL)
  int name_len;
  bool version_null;
  int32 version;
  Oid user;
  LocalTransactionId lxid;
  SubTransactionId subxact;
  TransactionId xmin;
  TransactionId xmax;
  uint32 xcnt;
  CommandId curcid;
  uint64 completions;  // the snapshot's count of completed transactions
  PredictCache predict;
  const dperm::FeatureSpec* spec;  // the version's feature spec, or nullptr
};

// Fills the circumstances of the key (all but name and version).
void SetCircumstances(NamedModelCache* k, Snapshot snap) {
  k->user = GetUserId();
  k->lxid = MyProc->lxid;
  k->subxact = GetCurrentSubTransactionId();
  k->xmin = snap->xmin;
  k->xmax = snap->xmax;
  k->xcnt = snap->xcnt;
  k->curcid = snap->curcid;
  k->completions = snap->snapXactCompletionCount;
}

bool SameCircumstances(const NamedModelCache* c, const NamedModelCache* k) {
  return c->user == k->user && c->lxid == k->lxid && c->subxact == k->subxact &&
         c->xmin == k->xmin && c->xmax == k->xmax && c->xcnt == k->xcnt &&
         c->curcid == k->curcid && c->completions == k->completions;
}

// Resolves (name, version) as dperm.model does, as the caller: its errors
// (42704 unknown name or version, 55000 no trained version) and 55000 for
// a failed version; loads the model into c->predict. The statement spells
// its function with its schema and search_path is pinned, so nothing of
// the caller's path or temporary schema is looked up.
void ResolveNamedModel(NamedModelCache* c, MemoryContext mcxt, Datum name, bool version_null,
                       int32 version) {
  c->valid = false;
  Oid types[2] = {TEXTOID, INT4OID};
  Datum args[2] = {name, Int32GetDatum(version)};
  char nulls[3] = {' ', version_null ? 'n' : ' ', '\0'};
  SPI_connect();
  // (In parallel mode no parameter may be set; the statement's one name
  // has its schema.)
  bool parallel = IsInParallelMode();
  int level = parallel ? 0 : PinInternalSettings();
  if (SPI_execute_with_args("SELECT m.status, m.model, m.version, m.error, m.feature_spec::pg_catalog.text"
                            "  FROM dperm.model($1, $2) m",
                            2, types, args, nulls, true, 1) != SPI_OK_SELECT ||
      SPI_processed != 1)
    elog(ERROR, "dperm: could not look up model \"%s\"", TextDatumGetCString(name));
  if (!parallel) AtEOXact_GUC(true, level);
  HeapTuple row = SPI_tuptable->vals[0];
  TupleDesc desc = SPI_tuptable->tupdesc;
  char* status = SPI_getvalue(row, desc, 1);
  if (status == nullptr || strcmp(status, "trained") != 0) {
    char* error = SPI_getvalue(row, desc, 4);
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("version %s of model \"%s\" failed: %s",
                           SPI_getvalue(row, desc, 3), TextDatumGetCString(name),
                           error != nullptr ? error : "<NULL>")));
  }
  bool model_null;
  Datum model = SPI_getbinval(row, desc, 2, &model_null);
  if (model_null) elog(ERROR, "dperm: trained model \"%s\" has no model", TextDatumGetCString(name));
  LoadModel(&c->predict, mcxt, model);
  char* spec = SPI_getvalue(row, desc, 5);
  c->spec = spec != nullptr ? ParsedSpec(mcxt, spec) : nullptr;
  SPI_finish();
  c->valid = true;
}

// The call site's named model (arguments: 0 the name, `version_arg` the
// version), resolved once per statement.
NamedModelCache* NamedModel(FunctionCallInfo fcinfo, int version_arg) {
  if (PG_ARGISNULL(0)) {
    // dperm.model's error for a NULL name.
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("model \"<NULL>\" does not exist"),
                    errhint("dperm.train_model creates a model; dperm.models lists the models you may see.")));
  }
  NamedModelCache* c = static_cast<NamedModelCache*>(fcinfo->flinfo->fn_extra);
  MemoryContext mcxt = fcinfo->flinfo->fn_mcxt;
  if (c == nullptr) {
    c = static_cast<NamedModelCache*>(MemoryContextAllocZero(mcxt, sizeof(NamedModelCache)));
    fcinfo->flinfo->fn_extra = c;
  }
  text* name = PG_GETARG_TEXT_PP(0);
  int name_len = VARSIZE_ANY_EXHDR(name);
  bool version_null = PG_ARGISNULL(version_arg);
  int32 version = version_null ? 0 : PG_GETARG_INT32(version_arg);
  Snapshot snap = GetActiveSnapshot();
  NamedModelCache key;
  if (snap != nullptr) SetCircumstances(&key, snap);
  if (snap == nullptr || !c->valid || c->name_len != name_len ||
      memcmp(c->name, VARDATA_ANY(name), name_len) != 0 || c->version_null != version_null ||
      c->version != version || !SameCircumstances(c, &key)) {
    c->valid = false;
    if (c->name != nullptr) pfree(c->name);
    c->name = static_cast<char*>(MemoryContextAlloc(mcxt, Max(name_len, 1)));
    memcpy(c->name, VARDATA_ANY(name), name_len);
    c->name_len = name_len;
    c->version_null = version_null;
    c->version = version;
    ResolveNamedModel(c, mcxt, PointerGetDatum(name), version_null, version);
    // Valid under the circumstances the lookup ran in (without an active
    // snapshot, for this row only).
    if (snap != nullptr) {
      SetCircumstances(c, snap);
    } else {
      c->valid = false;
    }
  }
  return c;
}

// The raw row argument `arg` encoded by the named model's feature spec
// into c->predict.x (42804 for a model trained on a float8[] column).
const double* EncodedRow(FunctionCallInfo fcinfo, int arg, NamedModelCache* c) {
  if (c->spec == nullptr)
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("model \"%.*s\" was not trained through a feature spec", c->name_len, c->name),
                    errhint("Pass its float8[] features, as it was trained on them.")));
  if (c->spec->dimension() != c->predict.model->d)
    elog(ERROR, "dperm: the feature spec of model \"%.*s\" does not match its model", c->name_len, c->name);
  EncodeRecord(*c->spec, PG_GETARG_HEAPTUPLEHEADER(arg), c->predict.x);
  return c->predict.x;
}

}  // namespace

// dperm.predict(name, features, version): the prediction of a named model's
// version (the latest trained one when version is NULL): logistic: the
// probability; Huber: the prediction; softmax: the class. The name is
// resolved once per statement (NamedModelCache), the model decoded once.
// NULL features give NULL (after the lookup, whose errors come first).
DPERM_FUNCTION(dperm_predict) {
  NamedModelCache* c = NamedModel(fcinfo, 2);
  if (PG_ARGISNULL(1)) PG_RETURN_NULL();
  PredictCache* p = &c->predict;
  const ModelDatum* m = p->model;
  // features: a float8[], or a raw row through the model's feature spec.
  const double* x = get_fn_expr_argtype(fcinfo->flinfo, 1) == FLOAT8ARRAYOID
                        ? PredictFeatures(fcinfo, 1, p)
                        : EncodedRow(fcinfo, 1, c);
  LossKind loss = static_cast<LossKind>(m->loss);
  if (loss == LossKind::kSoftmax) {
    int classes = ClassProbabilities(p, x);
    PG_RETURN_FLOAT8(double(dperm::ArgMax(p->proba, classes)));
  }
  PG_RETURN_FLOAT8(dperm::Predict(loss, m->coef, m->d, m->intercept, m->feature_bound, x,
                                  p->scratch));
}

// dperm.encode(name, row, version) -> float8[]: the features the named
// model's feature spec makes of a raw row (what its training and
// dperm.predict use). NULL row: NULL.
DPERM_FUNCTION(dperm_encode) {
  NamedModelCache* c = NamedModel(fcinfo, 2);
  if (PG_ARGISNULL(1)) PG_RETURN_NULL();
  return Float8ArrayDatum(EncodedRow(fcinfo, 1, c), c->predict.model->d);
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
