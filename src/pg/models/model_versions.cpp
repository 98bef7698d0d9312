// A named model's versions (docs/design.md section 7): one training run,
// recorded as a version (model_versions.hpp).
//
// dperm.models holds one row per charged training run of a named model:
// trained, or failed after its charge (a run refused before the charge, on
// public inputs, leaves none). Its rows are written only by the ledger
// writer (model_records.cpp): a version, like a charge, outlives a rollback
// of the caller's transaction, so a charged run that pg_cron reports as
// failed is also a failed version.
//
// A run trains as the caller through dperm.train's steps, called in C
// (TrainResolved; a query model: dperm.train_query's, TrainQueryResolved),
// with the run's ChargeOutcome in the request: ChargeRelease tells it the
// charge (or that it is in doubt), so a failed run is recorded with its
// ledger row; no release state crosses an SPI call. It switches identity
// only for dperm's own catalog, with every name qualified and search_path
// pinned to "pg_catalog, pg_temp" (pg_temp last; internal_sql.cpp).
#include "dperm/options/options.hpp"

#include "ledger/charge.hpp"
#include "base/internal_sql.hpp"
#include "models/model_records.hpp"
#include "models/model_registry.hpp"
#include "models/model_query_run.hpp"
#include "models/model_versions.hpp"
#include "types/options_pg.hpp"
#include "guard/relation_access.hpp"
#include "guard/relations.hpp"
#include "release/release_guard.hpp"
#include "release/train_input.hpp"
#include "release/train_steps.hpp"
#include "types/model_type.hpp"

extern "C" {
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/resowner.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
}

