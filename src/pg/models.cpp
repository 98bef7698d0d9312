// Named, versioned models and their scheduled retraining (DESIGN.md section
// 7, README "Retraining on a schedule").
//
// dperm.models holds one row per training run of a named model, trained or
// failed. Its rows are written only here, and only by the ledger writer (a
// background worker with a transaction of its own, ledger_writer.cpp): a
// version, like a charge, outlives a rollback of the caller's transaction,
// so a run that pg_cron reports as failed is also a failed version.
//
// Like dperm.train these are C functions, not SECURITY DEFINER ones: they
// know their caller, train as the caller (dperm.train for protected
// relations, dperm's aggregate on relations the caller reads), and switch
// identity only for dperm's own catalog, with search_path = pg_catalog,
// pg_temp and every name qualified (internal_sql.cpp). What a caller may see
// of dperm.models is decided by its row-level security policy, which the
// lookups here run under (as the caller).
#include "dperm/cron.hpp"
#include "dperm/options.hpp"

#include "dperm_pg.hpp"
#include "ledger_writer.hpp"

extern "C" {
#include "access/xact.h"
#include "access/xlog.h"
#include "commands/dbcommands.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/dsm.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
}

namespace dperm::pg {
namespace {

// SQLSTATE of a budget refusal (ledger.cpp raises the same for releases).
const int kBudgetExceeded = MAKE_SQLSTATE('D', 'P', '0', '0', '1');

// The specification of a model: what retrain trains again.
struct ModelSpec {
  const char* name;
  const char* owner;          // the role the model belongs to
  Oid relid;
  const char* relation_name;  // schema.name when recorded (for messages once dropped)
  const char* features;
  const char* label;
  const char* loss;
  const char* options;        // jsonb text
};

void CheckModelName(const char* name) {
  if (name[0] == '\0' || strlen(name) > 200)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("a model name must have 1 to 200 bytes")));
}

char* CopyValue(MemoryContext context, HeapTuple row, TupleDesc desc, int column) {
  char* value = SPI_getvalue(row, desc, column);
  return value == nullptr ? nullptr : MemoryContextStrdup(context, value);
}

// The latest version of model `name` that the caller may see (row-level
// security applies: the lookup runs as the caller); false if there is none.
// Copies into `context`. Needs an SPI connection.
bool LookupModel(const char* name, ModelSpec* spec, MemoryContext context) {
  Oid types[1] = {TEXTOID};
  Datum args[1] = {CStringGetTextDatum(name)};
  RunInternalSql(GetUserId(), false,
                 "SELECT m.owner::pg_catalog.text, m.relation::pg_catalog.oid, m.relation_name,"
                 "       m.features, m.label, m.loss, m.options::pg_catalog.text"
                 "  FROM dperm.models m WHERE m.name OPERATOR(pg_catalog.=) $1"
                 " ORDER BY m.version DESC LIMIT 1",
                 1, types, args, nullptr, SPI_OK_SELECT, true);
  if (SPI_processed == 0) return false;
  HeapTuple row = SPI_tuptable->vals[0];
  TupleDesc desc = SPI_tuptable->tupdesc;
  bool isnull;
  spec->name = MemoryContextStrdup(context, name);
  spec->owner = CopyValue(context, row, desc, 1);
  spec->relid = DatumGetObjectId(SPI_getbinval(row, desc, 2, &isnull));
  spec->relation_name = CopyValue(context, row, desc, 3);
  spec->features = CopyValue(context, row, desc, 4);
  spec->label = CopyValue(context, row, desc, 5);
  spec->loss = CopyValue(context, row, desc, 6);
  spec->options = CopyValue(context, row, desc, 7);
  return true;
}

// Whether the caller acts for `owner`: is it, has its privileges, or is a
// superuser.
bool ActsFor(const char* owner) {
  Oid role = get_role_oid(owner, true);
  if (!OidIsValid(role)) return superuser();
  return has_privs_of_role(GetUserId(), role);
}

