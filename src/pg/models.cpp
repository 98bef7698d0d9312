// Named, versioned models (docs/design.md section 7): training runs and
// the versions that record them.
//
// dperm.models holds one row per charged training run of a named model:
// trained, or failed after its charge (a run refused before the charge, on
// public inputs, leaves none). Its rows are written only here, and only by
// the ledger writer (a background worker with a transaction of its own,
// ledger_writer.cpp): a version, like a charge, outlives a rollback of the
// caller's transaction, so a charged run that pg_cron reports as failed is
// also a failed version.
//
// Like dperm.train these are C functions, not SECURITY DEFINER ones: they
// know their caller, train as the caller (dperm.train for protected
// relations, dperm's aggregate on relations the caller reads, both through
// the release pipeline, release.cpp), and switch identity only for dperm's
// own catalog, with search_path pinned to "pg_catalog, pg_temp" (pg_temp
// last) and every name qualified (internal_sql.cpp).
#include "dperm/model/feature_spec.hpp"
#include "dperm/options/options.hpp"

#include "charge.hpp"
#include "internal_sql.hpp"
#include "model_cron.hpp"
#include "model_registry.hpp"
#include "feature_spec_pg.hpp"
#include "models.hpp"
#include "options_pg.hpp"
#include "train_pg.hpp"
#include "relation_access.hpp"

extern "C" {
#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/dsm.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
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
  Oid types[17] = {TEXTOID, OIDOID,  OIDOID,  TEXTOID, TEXTOID,        TEXTOID,
                   TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT8OID,        OIDOID,
                   TIMESTAMPTZOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID};
  Datum args[17] = {
      CStringGetTextDatum(spec.name),
      ObjectIdGetDatum(spec.owner),
      ObjectIdGetDatum(spec.relid),
      CStringGetTextDatum(spec.relation_name),
      CStringGetTextDatum(spec.features),
      CStringGetTextDatum(spec.label),
      CStringGetTextDatum(spec.loss),
      CStringGetTextDatum(spec.options),
      CStringGetTextDatum(error == nullptr ? "trained" : "failed"),
      model_text != nullptr ? CStringGetTextDatum(model_text) : (Datum)0,
      Int64GetDatum(ledger_id),
      ObjectIdGetDatum(GetUserId()),
      TimestampTzGetDatum(started),
      // An error's text may quote what the caller sent: capped like the
      // ledger's query text, so the writer's work does not grow with it.
      error != nullptr && error->message ? CStringGetTextDatum(CappedText(error->message, kMaxLedgerQueryBytes)) : (Datum)0,
      error != nullptr && error->detail ? CStringGetTextDatum(CappedText(error->detail, kMaxLedgerQueryBytes)) : (Datum)0,
      error != nullptr ? CStringGetTextDatum(unpack_sql_state(error->sqlerrcode)) : (Datum)0,
      spec.feature_spec != nullptr ? CStringGetTextDatum(spec.feature_spec) : (Datum)0};
  char nulls[17];
  for (int i = 0; i < 17; i++) nulls[i] = ' ';
  if (spec.feature_spec == nullptr) nulls[16] = 'n';
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
      "  'error_detail', $15, 'sqlstate', $16, 'feature_spec', $17::pg_catalog.jsonb)::pg_catalog.text",
      17, types, args, nulls, SPI_OK_SELECT, true);
  char* json = CopyValue(context, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
  SPI_finish();
  return SubmitModelRecord(kRecordModelVersion, json);
}