namespace dperm::pg {
namespace {

// Records a run of `spec` as a new version: trained (model_text set) or
// failed (error set). Returns the version.
int64 RecordVersion(const ModelSpec& spec, const char* model_text, int64 ledger_id,
                    TimestampTz started, const ErrorData* error) {
  // Roles by OID: regrole reads digits as an OID.
  Oid types[19] = {TEXTOID, OIDOID,  OIDOID,  TEXTOID, TEXTOID, TEXTOID,        TEXTOID,
                   TEXTOID, TEXTOID, TEXTOID, INT8OID, OIDOID,  TIMESTAMPTZOID, TEXTOID,
                   TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID};
  Datum args[19] = {
      CStringGetTextDatum(spec.name), ObjectIdGetDatum(spec.owner), ObjectIdGetDatum(spec.relid),
      CStringGetTextDatum(spec.relation_name), CStringGetTextDatum(spec.features),
      CStringGetTextDatum(spec.label), CStringGetTextDatum(spec.loss),
      CStringGetTextDatum(spec.options),
      CStringGetTextDatum(error == nullptr ? "trained" : "failed"),
      model_text != nullptr ? CStringGetTextDatum(model_text) : (Datum)0, Int64GetDatum(ledger_id),
      ObjectIdGetDatum(GetUserId()), TimestampTzGetDatum(started),
      // An error's text may quote what the caller sent: capped like the
      // ledger's query text, so the writer's work does not grow with it.
      error != nullptr && error->message
          ? CStringGetTextDatum(CappedText(error->message, kMaxLedgerQueryBytes))
          : (Datum)0,
      error != nullptr && error->detail
          ? CStringGetTextDatum(CappedText(error->detail, kMaxLedgerQueryBytes))
          : (Datum)0,
      error != nullptr ? CStringGetTextDatum(unpack_sql_state(error->sqlerrcode)) : (Datum)0,
      spec.feature_spec != nullptr ? CStringGetTextDatum(spec.feature_spec) : (Datum)0,
      spec.query_text != nullptr ? CStringGetTextDatum(spec.query_text) : (Datum)0,
      spec.query != nullptr ? CStringGetTextDatum(spec.query) : (Datum)0};
  char nulls[19];
  for (int i = 0; i < 19; i++) nulls[i] = ' ';
  if (spec.feature_spec == nullptr) nulls[16] = 'n';
  if (spec.query_text == nullptr) nulls[17] = 'n';
  if (spec.query == nullptr) nulls[18] = 'n';
  if (model_text == nullptr) nulls[9] = 'n';
  if (ledger_id == 0) nulls[10] = 'n';
  if (args[13] == (Datum)0) nulls[13] = 'n';
  if (args[14] == (Datum)0) nulls[14] = 'n';
  if (args[15] == (Datum)0) nulls[15] = 'n';
  MemoryContext context = CurrentMemoryContext;
  SPI_connect();
  RunAsCatalogOwner(
      "SELECT pg_catalog.jsonb_build_object("
      "  'name', $1, 'owner', $2::pg_catalog.text, 'relation', $3, 'relation_name', $4,"
      "  'features', $5, 'label', $6, 'loss', $7, 'options', $8::pg_catalog.jsonb, 'status', $9,"
      "  'model', $10, 'ledger_id', $11, 'trained_by', $12::pg_catalog.text, 'trained_at', $13,"
      "  'error', $14,"
      "  'error_detail', $15, 'sqlstate', $16, 'feature_spec', $17::pg_catalog.jsonb,"
      "  'query', $18, 'query_canonical', $19)::pg_catalog.text",
      19, types, args, nulls, SPI_OK_SELECT, true);
  char* json = CopyValue(context, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
  SPI_finish();
  return SubmitModelRecord(kRecordModelVersion, json);
}

// One release of TrainOnce, run by RunInternalCall as the caller.
struct TrainCall {
  TrainInput* in;
  ChargeOutcome* outcome;
  Datum model;
  bool isnull;
};

void CallTrainResolved(void* arg) {
  TrainCall* call = static_cast<TrainCall*>(arg);
  call->model = TrainResolved(call->in, call->outcome, &call->isnull);
}

// One training run of `spec` as the caller, through dperm.train's steps
// (TrainResolved), its charge told to `outcome`: a protected relation read
// as its owner, any other with the caller's rights; raw columns through the
// spec; a relation the caller reads with features of any numeric array type
// cast to float8[] and read in memory, as dperm's aggregate would. Returns
// the model's text (in `context`). Raises on any failure.
char* TrainOnce(const ModelSpec& spec, MemoryContext context, ChargeOutcome* outcome) {
  Oid caller = GetUserId();
  // Locks the relation against DDL until the end of the (sub)transaction,
  // then checks it still exists.
  LockRelationOid(spec.relid, AccessShareLock);
  if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(spec.relid)))
    ereport(ERROR,
            (errcode(ERRCODE_UNDEFINED_TABLE),
             errmsg("relation %s of model \"%s\" does not exist", spec.relation_name, spec.name),
             errhint("The relation was dropped. Drop the model with dperm.drop_model, then "
                     "train it on another relation with dperm.train_model.")));
  if (spec.query != nullptr) return TrainQueryOnce(spec, context, outcome);
  SPI_connect();
  bool allowed = false;
  bool is_protected = OidIsValid(ProtectionOf(spec.relid, caller, &allowed));
  Jsonb* options = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(spec.options)));
  Jsonb* feature_spec =
      spec.feature_spec != nullptr
          ? DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(spec.feature_spec)))
          : nullptr;
  // dperm.train's mode: auto (it streams rows that do not fit), but in
  // memory for numeric arrays other than float8[] on a relation the caller
  // reads, which dperm's aggregate trained on (refused over the buffer).
  Oid feature_type = feature_spec != nullptr ? InvalidOid : ColumnType(spec.relid, spec.features);
  bool as_aggregate = feature_spec == nullptr && !is_protected && feature_type != FLOAT8ARRAYOID;
  // numeric[] is read as float8[] only where no budget makes the release
  // strict: numeric to float8 fails on one value beyond 1e308, and an error
  // on one row reveals it (the function rule, query_functions.hpp), as the
  // aggregate refuses it there (release_guard.cpp).
  if (as_aggregate && feature_type == NUMERICARRAYOID) {
    int n_relations = 0;
    Oid* relations = TrainRelations(spec.relid, InvalidOid, &n_relations);
    if (ChargedStrictly(relations, n_relations))
      ereport(ERROR,
              (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
               errmsg("model \"%s\" cannot read numeric[] column \"%s\" of budgeted relation %s "
                      "as float8[]",
                      spec.name, spec.features, spec.relation_name),
               errdetail("numeric to float8 fails on a value beyond 1e308, and an error on one "
                         "row would reveal that row. Nothing was charged."),
               errhint("Store the values as float8 (ALTER TABLE ... ALTER COLUMN ... TYPE "
                       "float8[]).")));
  }
  TrainInput in =
      ResolveTrainInput(spec.relid, spec.features, feature_spec, spec.label, spec.loss, options,
                        as_aggregate ? TrainMode::kInMemory : TrainMode::kAuto);
  in.numeric_arrays = as_aggregate;
  // As a statement of dperm's would run it (RunInternalSql's identity,
  // settings and error rule), without the statement.
  TrainCall call = {&in, outcome, (Datum)0, true};
  RunInternalCall(caller, CallTrainResolved, &call);
  char* text =
      call.isnull ? nullptr : MemoryContextStrdup(context, ModelJsonText(CheckedModel(call.model)));
  SPI_finish();
  if (text == nullptr)
    ereport(ERROR, (errcode(ERRCODE_DATA_EXCEPTION),
                    errmsg("relation %s has no rows to train model \"%s\" on", spec.relation_name,
                           spec.name),
                    errdetail("Nothing was released or charged.")));
  return text;
}