// The latest version of `name` for an operation only its owner may run:
// 42704 if the caller sees no such model, 42501 if it is not the owner.
ModelSpec OwnedModel(const char* name, const char* operation) {
  MemoryContext context = CurrentMemoryContext;
  ModelSpec spec;
  SPI_connect();
  bool found = LookupModel(name, &spec, context);
  SPI_finish();
  if (!found)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("model \"%s\" does not exist", name),
                    errhint("dperm.train_model creates a model; dperm.models lists the models "
                            "you may see.")));
  if (!ActsFor(spec.owner))
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("must be owner of model \"%s\" to %s it", name, operation),
                    errdetail("Model \"%s\" belongs to role %s.", name, spec.owner)));
  return spec;
}

// The owner of model `name` whoever may see it, or nullptr. Needs SPI.
char* ModelOwner(const char* name, MemoryContext context) {
  Oid types[1] = {TEXTOID};
  Datum args[1] = {CStringGetTextDatum(name)};
  RunAsCatalogOwner("SELECT m.owner::pg_catalog.text FROM dperm.models m"
                    " WHERE m.name OPERATOR(pg_catalog.=) $1 LIMIT 1",
                    1, types, args, nullptr, SPI_OK_SELECT, true);
  return SPI_processed == 0 ? nullptr
                            : CopyValue(context, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
}

// The schema of an installed extension, or nullptr. Needs SPI.
char* ExtensionSchema(const char* extension, MemoryContext context) {
  Oid types[1] = {TEXTOID};
  Datum args[1] = {CStringGetTextDatum(extension)};
  RunAsCatalogOwner("SELECT n.nspname::pg_catalog.text FROM pg_catalog.pg_extension e"
                    "  JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace"
                    " WHERE e.extname OPERATOR(pg_catalog.=) $1",
                    1, types, args, nullptr, SPI_OK_SELECT, true);
  return SPI_processed == 0 ? nullptr
                            : CopyValue(context, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
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
  char* message = pstrdup(req->message);
  dsm_detach(seg);
  if (status != kCharged)
    ereport(ERROR, (errcode(status == kFailed && sqlstate != 0 ? sqlstate : ERRCODE_INTERNAL_ERROR),
                    errmsg("dperm could not record the model version: %s",
                           message[0] ? message : "the ledger writer exited"),
                    errhint("See the server log.")));
  return version;
}

// Records a run of `spec` as a new version: trained (model_text set) or
// failed (error set). Returns the version.
int64 RecordVersion(const ModelSpec& spec, const char* model_text, int64 ledger_id,
                    TimestampTz started, const ErrorData* error) {
  Oid types[16] = {TEXTOID, TEXTOID, OIDOID,  TEXTOID, TEXTOID,        TEXTOID,
                   TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT8OID,        TEXTOID,
                   TIMESTAMPTZOID, TEXTOID, TEXTOID, TEXTOID};
  Datum args[16] = {
      CStringGetTextDatum(spec.name),
      CStringGetTextDatum(spec.owner),
      ObjectIdGetDatum(spec.relid),
      CStringGetTextDatum(spec.relation_name),
      CStringGetTextDatum(spec.features),
      CStringGetTextDatum(spec.label),
      CStringGetTextDatum(spec.loss),
      CStringGetTextDatum(spec.options),
      CStringGetTextDatum(error == nullptr ? "trained" : "failed"),
      model_text != nullptr ? CStringGetTextDatum(model_text) : (Datum)0,
      Int64GetDatum(ledger_id),
      CStringGetTextDatum(GetUserNameFromId(GetUserId(), false)),
      TimestampTzGetDatum(started),
      error != nullptr && error->message ? CStringGetTextDatum(error->message) : (Datum)0,
      error != nullptr && error->detail ? CStringGetTextDatum(error->detail) : (Datum)0,
      error != nullptr ? CStringGetTextDatum(unpack_sql_state(error->sqlerrcode)) : (Datum)0};
  char nulls[16];
  for (int i = 0; i < 16; i++) nulls[i] = ' ';
  if (model_text == nullptr) nulls[9] = 'n';
  if (ledger_id == 0) nulls[10] = 'n';
  if (args[13] == (Datum)0) nulls[13] = 'n';
  if (args[14] == (Datum)0) nulls[14] = 'n';
  if (args[15] == (Datum)0) nulls[15] = 'n';
  MemoryContext context = CurrentMemoryContext;
  SPI_connect();
  RunAsCatalogOwner(
      "SELECT pg_catalog.jsonb_build_object("
      "  'name', $1, 'owner', $2, 'relation', $3, 'relation_name', $4, 'features', $5,"
      "  'label', $6, 'loss', $7, 'options', $8::pg_catalog.jsonb, 'status', $9, 'model', $10,"
      "  'ledger_id', $11, 'trained_by', $12, 'trained_at', $13, 'error', $14,"
      "  'error_detail', $15, 'sqlstate', $16)::pg_catalog.text",
      16, types, args, nulls, SPI_OK_SELECT, true);
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
                    errhint("The relation was dropped. Train the model on another relation with "
                            "dperm.train_model, or drop it with dperm.drop_model.")));
  MemoryContext upper = CurrentMemoryContext;
  SPI_connect();
  bool allowed = false;
  bool is_protected = OidIsValid(ProtectionOf(spec.relid, caller, &allowed));
  Oid types[5] = {OIDOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID};
  Datum args[5] = {ObjectIdGetDatum(spec.relid), CStringGetTextDatum(spec.features),
                   CStringGetTextDatum(spec.label), CStringGetTextDatum(spec.loss),
                   CStringGetTextDatum(spec.options)};
  if (is_protected) {
    // dperm.train checks the analyst, the columns and the options, and reads
    // the relation as its owner.
    RunInternalSql(caller, false,
                   "SELECT dperm.train($1::pg_catalog.regclass, $2, $3, $4, $5::pg_catalog.jsonb)",
                   5, types, args, nullptr, SPI_OK_SELECT, false);
  } else {
    // As the caller, on a relation it reads: the columns by name, checked
    // against the catalog and quoted; dperm's aggregate by schema with the
    // exact argument types.
    dperm::LossKind loss = ParseLossName(spec.loss);
    // Numeric arrays the caller can read are cast to float8[] as a direct
    // aggregate call would (an error of the cast is the caller's own data).
    Oid feature_type = ColumnType(spec.relid, spec.features);
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
    RunInternalSql(caller, false, sql, 1, jtypes, jargs, nullptr, SPI_OK_SELECT, false);
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

// Runs `spec` once and records the run as a new version, trained or failed.
// A failure is recorded (by the ledger writer, durably) before its error is
// raised again unchanged, so the caller, pg_cron's job_run_details and
// dperm.models all see it. Returns the version.
int64 RunVersion(const ModelSpec& spec) {
  MemoryContext context = CurrentMemoryContext;
  ResourceOwner owner = CurrentResourceOwner;
  TimestampTz started = GetCurrentTimestamp();
  g_last_charge_id = 0;
  char* volatile model_text = nullptr;
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
    // If even the record fails, say so and raise the run's own error.
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
    ReThrowError(error);
  }
  PG_END_TRY();
  return RecordVersion(spec, model_text, g_last_charge_id, started, nullptr);
}

// The schema of pg_cron's functions and tables (its script creates schema
// `cron`; the extension itself is recorded in another), or nullptr when
// pg_cron is not installed. Needs SPI.
char* CronSchema(MemoryContext context) {
  RunAsCatalogOwner("SELECT n.nspname::pg_catalog.text FROM pg_catalog.pg_extension e"
                    "  JOIN pg_catalog.pg_depend d"
                    "    ON d.refobjid OPERATOR(pg_catalog.=) e.oid"
                    "   AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass"
                    "   AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass"
                    "   AND d.deptype OPERATOR(pg_catalog.=) 'e'"
                    "  JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) d.objid"
                    "  JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace"
                    " WHERE e.extname OPERATOR(pg_catalog.=) 'pg_cron'"
                    "   AND p.proname OPERATOR(pg_catalog.=) 'schedule' LIMIT 1",
                    0, nullptr, nullptr, nullptr, SPI_OK_SELECT, true);
  return SPI_processed == 0 ? nullptr
                            : CopyValue(context, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
}

// pg_cron's schema, or the error that says how to install it.
char* RequireCron(MemoryContext context) {
  SPI_connect();
  char* cron = CronSchema(context);
  SPI_finish();
  if (cron == nullptr) {
    const char* db = get_database_name(MyDatabaseId);
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("scheduled retraining needs the pg_cron extension, which is not "
                           "installed in database \"%s\"", db),
                    errhint("Install the package postgresql-15-cron, add to postgresql.conf "
                            "shared_preload_libraries = 'pg_cron' and cron.database_name = '%s', "
                            "restart PostgreSQL, then run CREATE EXTENSION pg_cron in \"%s\".",
                            db, db)));
  }
  return cron;
}