// One training run of `spec` as the caller: dperm.train for a protected
// relation, dperm's aggregate on the relation otherwise. Returns the
// model's text (in `context`). Raises on any failure.
char* TrainOnce(const ModelSpec& spec, MemoryContext context) {
  Oid caller = GetUserId();
  // Locks the relation against DDL until the end of the (sub)transaction,
  // then checks it still exists.
  LockRelationOid(spec.relid, AccessShareLock);
  if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(spec.relid)))
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
                    errmsg("relation %s of model \"%s\" does not exist", spec.relation_name,
                           spec.name),
                    errhint("The relation was dropped. Drop the model with dperm.drop_model, then "
                            "train it on another relation with dperm.train_model.")));
  MemoryContext upper = CurrentMemoryContext;
  SPI_connect();
  bool allowed = false;
  bool is_protected = OidIsValid(ProtectionOf(spec.relid, caller, &allowed));
  Oid types[5] = {OIDOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID};
  Datum args[5] = {ObjectIdGetDatum(spec.relid), CStringGetTextDatum(spec.features),
                   CStringGetTextDatum(spec.label), CStringGetTextDatum(spec.loss),
                   CStringGetTextDatum(spec.options)};
  if (spec.feature_spec != nullptr) {
    // Raw columns through the spec: dperm.train reads them (as the caller,
    // or a protected relation as its owner) and encodes them in the scan.
    args[1] = CStringGetTextDatum(spec.feature_spec);
    RunInternalSql(caller,
                   "SELECT dperm.train($1::pg_catalog.regclass, $2::pg_catalog.jsonb, $3, $4,"
                   " $5::pg_catalog.jsonb)",
                   5, types, args, nullptr, SPI_OK_SELECT, false);
  }
  Oid feature_type = spec.feature_spec != nullptr ? InvalidOid : ColumnType(spec.relid, spec.features);
  if (spec.feature_spec != nullptr) {
    // trained above
  } else if (is_protected || feature_type == FLOAT8ARRAYOID) {
    // dperm.train checks the analyst, the columns and the options, charges
    // before it reads, and reads a protected relation as its owner.
    RunInternalSql(caller,
                   "SELECT dperm.train($1::pg_catalog.regclass, $2, $3, $4, $5::pg_catalog.jsonb)",
                   5, types, args, nullptr, SPI_OK_SELECT, false);
  } else {
    // As the caller, on a relation it reads: the columns by name, checked
    // against the catalog and quoted; dperm's aggregate by schema with the
    // exact argument types.
    dperm::LossKind loss = ParseLossName(spec.loss);
    // Numeric arrays the caller can read are cast to float8[] as a direct
    // aggregate call would (an error of the cast is the caller's own data).
    if (feature_type != FLOAT8ARRAYOID && feature_type != FLOAT4ARRAYOID &&
        feature_type != NUMERICARRAYOID && feature_type != INT2ARRAYOID &&
        feature_type != INT4ARRAYOID && feature_type != INT8ARRAYOID)
      ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                      errmsg("column \"%s\" must be a numeric array (float8[], real[], numeric[], "
                             "integer[]), not %s", spec.features, format_type_be(feature_type))));
    TrainTarget target = TargetFor(loss, ColumnType(spec.relid, spec.label), spec.label, spec.loss);
    char* schema = ExtensionSchema("dperm", upper);
    if (schema == nullptr) elog(ERROR, "dperm is not installed in this database");
    char* sql = psprintf(
        "SELECT %s.%s(%s::pg_catalog.float8[], %s::%s, $1::pg_catalog.jsonb) FROM %s.%s",
        quote_identifier(schema), target.aggregate, quote_identifier(spec.features),
        quote_identifier(spec.label), target.label_cast,
        quote_identifier(get_namespace_name(get_rel_namespace(spec.relid))),
        quote_identifier(get_rel_name(spec.relid)));
    Oid jtypes[1] = {TEXTOID};
    Datum jargs[1] = {CStringGetTextDatum(spec.options)};
    RunInternalSql(caller, sql, 1, jtypes, jargs, nullptr, SPI_OK_SELECT, false);
  }
  bool isnull = true;
  Datum model = (Datum)0;
  if (SPI_processed == 1) model = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
  char* text = nullptr;
  if (!isnull) {
    Oid output;
    bool varlena;
    getTypeOutputInfo(SPI_gettypeid(SPI_tuptable->tupdesc, 1), &output, &varlena);
    text = MemoryContextStrdup(context, OidOutputFunctionCall(output, model));
  }
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