// SQLSTATE of a budget refusal (charge.cpp raises it).
const int kBudgetExceeded = MAKE_SQLSTATE('D', 'P', '0', '0', '1');

}  // namespace

// Runs `spec` once and records the run as a new version: trained, or
// failed once charged. A run that fails before its charge (its arguments,
// the catalog, a budget refusal: public inputs, nothing spent) leaves no
// version; one that fails after it, or while the charge's answer was
// awaited, is recorded (by the ledger writer, durably) before its error is
// raised again unchanged, so the caller, pg_cron's job_run_details and
// dperm.models all see it. With `budget_refusal`, a budget refusal (DP001)
// is returned there (and -1) instead of raised. Returns the version.
int64 RunVersion(const ModelSpec& spec, ErrorData** budget_refusal) {
  MemoryContext context = CurrentMemoryContext;
  ResourceOwner owner = CurrentResourceOwner;
  TimestampTz started = GetCurrentTimestamp();
  // What became of the run's charge: filled by ChargeRelease, read here
  // after a failure (this frame outlives the error's unwinding).
  // Not volatile: only the callees write it, through its address, so it
  // is in memory when an error longjmps here.
  ChargeOutcome outcome = {0, false};
  char* volatile model_text = nullptr;
  ErrorData* volatile refused = nullptr;
  // A subtransaction, as PL/pgSQL's exception blocks use: the failed run's
  // effects roll back, and the transaction goes on to record it.
  BeginInternalSubTransaction(nullptr);
  MemoryContextSwitchTo(context);
  PG_TRY();
  {
    model_text = TrainOnce(spec, context, &outcome);
    ReleaseCurrentSubTransaction();
    MemoryContextSwitchTo(context);
    CurrentResourceOwner = owner;
  }
  PG_CATCH();
  {
    MemoryContextSwitchTo(context);
    ErrorData* error = CopyErrorData();
    FlushErrorState();
    RollbackAndReleaseCurrentSubTransaction();
    MemoryContextSwitchTo(context);
    CurrentResourceOwner = owner;
    // A failed run whose charge was taken (an error after the rows were
    // read) keeps its ledger row.
    int64 charged = outcome.ledger_id;
    bool in_doubt = outcome.in_doubt;
    // If even the record fails, say so and raise the run's own error.
    if (charged != 0 || in_doubt) {
      PG_TRY();
      { RecordVersion(spec, nullptr, charged, started, error); }
      PG_CATCH();
      {
        MemoryContextSwitchTo(context);
        ErrorData* record_error = CopyErrorData();
        FlushErrorState();
        ereport(WARNING, (errmsg("the failed run of model \"%s\" was not recorded: %s", spec.name,
                                 record_error->message)));
      }
      PG_END_TRY();
    }
    if (budget_refusal == nullptr || charged != 0 || in_doubt ||
        error->sqlerrcode != kBudgetExceeded)
      ReThrowError(error);
    refused = error;
  }
  PG_END_TRY();
  if (refused != nullptr) {
    *budget_refusal = refused;
    return -1;
  }
  return RecordVersion(spec, model_text, outcome.ledger_id, started, nullptr);
}

}  // namespace dperm::pg