// Removes model `name`'s pg_cron job `jobid`, if it still exists (as the
// caller: pg_cron lets a role unschedule its own jobs). Needs SPI.
void UnscheduleJob(const char* cron, int64 jobid) {
  Oid types[1] = {INT8OID};
  Datum args[1] = {Int64GetDatum(jobid)};
  RunInternalSql(GetUserId(), false,
                 psprintf("SELECT %s.unschedule(j.jobid) FROM %s.job j"
                          " WHERE j.jobid OPERATOR(pg_catalog.=) $1",
                          quote_identifier(cron), quote_identifier(cron)),
                 1, types, args, nullptr, SPI_OK_SELECT, false);
}

// The recorded pg_cron job of model `name`, or -1 if it is not scheduled.
// Needs SPI.
int64 ScheduledJob(const char* name, bool* found) {
  Oid types[1] = {TEXTOID};
  Datum args[1] = {CStringGetTextDatum(name)};
  RunAsCatalogOwner("SELECT s.jobid FROM dperm.model_schedules s"
                    " WHERE s.name OPERATOR(pg_catalog.=) $1",
                    1, types, args, nullptr, SPI_OK_SELECT, true);
  *found = SPI_processed > 0;
  if (!*found) return -1;
  bool isnull;
  Datum job = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
  return isnull ? -1 : DatumGetInt64(job);
}