// Refuses (42710) a new version of the caller's model `spec.name` whose
// relation, columns or loss differ from its latest version's: versions of
// one name stay comparable. Options may change (a smaller epsilon).
void CheckSameSpecification(const ModelSpec& spec) {
  Oid types[2] = {TEXTOID, OIDOID};
  Datum args[2] = {CStringGetTextDatum(spec.name), ObjectIdGetDatum(spec.owner)};
  MemoryContext context = CurrentMemoryContext;
  SPI_connect();
  RunAsCatalogOwner("SELECT m.relation::pg_catalog.oid, m.relation_name, m.features, m.label, m.loss"
                    "  FROM dperm.models m WHERE m.name OPERATOR(pg_catalog.=) $1"
                    "   AND m.owner OPERATOR(pg_catalog.=) $2"
                    " ORDER BY m.version DESC LIMIT 1",
                    2, types, args, nullptr, SPI_OK_SELECT, true);
  bool exists = SPI_processed > 0;
  Oid relid = InvalidOid;
  char *relation_name = nullptr, *features = nullptr, *label = nullptr, *loss = nullptr;
  if (exists) {
    HeapTuple row = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    bool isnull;
    relid = DatumGetObjectId(SPI_getbinval(row, desc, 1, &isnull));
    relation_name = CopyValue(context, row, desc, 2);
    features = CopyValue(context, row, desc, 3);
    label = CopyValue(context, row, desc, 4);
    loss = CopyValue(context, row, desc, 5);
  }
  SPI_finish();
  if (!exists) return;
  if (relid == spec.relid && strcmp(features, spec.features) == 0 &&
      strcmp(label, spec.label) == 0 && strcmp(loss, spec.loss) == 0)
    return;
  ereport(ERROR, (errcode(ERRCODE_DUPLICATE_OBJECT),
                  errmsg("model \"%s\" already exists with another specification", spec.name),
                  errdetail("Its versions train loss %s on relation %s, features \"%s\", label "
                            "\"%s\"; this call asks for loss %s on relation %s, features \"%s\", "
                            "label \"%s\".",
                            loss, relation_name, features, label, spec.loss, spec.relation_name,
                            spec.features, spec.label),
                  errhint("Versions of one name share their relation, columns and loss, so that "
                          "they stay comparable. Drop the model first with dperm.drop_model (the "
                          "ledger keeps its charges), or choose another name.")));
}

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
  g_last_charge_id = 0;
  g_charge_in_doubt = false;
  char* volatile model_text = nullptr;
  ErrorData* volatile refused = nullptr;
  // A subtransaction, as PL/pgSQL's exception blocks use: the failed run's
  // effects roll back, and the transaction goes on to record it.
  BeginInternalSubTransaction(nullptr);
  MemoryContextSwitchTo(context);
  PG_TRY();
  {
    model_text = TrainOnce(spec, context);
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
    int64 charged = g_last_charge_id;
    bool in_doubt = g_charge_in_doubt;
    g_charge_in_doubt = false;
    // If even the record fails, say so and raise the run's own error.
    if (charged != 0 || in_doubt) {
      PG_TRY();
      {
        RecordVersion(spec, nullptr, charged, started, error);
      }
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
  return RecordVersion(spec, model_text, g_last_charge_id, started, nullptr);
}


// Hands a dperm.models row (as JSON) to the ledger writer, which writes it
// in a transaction of its own; returns the version. Raises if the writer
// could not write it.
int64 SubmitModelRecord(LedgerRequestKind kind, const char* json) {
  if (RecoveryInProgress())
    ereport(ERROR, (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
                    errmsg("dperm cannot record a model version during recovery")));
  Size size = offsetof(LedgerRequest, query) + strlen(json) + 1;
  dsm_segment* seg = dsm_create(size, 0);
  LedgerRequest* req = static_cast<LedgerRequest*>(dsm_segment_address(seg));
  memset(req, 0, offsetof(LedgerRequest, query));
  req->magic = kLedgerRequestMagic;
  req->kind = kind;
  req->backend_procno = MyProc->pgprocno;
  req->database = MyDatabaseId;
  strlcpy(req->role, GetUserNameFromId(GetUserId(), false), sizeof req->role);
  req->released_at = GetCurrentTimestamp();
  strcpy(req->query, json);
  // An error or cancel while waiting detaches the segment with the
  // transaction's resources.
  SubmitLedgerRequest(seg, req);
  int status = req->status;
  int sqlstate = req->sqlstate;
  int64 version = req->ledger_id;
  Oid busy = req->busy_relation;
  char* message = pstrdup(req->message);
  dsm_detach(seg);
  if (status == kBusy) RaiseBusy(busy);
  if (status != kCharged)
    ereport(ERROR, (errcode(status == kFailed && sqlstate != 0 ? sqlstate : ERRCODE_INTERNAL_ERROR),
                    errmsg("dperm could not record the model version: %s",
                           message[0] ? message : "the ledger writer exited"),
                    errhint("See the server log.")));
  return version;
}

// The record requests of the ledger writer (ledger_writer.hpp): one
// dperm.models row, or an evaluation appended to one, as the bootstrap
// superuser in the writer's own transaction. Version numbers are assigned
// here, per (owner, name), under a lock that serialises writers of
// dperm.models (no untrusted role may take it: it needs UPDATE on the
// table). Roles arrive as OIDs.
void ServeModelRecord(LedgerRequest* req) {
  Oid types[1] = {TEXTOID};
  Datum args[1] = {CStringGetTextDatum(req->query)};
  if (req->kind == kRecordEvaluation) {
    if (SPI_execute_with_args(
            "UPDATE dperm.models m SET evaluation = pg_catalog.jsonb_build_array(r.evaluation)"
            "   OPERATOR(pg_catalog.||) COALESCE(m.evaluation, '[]'::pg_catalog.jsonb)"
            "  FROM pg_catalog.jsonb_to_record($1::pg_catalog.jsonb)"
            "       AS r(name pg_catalog.text, owner pg_catalog.oid, version pg_catalog.int4,"
            "            evaluation pg_catalog.jsonb)"
            " WHERE m.name OPERATOR(pg_catalog.=) r.name AND m.owner OPERATOR(pg_catalog.=) r.owner"
            "   AND m.version OPERATOR(pg_catalog.=) r.version RETURNING m.version",
            1, types, args, nullptr, false, 0) != SPI_OK_UPDATE_RETURNING ||
        SPI_processed != 1)
      elog(ERROR, "the model version to store the evaluation with is gone");
  } else {
    if (SPI_execute("LOCK TABLE dperm.models IN SHARE UPDATE EXCLUSIVE MODE", false, 0) !=
        SPI_OK_UTILITY)
      elog(ERROR, "could not lock dperm.models");
    if (SPI_execute_with_args(
            "INSERT INTO dperm.models (name, version, owner, relation, relation_name, features,"
            "  label, loss, options, status, model, ledger_id, epsilon, delta, rdp, relations,"
            "  trained_by, trained_at, error, error_detail, sqlstate, feature_spec)"
            " SELECT r.name,"
            "   COALESCE((SELECT pg_catalog.max(m.version) FROM dperm.models m"
            "              WHERE m.name OPERATOR(pg_catalog.=) r.name"
            "                AND m.owner OPERATOR(pg_catalog.=) r.owner), 0) OPERATOR(pg_catalog.+) 1,"
            "   r.owner, r.relation, r.relation_name, r.features, r.label, r.loss, r.options,"
            "   r.status, r.model, r.ledger_id, l.epsilon, l.delta, l.rdp,"
            // and the relations of the row that charged the same release at
            // the row (ledger.charged_with), which the forecast counts too
            "   l.relations OPERATOR(pg_catalog.||) ARRAY(SELECT cr FROM dperm.ledger c,"
            "     pg_catalog.unnest(c.relations) cr WHERE c.charged_with OPERATOR(pg_catalog.=) l.id),"
            "   r.trained_by, r.trained_at, r.error, r.error_detail, r.sqlstate, r.feature_spec"
            "  FROM pg_catalog.jsonb_populate_record(NULL::dperm.models, $1::pg_catalog.jsonb) r"
            "  LEFT JOIN dperm.ledger l ON l.id OPERATOR(pg_catalog.=) r.ledger_id"
            " RETURNING version",
            1, types, args, nullptr, false, 0) != SPI_OK_INSERT_RETURNING ||
        SPI_processed != 1)
      elog(ERROR, "could not write dperm.models");
  }
  bool isnull;
  req->ledger_id = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.train_model(name, relation, features, label, loss, options) -> int:
// trains a new version of the caller's own model `name` (created if new,
// whatever models of that name other roles have) and returns its number. A
// failed run is recorded as a failed version, then its error is raised.
DPERM_FUNCTION(dperm_train_model) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  Oid relid = PG_GETARG_OID(1);
  RequireModelCatalog();
  CheckModelName(name);
  // The arguments are checked before anything runs: errors here leave no
  // version (failures of the run itself do).
  dperm::LossKind loss = ParseLossName(text_to_cstring(PG_GETARG_TEXT_PP(4)));
  char* relation_name = get_rel_name(relid);
  if (relation_name == nullptr)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
                    errmsg("relation with OID %u does not exist", relid)));
  // features: a float8[] column, or a feature spec (jsonb) of raw columns,
  // checked against the relation here.
  const bool has_spec = get_fn_expr_argtype(fcinfo->flinfo, 2) == JSONBOID;
  char* spec_text = nullptr;
  char* label = text_to_cstring(PG_GETARG_TEXT_PP(3));
  ColumnType(relid, label);
  // The options as the run will see them: with a spec, its shape and label.
  Datum options = PG_GETARG_DATUM(5);
  if (has_spec) {
    SpecFeatures features = SpecFeaturesFor(relid, PG_GETARG_JSONB_P(2));
    if (features.spec->has_label) CheckSpecLabel(*features.spec, label, loss);
    options = WithSpecOptions(DatumGetJsonbP(options), *features.spec, loss);
    spec_text = JsonbText(PG_GETARG_JSONB_P(2));
  } else {
    ColumnType(relid, text_to_cstring(PG_GETARG_TEXT_PP(2)));
  }
  ParsedOptions parsed = ParseOptionsJsonb(DatumGetJsonbP(options));
  RunCore([&] { dperm::CheckOptionsForLoss(parsed.options, loss); });
  ModelSpec spec;
  spec.name = name;
  spec.owner = GetUserId();
  spec.relid = relid;
  spec.relation_name = psprintf("%s.%s", quote_identifier(get_namespace_name(get_rel_namespace(relid))),
                                quote_identifier(relation_name));
  spec.features = has_spec ? spec_text : text_to_cstring(PG_GETARG_TEXT_PP(2));
  spec.feature_spec = spec_text;
  spec.label = label;
  spec.loss = text_to_cstring(PG_GETARG_TEXT_PP(4));
  spec.options = JsonbText(PG_GETARG_JSONB_P(5));
  CheckSameSpecification(spec);
  PG_RETURN_INT32(static_cast<int32>(RunVersion(spec, nullptr)));
}

