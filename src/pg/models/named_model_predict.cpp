// dperm.predict and dperm.encode: a named model's version, resolved once per
// statement as dperm.model resolves it for the caller, predicts with its
// dp_model (model_predict.hpp) and encodes raw rows with its feature spec.
#include "dperm/model/feature_spec.hpp"
#include "dperm/model/model.hpp"

#include "base/arrays.hpp"
#include "types/feature_spec_pg.hpp"
#include "base/internal_sql.hpp"
#include "types/model_predict.hpp"

extern "C" {
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"
}

using dperm::LossKind;
using namespace dperm::pg;

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
         c->xmin == k->xmin && c->xmax == k->xmax && c->xcnt == k->xcnt && c->curcid == k->curcid &&
         c->completions == k->completions;
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
  if (SPI_execute_with_args(
          "SELECT m.status, m.model, m.version, m.error, m.feature_spec::pg_catalog.text"
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
                    errmsg("version %s of model \"%s\" failed: %s", SPI_getvalue(row, desc, 3),
                           TextDatumGetCString(name), error != nullptr ? error : "<NULL>")));
  }
  bool model_null;
  Datum model = SPI_getbinval(row, desc, 2, &model_null);
  if (model_null)
    elog(ERROR, "dperm: trained model \"%s\" has no model", TextDatumGetCString(name));
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
    ereport(
        ERROR,
        (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("model \"<NULL>\" does not exist"),
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
    ereport(ERROR,
            (errcode(ERRCODE_DATATYPE_MISMATCH),
             errmsg("model \"%.*s\" was not trained through a feature spec", c->name_len, c->name),
             errhint("Pass its float8[] features, as it was trained on them.")));
  if (c->spec->dimension() != c->predict.model->d)
    elog(ERROR, "dperm: the feature spec of model \"%.*s\" does not match its model", c->name_len,
         c->name);
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
  if (dperm::LossLink(loss) == dperm::Link::kSoftmax) {
    int classes = ClassProbabilities(p, x);
    PG_RETURN_FLOAT8(double(dperm::ArgMax(p->proba, classes)));
  }
  PG_RETURN_FLOAT8(
      dperm::Predict(loss, m->coef, m->d, m->intercept, m->feature_bound, x, p->scratch));
}

// dperm.encode(name, row, version) -> float8[]: the features the named
// model's feature spec makes of a raw row (what its training and
// dperm.predict use). NULL row: NULL.
DPERM_FUNCTION(dperm_encode) {
  NamedModelCache* c = NamedModel(fcinfo, 2);
  if (PG_ARGISNULL(1)) PG_RETURN_NULL();
  return Float8ArrayDatum(EncodedRow(fcinfo, 1, c), c->predict.model->d);
}