void DeleteSchedule(const char* name) {
  Oid types[1] = {TEXTOID};
  Datum args[1] = {CStringGetTextDatum(name)};
  RunAsCatalogOwner("DELETE FROM dperm.model_schedules WHERE name OPERATOR(pg_catalog.=) $1",
                    1, types, args, nullptr, SPI_OK_DELETE, false);
}

}  // namespace

// The record requests of the ledger writer (ledger_writer.hpp): one
// dperm.models row, or an evaluation appended to one, as the bootstrap
// superuser in the writer's own transaction. Version numbers are assigned
// here, under a lock that serialises writers of dperm.models (no untrusted
// role may take it: it needs UPDATE on the table); a name taken by another
// role meanwhile is refused.
void ServeModelRecord(LedgerRequest* req) {
  Oid types[1] = {TEXTOID};
  Datum args[1] = {CStringGetTextDatum(req->query)};
  if (req->kind == kRecordEvaluation) {
    if (SPI_execute_with_args(
            "UPDATE dperm.models m SET evaluation = pg_catalog.jsonb_build_array(r.evaluation)"
            "   OPERATOR(pg_catalog.||) COALESCE(m.evaluation, '[]'::pg_catalog.jsonb)"
            "  FROM pg_catalog.jsonb_to_record($1::pg_catalog.jsonb)"
            "       AS r(name pg_catalog.text, version pg_catalog.int4, evaluation pg_catalog.jsonb)"
            " WHERE m.name OPERATOR(pg_catalog.=) r.name"
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
            "  trained_by, trained_at, error, error_detail, sqlstate)"
            " SELECT r.name,"
            "   COALESCE((SELECT pg_catalog.max(m.version) FROM dperm.models m"
            "              WHERE m.name OPERATOR(pg_catalog.=) r.name), 0) OPERATOR(pg_catalog.+) 1,"
            "   r.owner, r.relation, r.relation_name, r.features, r.label, r.loss, r.options,"
            "   r.status, r.model, r.ledger_id, l.epsilon, l.delta, l.rdp, l.relations,"
            "   r.trained_by, r.trained_at, r.error, r.error_detail, r.sqlstate"
            "  FROM pg_catalog.jsonb_populate_record(NULL::dperm.models, $1::pg_catalog.jsonb) r"
            "  LEFT JOIN dperm.ledger l ON l.id OPERATOR(pg_catalog.=) r.ledger_id"
            " WHERE NOT EXISTS (SELECT 1 FROM dperm.models o WHERE o.name OPERATOR(pg_catalog.=) r.name"
            "                     AND o.owner OPERATOR(pg_catalog.<>) r.owner)"
            " RETURNING version",
            1, types, args, nullptr, false, 0) != SPI_OK_INSERT_RETURNING)
      elog(ERROR, "could not write dperm.models");
    if (SPI_processed != 1) elog(ERROR, "the model name is taken by another role");
  }
  bool isnull;
  req->ledger_id = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.train_model(name, relation, features, label, loss, options) -> int:
// trains a new version of model `name` (created if new; a model belongs to
// the role that created it) and returns its number. A failed run is recorded
// as a failed version, then its error is raised.
DPERM_FUNCTION(dperm_train_model) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  Oid relid = PG_GETARG_OID(1);
  CheckModelName(name);
  char* caller = GetUserNameFromId(GetUserId(), false);
  // The arguments are checked before anything runs: errors here leave no
  // version (failures of the run itself do).
  dperm::LossKind loss = ParseLossName(text_to_cstring(PG_GETARG_TEXT_PP(4)));
  char* relation_name = get_rel_name(relid);
  if (relation_name == nullptr)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
                    errmsg("relation with OID %u does not exist", relid)));
  ColumnType(relid, text_to_cstring(PG_GETARG_TEXT_PP(2)));
  ColumnType(relid, text_to_cstring(PG_GETARG_TEXT_PP(3)));
  ParsedOptions parsed = ParseOptionsJsonb(PG_GETARG_JSONB_P(5));
  RunCore([&] { dperm::CheckOptionsForLoss(parsed.options, loss); });
  MemoryContext context = CurrentMemoryContext;
  SPI_connect();
  char* owner = ModelOwner(name, context);
  SPI_finish();
  if (owner != nullptr && !ActsFor(owner))
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("model \"%s\" belongs to another role", name),
                    errhint("Choose another name.")));
  ModelSpec spec;
  spec.name = name;
  spec.owner = owner != nullptr ? owner : caller;
  spec.relid = relid;
  spec.relation_name = psprintf("%s.%s", quote_identifier(get_namespace_name(get_rel_namespace(relid))),
                                quote_identifier(relation_name));
  spec.features = text_to_cstring(PG_GETARG_TEXT_PP(2));
  spec.label = text_to_cstring(PG_GETARG_TEXT_PP(3));
  spec.loss = text_to_cstring(PG_GETARG_TEXT_PP(4));
  spec.options = JsonbText(PG_GETARG_JSONB_P(5));
  PG_RETURN_INT32(static_cast<int32>(RunVersion(spec)));
}