// dperm.retrain(name [, owner regrole]) -> int: trains the next version of
// a model (the one `name` resolves to, or `owner`'s) from the specification
// of its latest version; for its owner only, checked by OID (a scheduled
// job runs dperm.retrain_on_schedule(name, owner), model_cron.cpp).
DPERM_FUNCTION(dperm_retrain) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  Oid owner = PG_NARGS() > 1 ? PG_GETARG_OID(1) : InvalidOid;
  if (PG_NARGS() > 1 && !OidIsValid(owner))
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("model \"%s\" does not exist", name)));
  ModelSpec spec = OwnedModel(name, "retrain", owner);
  PG_RETURN_INT32(static_cast<int32>(RunVersion(spec, nullptr)));
}

// dperm.drop_model(name): drops every version of a model and its schedule
// (the pg_cron job too); the ledger keeps every charge.
DPERM_FUNCTION(dperm_drop_model) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  Oid owner = OwnedModel(name, "drop").owner;
  MemoryContext context = CurrentMemoryContext;
  SPI_connect();
  bool scheduled;
  int64 job = ScheduledJob(name, owner, &scheduled);
  char* cron = scheduled ? CronSchema(context) : nullptr;
  if (cron != nullptr && job >= 0) UnscheduleJob(cron, job);
  DeleteSchedule(name, owner);
  Oid types[2] = {TEXTOID, OIDOID};
  Datum args[2] = {CStringGetTextDatum(name), ObjectIdGetDatum(owner)};
  RunAsCatalogOwner("DELETE FROM dperm.models WHERE name OPERATOR(pg_catalog.=) $1"
                    " AND owner OPERATOR(pg_catalog.=) $2",
                    2, types, args, nullptr, SPI_OK_DELETE, false);
  SPI_finish();
  PG_RETURN_VOID();
}