// dperm.retrain(name) -> int: trains the next version of a model from the
// specification of its latest version; the owner only (pg_cron runs it as
// the role that scheduled it).
DPERM_FUNCTION(dperm_retrain) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  ModelSpec spec = OwnedModel(name, "retrain");
  PG_RETURN_INT32(static_cast<int32>(RunVersion(spec)));
}

// dperm.drop_model(name): drops every version of a model and its schedule
// (the pg_cron job too); the ledger keeps every charge.
DPERM_FUNCTION(dperm_drop_model) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  OwnedModel(name, "drop");
  MemoryContext context = CurrentMemoryContext;
  SPI_connect();
  bool scheduled;
  int64 job = ScheduledJob(name, &scheduled);
  char* cron = scheduled ? CronSchema(context) : nullptr;
  if (cron != nullptr && job >= 0) UnscheduleJob(cron, job);
  DeleteSchedule(name);
  Oid types[1] = {TEXTOID};
  Datum args[1] = {CStringGetTextDatum(name)};
  RunAsCatalogOwner("DELETE FROM dperm.models WHERE name OPERATOR(pg_catalog.=) $1", 1, types,
                    args, nullptr, SPI_OK_DELETE, false);
  SPI_finish();
  PG_RETURN_VOID();
}

// dperm.schedule_retraining(name, cron_schedule, min_runs DEFAULT 1) ->
// bigint: a pg_cron job, owned by the caller, that runs dperm.retrain(name)
// on the schedule; refused (DP001) when fewer than min_runs retrainings fit
// in the budget (dperm.retraining_forecast). Returns the job id.
DPERM_FUNCTION(dperm_schedule_retraining) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  char* schedule = text_to_cstring(PG_GETARG_TEXT_PP(1));
  int32 min_runs = PG_GETARG_INT32(2);
  OwnedModel(name, "schedule");
  MemoryContext context = CurrentMemoryContext;
  char* cron = RequireCron(context);
  if (min_runs < 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("min_runs must be >= 0, not %d", min_runs)));
  SPI_connect();
  // The forecast, as the caller.
  Oid types[3] = {TEXTOID, TEXTOID, TEXTOID};
  Datum args[3] = {CStringGetTextDatum(name), (Datum)0, (Datum)0};
  RunInternalSql(GetUserId(), false,
                 "SELECT f.runs, f.limiting_relation::pg_catalog.text, f.epsilon_per_run,"
                 "       f.delta_per_run FROM dperm.retraining_forecast($1) f",
                 1, types, args, nullptr, SPI_OK_SELECT, true);
  bool runs_null, isnull;
  HeapTuple row = SPI_tuptable->vals[0];
  TupleDesc desc = SPI_tuptable->tupdesc;
  int64 runs = DatumGetInt64(SPI_getbinval(row, desc, 1, &runs_null));
  char* limiting = CopyValue(context, row, desc, 2);
  double eps = DatumGetFloat8(SPI_getbinval(row, desc, 3, &isnull));
  double delta = DatumGetFloat8(SPI_getbinval(row, desc, 4, &isnull));
  if (!runs_null && runs < min_runs)
    ereport(ERROR, (errcode(kBudgetExceeded),
                    errmsg("model \"%s\": " INT64_FORMAT " more retrainings fit in the privacy "
                           "budget of relation %s, fewer than min_runs = %d",
                           name, runs, limiting ? limiting : "?", min_runs),
                    errdetail("dperm.retraining_forecast: each run costs epsilon = %g and "
                              "delta = %g (the latest trained version's charge), composed with "
                              "the ledger under the relation's accounting.", eps, delta),
                    errhint("Ask the owner of %s to raise its budget with dperm.set_budget, "
                            "retrain with a smaller epsilon, or pass a smaller min_runs.",
                            limiting ? limiting : "the relation")));
  // A model has at most one job: a new schedule replaces the old.
  bool scheduled;
  int64 old_job = ScheduledJob(name, &scheduled);
  if (scheduled && old_job >= 0) UnscheduleJob(cron, old_job);
  char* command = psprintf("SELECT dperm.retrain(%s)", quote_literal_cstr(name));
  args[0] = CStringGetTextDatum(psprintf("dperm retrain %s", name));
  args[1] = CStringGetTextDatum(schedule);
  args[2] = CStringGetTextDatum(command);
  RunInternalSql(GetUserId(), false,
                 psprintf("SELECT %s.schedule($1, $2, $3)", quote_identifier(cron)), 3, types,
                 args, nullptr, SPI_OK_SELECT, false);
  int64 job = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  Oid stypes[5] = {TEXTOID, TEXTOID, INT8OID, INT4OID, TEXTOID};
  Datum sargs[5] = {CStringGetTextDatum(name), CStringGetTextDatum(schedule), Int64GetDatum(job),
                    Int32GetDatum(min_runs),
                    CStringGetTextDatum(GetUserNameFromId(GetUserId(), false))};
  RunAsCatalogOwner(
      "INSERT INTO dperm.model_schedules (name, cron_schedule, jobid, min_runs, scheduled_by,"
      "  scheduled_at)"
      " VALUES ($1, $2, $3, $4, $5::pg_catalog.name, pg_catalog.now())"
      " ON CONFLICT (name) DO UPDATE SET cron_schedule = excluded.cron_schedule,"
      "   jobid = excluded.jobid, min_runs = excluded.min_runs,"
      "   scheduled_by = excluded.scheduled_by, scheduled_at = excluded.scheduled_at",
      5, stypes, sargs, nullptr, SPI_OK_INSERT, false);
  SPI_finish();
  PG_RETURN_INT64(job);
}

// dperm.unschedule_retraining(name): removes the model's pg_cron job and
// its schedule.
DPERM_FUNCTION(dperm_unschedule_retraining) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  OwnedModel(name, "unschedule");
  MemoryContext context = CurrentMemoryContext;
  SPI_connect();
  bool scheduled;
  int64 job = ScheduledJob(name, &scheduled);
  if (!scheduled)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                    errmsg("model \"%s\" has no retraining schedule", name)));
  char* cron = CronSchema(context);
  if (cron != nullptr && job >= 0) UnscheduleJob(cron, job);
  DeleteSchedule(name);
  SPI_finish();
  PG_RETURN_VOID();
}

// dperm.cron_next_run(cron_schedule, after, k DEFAULT 1) -> timestamptz:
// the k-th run of a pg_cron schedule after `after` (UTC, as pg_cron 1.4
// runs jobs); NULL when the schedule has no forecast (cron.hpp: @reboot,
// "N seconds", an impossible date) or the run falls after the year 9999.
DPERM_FUNCTION(dperm_cron_next_run) {
  char* spec = text_to_cstring(PG_GETARG_TEXT_PP(0));
  TimestampTz after = PG_GETARG_TIMESTAMPTZ(1);
  int64 k = PG_GETARG_INT64(2);
  if (k < 1)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("k must be >= 1")));
  if (TIMESTAMP_NOT_FINITE(after)) PG_RETURN_NULL();
  // PostgreSQL counts microseconds from 2000-01-01, 10957 days after 1970-01-01.
  const int64 epoch_minutes = int64(10957) * 1440;
  int64 after_minute = after / USECS_PER_MINUTE - (after % USECS_PER_MINUTE < 0 ? 1 : 0) + epoch_minutes;
  int64 run = -1;
  dperm::pg::CoreError ignored;
  bool ok = CaptureCore([&] {
    dperm::CronSchedule schedule = dperm::ParseCron(spec);
    run = dperm::NthCronMinute(schedule, after_minute, k);
  }, &ignored);
  if (!ok || run < 0) PG_RETURN_NULL();
  PG_RETURN_TIMESTAMPTZ((run - epoch_minutes) * USECS_PER_MINUTE);
}
