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
// identity only for dperm's own catalog, with search_path pinned to
// "pg_catalog, pg_temp" (pg_temp last) and every name qualified
// (internal_sql.cpp). What a caller may see
// of dperm.models is decided by its row-level security policy, which the
// lookups here run under (as the caller).
//
// Model names belong to their owner, a role stored by OID (regrole): the key
// is (owner, name, version). A name resolves, for the caller, to its own
// model of that name, else to the one model of that name it may see, else
// (several roles' models visible) to an error naming them (ResolveOwner).
// Creating a model never depends on names other roles use, and a role
// created later under a dropped role's name does not inherit its models.
#include "dperm/model/cron.hpp"
#include "dperm/model/evaluate.hpp"
#include "dperm/options/options.hpp"

#include "charge.hpp"
#include "internal_sql.hpp"
#include "module.hpp"
#include "options_pg.hpp"
#include "protect.hpp"
#include "relations.hpp"
#include "ledger_writer.hpp"

#include <array>
#include <cmath>
#include <vector>

extern "C" {
#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "commands/dbcommands.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
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

// SQLSTATE of a budget refusal (charge.cpp raises the same for releases).
const int kBudgetExceeded = MAKE_SQLSTATE('D', 'P', '0', '0', '1');

// The specification of a model: what retrain trains again.
struct ModelSpec {
  const char* name;
  Oid owner;                  // the role the model belongs to
  Oid relid;
  const char* relation_name;  // schema.name when recorded (for messages once dropped)
  const char* features;
  const char* label;
  const char* loss;
  const char* options;        // jsonb text
};

// Refuses named models on a catalog from before 0.7.0 (owners stored by
// name), which this library would misread until ALTER EXTENSION UPDATE.
void RequireModelCatalog() {
  Oid nsp = get_namespace_oid("dperm", true);
  Oid rel = OidIsValid(nsp) ? get_relname_relid("models", nsp) : InvalidOid;
  AttrNumber att = OidIsValid(rel) ? get_attnum(rel, "owner") : InvalidAttrNumber;
  if (att != InvalidAttrNumber && get_atttype(rel, att) == REGROLEOID) return;
  ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                  errmsg("dperm's model catalog is older than its library"),
                  errhint("Run ALTER EXTENSION dperm UPDATE in this database.")));
}

void CheckModelName(const char* name) {
  if (name[0] == '\0' || strlen(name) > 200)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("a model name must have 1 to 200 bytes")));
}

char* CopyValue(MemoryContext context, HeapTuple row, TupleDesc desc, int column) {
  char* value = SPI_getvalue(row, desc, column);
  return value == nullptr ? nullptr : MemoryContextStrdup(context, value);
}

// The owner of the model that `name` resolves to for the caller: its own
// model of that name, else the one role's among the models of that name it
// may see (row-level security applies: the lookup runs as the caller);
// InvalidOid if it sees none; 42725 if several roles' models are visible.
// Needs an SPI connection.
Oid ResolveOwner(const char* name) {
  Oid caller = GetUserId();
  Oid types[1] = {TEXTOID};
  Datum args[1] = {CStringGetTextDatum(name)};
  RunInternalSql(caller,
                 "SELECT DISTINCT m.owner::pg_catalog.oid, m.owner::pg_catalog.text"
                 "  FROM dperm.models m WHERE m.name OPERATOR(pg_catalog.=) $1 ORDER BY 2",
                 1, types, args, nullptr, SPI_OK_SELECT, true);
  uint64 n = SPI_processed;
  bool isnull;
  StringInfoData owners;
  initStringInfo(&owners);
  for (uint64 i = 0; i < n; i++) {
    Oid owner = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
    if (owner == caller) return owner;
    appendStringInfo(&owners, "%s%s", i > 0 ? ", " : "",
                     SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2));
  }
  if (n == 0) return InvalidOid;
  if (n == 1)
    return DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  ereport(ERROR, (errcode(ERRCODE_AMBIGUOUS_FUNCTION),
                  errmsg("model name \"%s\" is ambiguous", name),
                  errdetail("You have no model of that name, and you may see models of that name "
                            "owned by: %s.", owners.data),
                  errhint("Read the version you want from dperm.models (by owner, name and "
                          "version) and use its model column with dp_predict, or train a model "
                          "of your own under that name.")));
  pg_unreachable();
}

// The latest version of `owner`'s model `name`, if the caller may see it
// (row-level security applies: the lookup runs as the caller); false if not.
// Copies into `context`. Needs an SPI connection.
bool LookupModelOf(const char* name, Oid owner, ModelSpec* spec, MemoryContext context) {
  Oid types[2] = {TEXTOID, OIDOID};
  Datum args[2] = {CStringGetTextDatum(name), ObjectIdGetDatum(owner)};
  RunInternalSql(GetUserId(),
                 "SELECT m.relation::pg_catalog.oid, m.relation_name,"
                 "       m.features, m.label, m.loss, m.options::pg_catalog.text"
                 "  FROM dperm.models m WHERE m.name OPERATOR(pg_catalog.=) $1"
                 "   AND m.owner OPERATOR(pg_catalog.=) $2"
                 " ORDER BY m.version DESC LIMIT 1",
                 2, types, args, nullptr, SPI_OK_SELECT, true);
  if (SPI_processed == 0) return false;
  HeapTuple row = SPI_tuptable->vals[0];
  TupleDesc desc = SPI_tuptable->tupdesc;
  bool isnull;
  spec->name = MemoryContextStrdup(context, name);
  spec->owner = owner;
  spec->relid = DatumGetObjectId(SPI_getbinval(row, desc, 1, &isnull));
  spec->relation_name = CopyValue(context, row, desc, 2);
  spec->features = CopyValue(context, row, desc, 3);
  spec->label = CopyValue(context, row, desc, 4);
  spec->loss = CopyValue(context, row, desc, 5);
  spec->options = CopyValue(context, row, desc, 6);
  return true;
}

// The name of role `role`, or its OID in digits once it is dropped.
const char* RoleName(Oid role) {
  const char* name = GetUserNameFromId(role, true);
  return name != nullptr ? name : psprintf("%u", role);
}

// Whether the caller acts for `owner` (by OID): is it, has its privileges,
// or is a superuser. Nobody but a superuser acts for a dropped role, nor
// does a new role that took its name.
bool ActsFor(Oid owner) {
  if (!OidIsValid(owner) || !SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(owner)))
    return superuser();
  return has_privs_of_role(GetUserId(), owner);
}

// The latest version of the model `name` resolves to (or of `owner`'s
// model `name` when `owner` is valid) for an operation only its owner may
// run: 42704 if the caller sees no such model, 42501 if it does not act for
// the owner.
ModelSpec OwnedModel(const char* name, const char* operation, Oid owner = InvalidOid) {
  RequireModelCatalog();
  MemoryContext context = CurrentMemoryContext;
  ModelSpec spec;
  SPI_connect();
  if (!OidIsValid(owner)) owner = ResolveOwner(name);
  bool found = OidIsValid(owner) && LookupModelOf(name, owner, &spec, context);
  SPI_finish();
  if (!found)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("model \"%s\" does not exist", name),
                    errhint("dperm.train_model creates a model; dperm.models lists the models "
                            "you may see.")));
  const char* owner_name = GetUserNameFromId(spec.owner, true);
  if (!ActsFor(spec.owner))
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("must be owner of model \"%s\" to %s it", name, operation),
                    owner_name != nullptr
                        ? errdetail("Model \"%s\" belongs to role %s.", name, owner_name)
                        : errdetail("Model \"%s\" belongs to a role that was dropped; a superuser "
                                    "can delete it from dperm.models.", name)));
  return spec;
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

// Records a run of `spec` as a new version: trained (model_text set) or
// failed (error set). Returns the version.
int64 RecordVersion(const ModelSpec& spec, const char* model_text, int64 ledger_id,
                    TimestampTz started, const ErrorData* error) {
  // Roles by OID: regrole reads digits as an OID.
  Oid types[16] = {TEXTOID, OIDOID,  OIDOID,  TEXTOID, TEXTOID,        TEXTOID,
                   TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT8OID,        OIDOID,
                   TIMESTAMPTZOID, TEXTOID, TEXTOID, TEXTOID};
  Datum args[16] = {
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
      "  'name', $1, 'owner', $2::pg_catalog.text, 'relation', $3, 'relation_name', $4,"
      "  'features', $5, 'label', $6, 'loss', $7, 'options', $8::pg_catalog.jsonb, 'status', $9,"
      "  'model', $10, 'ledger_id', $11, 'trained_by', $12::pg_catalog.text, 'trained_at', $13,"
      "  'error', $14,"
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
  Oid feature_type = ColumnType(spec.relid, spec.features);
  if (is_protected || feature_type == FLOAT8ARRAYOID) {
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
  // Installed but not loaded (removed from shared_preload_libraries), or
  // the jobs would run in another database: nothing would ever run here.
  const char* cron_db = GetConfigOption("cron.database_name", true, false);
  const char* db = get_database_name(MyDatabaseId);
  if (cron_db == nullptr || strcmp(cron_db, db) != 0)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg(cron_db == nullptr
                               ? "pg_cron is installed in database \"%s\" but not loaded"
                               : "pg_cron runs its jobs in database \"%s\", not in \"%s\"",
                           cron_db == nullptr ? db : cron_db, db),
                    errhint("Set shared_preload_libraries = 'pg_cron' and cron.database_name = "
                            "'%s' in postgresql.conf and restart PostgreSQL.", db)));
  return cron;
}

// Removes model `name`'s pg_cron job `jobid`, if it still exists (as the
// caller: pg_cron lets a role unschedule its own jobs). Needs SPI.
void UnscheduleJob(const char* cron, int64 jobid) {
  Oid types[1] = {INT8OID};
  Datum args[1] = {Int64GetDatum(jobid)};
  RunInternalSql(GetUserId(),
                 psprintf("SELECT %s.unschedule(j.jobid) FROM %s.job j"
                          " WHERE j.jobid OPERATOR(pg_catalog.=) $1",
                          quote_identifier(cron), quote_identifier(cron)),
                 1, types, args, nullptr, SPI_OK_SELECT, false);
}

// The recorded pg_cron job of `owner`'s model `name`, or -1 if it is not
// scheduled. Needs SPI.
int64 ScheduledJob(const char* name, Oid owner, bool* found) {
  Oid types[2] = {TEXTOID, OIDOID};
  Datum args[2] = {CStringGetTextDatum(name), ObjectIdGetDatum(owner)};
  RunAsCatalogOwner("SELECT s.jobid FROM dperm.model_schedules s"
                    " WHERE s.name OPERATOR(pg_catalog.=) $1 AND s.owner OPERATOR(pg_catalog.=) $2",
                    2, types, args, nullptr, SPI_OK_SELECT, true);
  *found = SPI_processed > 0;
  if (!*found) return -1;
  bool isnull;
  Datum job = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
  return isnull ? -1 : DatumGetInt64(job);
}

void DeleteSchedule(const char* name, Oid owner) {
  Oid types[2] = {TEXTOID, OIDOID};
  Datum args[2] = {CStringGetTextDatum(name), ObjectIdGetDatum(owner)};
  RunAsCatalogOwner("DELETE FROM dperm.model_schedules WHERE name OPERATOR(pg_catalog.=) $1"
                    " AND owner OPERATOR(pg_catalog.=) $2",
                    2, types, args, nullptr, SPI_OK_DELETE, false);
}

}  // namespace

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
            "  trained_by, trained_at, error, error_detail, sqlstate)"
            " SELECT r.name,"
            "   COALESCE((SELECT pg_catalog.max(m.version) FROM dperm.models m"
            "              WHERE m.name OPERATOR(pg_catalog.=) r.name"
            "                AND m.owner OPERATOR(pg_catalog.=) r.owner), 0) OPERATOR(pg_catalog.+) 1,"
            "   r.owner, r.relation, r.relation_name, r.features, r.label, r.loss, r.options,"
            "   r.status, r.model, r.ledger_id, l.epsilon, l.delta, l.rdp, l.relations,"
            "   r.trained_by, r.trained_at, r.error, r.error_detail, r.sqlstate"
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
  ColumnType(relid, text_to_cstring(PG_GETARG_TEXT_PP(2)));
  ColumnType(relid, text_to_cstring(PG_GETARG_TEXT_PP(3)));
  ParsedOptions parsed = ParseOptionsJsonb(PG_GETARG_JSONB_P(5));
  RunCore([&] { dperm::CheckOptionsForLoss(parsed.options, loss); });
  ModelSpec spec;
  spec.name = name;
  spec.owner = GetUserId();
  spec.relid = relid;
  spec.relation_name = psprintf("%s.%s", quote_identifier(get_namespace_name(get_rel_namespace(relid))),
                                quote_identifier(relation_name));
  spec.features = text_to_cstring(PG_GETARG_TEXT_PP(2));
  spec.label = text_to_cstring(PG_GETARG_TEXT_PP(3));
  spec.loss = text_to_cstring(PG_GETARG_TEXT_PP(4));
  spec.options = JsonbText(PG_GETARG_JSONB_P(5));
  PG_RETURN_INT32(static_cast<int32>(RunVersion(spec)));
}

// dperm.model_owner(name) -> regrole: the owner of the model `name`
// resolves to for the caller (ResolveOwner), NULL when it sees none; the
// lookup of dperm.model, dperm.predict and dperm.retraining_forecast.
DPERM_FUNCTION(dperm_model_owner) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  RequireModelCatalog();
  SPI_connect();
  Oid owner = ResolveOwner(name);
  SPI_finish();
  if (!OidIsValid(owner)) PG_RETURN_NULL();
  PG_RETURN_OID(owner);
}

// dperm.retrain(name [, owner regrole]) -> int: trains the next version of
// a model (the one `name` resolves to, or `owner`'s) from the specification
// of its latest version; for its owner only, checked by OID (pg_cron runs
// dperm.retrain(name, owner) as the role that scheduled it).
DPERM_FUNCTION(dperm_retrain) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  Oid owner = PG_NARGS() > 1 ? PG_GETARG_OID(1) : InvalidOid;
  if (PG_NARGS() > 1 && !OidIsValid(owner))
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("model \"%s\" does not exist", name)));
  ModelSpec spec = OwnedModel(name, "retrain", owner);
  PG_RETURN_INT32(static_cast<int32>(RunVersion(spec)));
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

// dperm.schedule_retraining(name, cron_schedule, min_runs DEFAULT 1) ->
// bigint: a pg_cron job, owned by the caller, that runs
// dperm.retrain(name, owner) on the schedule; refused (DP001) when fewer than min_runs retrainings fit
// in the budget (dperm.retraining_forecast). Returns the job id.
DPERM_FUNCTION(dperm_schedule_retraining) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  char* schedule = text_to_cstring(PG_GETARG_TEXT_PP(1));
  int32 min_runs = PG_GETARG_INT32(2);
  Oid owner = OwnedModel(name, "schedule").owner;
  MemoryContext context = CurrentMemoryContext;
  char* cron = RequireCron(context);
  if (min_runs < 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("min_runs must be >= 0, not %d", min_runs)));
  SPI_connect();
  // The forecast, as the caller.
  Oid types[3] = {TEXTOID, TEXTOID, TEXTOID};
  Datum args[3] = {CStringGetTextDatum(name), (Datum)0, (Datum)0};
  RunInternalSql(GetUserId(),
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
  int64 old_job = ScheduledJob(name, owner, &scheduled);
  if (scheduled && old_job >= 0) UnscheduleJob(cron, old_job);
  // An unnamed job, known by its id: pg_cron's job names are per-role
  // `name`s (63 bytes), which long model names could make collide. The
  // command names the owner (by name, as pg_cron names the job's role, so a
  // dump and restore keeps it working); retrain checks the model's owner by
  // OID, so a role created later under a dropped owner's name finds none.
  char* command = psprintf("SELECT dperm.retrain(%s, %s::pg_catalog.regrole)",
                           quote_literal_cstr(name),
                           quote_literal_cstr(quote_identifier(RoleName(owner))));
  args[0] = CStringGetTextDatum(schedule);
  args[1] = CStringGetTextDatum(command);
  RunInternalSql(GetUserId(),
                 psprintf("SELECT %s.schedule($1, $2)", quote_identifier(cron)), 2, types,
                 args, nullptr, SPI_OK_SELECT, false);
  int64 job = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  Oid stypes[6] = {TEXTOID, TEXTOID, INT8OID, INT4OID, OIDOID, OIDOID};
  Datum sargs[6] = {CStringGetTextDatum(name), CStringGetTextDatum(schedule), Int64GetDatum(job),
                    Int32GetDatum(min_runs), ObjectIdGetDatum(GetUserId()),
                    ObjectIdGetDatum(owner)};
  RunAsCatalogOwner(
      "INSERT INTO dperm.model_schedules (owner, name, cron_schedule, jobid, min_runs,"
      "  scheduled_by, scheduled_at)"
      " VALUES ($6::pg_catalog.regrole, $1, $2, $3, $4, $5::pg_catalog.regrole, pg_catalog.now())"
      " ON CONFLICT (owner, name) DO UPDATE SET cron_schedule = excluded.cron_schedule,"
      "   jobid = excluded.jobid, min_runs = excluded.min_runs,"
      "   scheduled_by = excluded.scheduled_by, scheduled_at = excluded.scheduled_at",
      6, stypes, sargs, nullptr, SPI_OK_INSERT, false);
  SPI_finish();
  PG_RETURN_INT64(job);
}

// dperm.unschedule_retraining(name): removes the model's pg_cron job and
// its schedule.
DPERM_FUNCTION(dperm_unschedule_retraining) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  Oid owner = OwnedModel(name, "unschedule").owner;
  MemoryContext context = CurrentMemoryContext;
  SPI_connect();
  bool scheduled;
  int64 job = ScheduledJob(name, owner, &scheduled);
  if (!scheduled)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                    errmsg("model \"%s\" has no retraining schedule", name)));
  char* cron = CronSchema(context);
  if (cron != nullptr && job >= 0) UnscheduleJob(cron, job);
  DeleteSchedule(name, owner);
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
  if (k < 1 || k > dperm::kMaxCronRuns)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("k must be between 1 and %lld", static_cast<long long>(dperm::kMaxCronRuns)),
                    errhint("dperm forecasts at most %lld runs ahead (the cap of dperm.runs_that_fit).",
                            static_cast<long long>(dperm::kMaxCronRuns))));
  if (TIMESTAMP_NOT_FINITE(after)) PG_RETURN_NULL();
  // PostgreSQL counts microseconds from 2000-01-01, 10957 days after 1970-01-01.
  const int64 epoch_minutes = int64(10957) * 1440;
  int64 after_minute = after / USECS_PER_MINUTE - (after % USECS_PER_MINUTE < 0 ? 1 : 0) + epoch_minutes;
  int64 run = -1;
  dperm::pg::CoreError failure;
  bool ok = CaptureCore([&] {
    dperm::CronSchedule schedule = dperm::ParseCron(spec);
    run = dperm::NthCronMinute(schedule, after_minute, k);
  }, &failure);
  // A cancel or timeout is raised; a schedule it cannot forecast is NULL.
  if (!ok && failure.sqlstate == ERRCODE_QUERY_CANCELED) ReportCoreError(failure);
  if (!ok || run < 0) PG_RETURN_NULL();
  PG_RETURN_TIMESTAMPTZ((run - epoch_minutes) * USECS_PER_MINUTE);
}

// ---------------------------------------------------------------- evaluate

namespace dperm::pg {
namespace {

// Options of dperm.evaluate, read with their kinds checked (errors name
// the key); they are public and cost nothing when wrong.
struct EvaluateOptions {
  double epsilon = 0;
  int32 version = 0;          // 0: the latest trained version
  double loss_bound = 10;     // B of the clipped per-row log-loss (classifiers)
  double residual_bound = 1;  // B of the clipped per-row residual (Huber)
  bool has_seed = false;
  int64 seed = 0;
};

EvaluateOptions ParseEvaluateOptions(Jsonb* options) {
  EvaluateOptions o;
  Oid types[1] = {JSONBOID};
  Datum args[1] = {JsonbPGetDatum(options)};
  SPI_connect();
  RunAsCatalogOwner(
      "SELECT (SELECT pg_catalog.string_agg(k, ', ' ORDER BY k)"
      "          FROM pg_catalog.jsonb_object_keys($1) k"
      "         WHERE k OPERATOR(pg_catalog.<>) ALL"
      "               ('{epsilon,version,loss_bound,residual_bound,seed}'::pg_catalog.text[])),"
      "       (SELECT pg_catalog.string_agg(k, ', ' ORDER BY k)"
      "          FROM pg_catalog.jsonb_each($1) e(k, v)"
      "         WHERE pg_catalog.jsonb_typeof(v) OPERATOR(pg_catalog.<>) 'number'),"
      "       ($1 OPERATOR(pg_catalog.->>) 'epsilon')::pg_catalog.float8,"
      "       ($1 OPERATOR(pg_catalog.->>) 'version')::pg_catalog.numeric,"
      "       ($1 OPERATOR(pg_catalog.->>) 'loss_bound')::pg_catalog.float8,"
      "       ($1 OPERATOR(pg_catalog.->>) 'residual_bound')::pg_catalog.float8,"
      "       ($1 OPERATOR(pg_catalog.->>) 'seed')::pg_catalog.numeric",
      1, types, args, nullptr, SPI_OK_SELECT, true);
  HeapTuple row = SPI_tuptable->vals[0];
  TupleDesc desc = SPI_tuptable->tupdesc;
  char* unknown = SPI_getvalue(row, desc, 1);
  char* not_numbers = SPI_getvalue(row, desc, 2);
  if (unknown != nullptr)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("unknown option of dperm.evaluate: %s", unknown),
                    errhint("Valid options: epsilon, version, loss_bound, residual_bound, seed.")));
  if (not_numbers != nullptr)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("options of dperm.evaluate must be numbers: %s", not_numbers)));
  bool isnull;
  Datum eps = SPI_getbinval(row, desc, 3, &isnull);
  if (isnull)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("option \"epsilon\" is required")));
  o.epsilon = DatumGetFloat8(eps);
  char* version = SPI_getvalue(row, desc, 4);
  Datum v = SPI_getbinval(row, desc, 5, &isnull);
  if (!isnull) o.loss_bound = DatumGetFloat8(v);
  v = SPI_getbinval(row, desc, 6, &isnull);
  if (!isnull) o.residual_bound = DatumGetFloat8(v);
  char* seed = SPI_getvalue(row, desc, 7);
  if (version != nullptr) {
    char* end;
    long parsed = strtol(version, &end, 10);
    if (*end != '\0' || parsed < 1 || parsed > PG_INT32_MAX)
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("option \"version\" must be a version number, not %s", version)));
    o.version = static_cast<int32>(parsed);
  }
  if (seed != nullptr) {
    char* end;
    o.seed = strtoll(seed, &end, 10);
    if (*end != '\0')
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("option \"seed\" must be an integer, not %s", seed)));
    o.has_seed = true;
  }
  SPI_finish();
  if (!std::isfinite(o.epsilon) || o.epsilon < 0.001)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("option \"epsilon\" must be finite and >= 0.001, not %g", o.epsilon)));
  if (!std::isfinite(o.loss_bound) || o.loss_bound <= 0 || o.loss_bound > 1e6 ||
      !std::isfinite(o.residual_bound) || o.residual_bound <= 0 || o.residual_bound > 1e6)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("options \"loss_bound\" and \"residual_bound\" must be in (0, 1e6]")));
  if (o.has_seed && !g_allow_seed)
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("option \"seed\" requires dperm.allow_seed = on")));
  return o;
}

}  // namespace
}  // namespace dperm::pg

// dperm.evaluate(name, relation, features, label, options) -> jsonb: a
// private estimate of the model's accuracy and log-loss (logistic, softmax)
// or RMSE (Huber) on a relation, charged to it like any release and stored
// with the version. Each metric is a sum over the rows of a per-row value
// clipped to a public bound, released with discrete Laplace noise
// (ReleaseBoundedSums, evaluate.hpp, states the sensitivity and the
// mechanism); n is public (replace-one), as in training.
//   accuracy:  per row 1 if the predicted class is the label, else 0: bound 1;
//   log-loss:  per row min(-ln p(label), loss_bound): bound loss_bound;
//   RMSE:      per row min(clamp(y - prediction, -B, B)^2): bound B^2, B =
//              residual_bound; RMSE = sqrt(noisy sum / n).
// Rows are read like training reads them (dperm.train's rules for protected
// relations: as the owner, every row counts, NULL labels imputed); a row
// whose features have another shape than the model's counts as wrong, with
// the worst loss, rather than raising (an error would depend on the data).
DPERM_FUNCTION(dperm_evaluate) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  Oid relid = PG_GETARG_OID(1);
  char* features = text_to_cstring(PG_GETARG_TEXT_PP(2));
  char* label = text_to_cstring(PG_GETARG_TEXT_PP(3));
  EvaluateOptions o = ParseEvaluateOptions(PG_GETARG_JSONB_P(4));
  Oid caller = GetUserId();
  Oid owner = OwnedModel(name, "evaluate").owner;
  MemoryContext context = CurrentMemoryContext;

  // The version (as the caller: row-level security applies).
  SPI_connect();
  Oid vtypes[3] = {TEXTOID, INT4OID, OIDOID};
  Datum vargs[3] = {CStringGetTextDatum(name), Int32GetDatum(o.version), ObjectIdGetDatum(owner)};
  RunInternalSql(caller,
                 "SELECT m.version, m.loss, m.model,"
                 "       ((m.model::pg_catalog.jsonb) OPERATOR(pg_catalog.->>) 'd')::pg_catalog.int4,"
                 "       COALESCE(((m.model::pg_catalog.jsonb) OPERATOR(pg_catalog.->>) 'classes')"
                 "                ::pg_catalog.int4, 2)"
                 "  FROM dperm.models m WHERE m.name OPERATOR(pg_catalog.=) $1"
                 "   AND m.owner OPERATOR(pg_catalog.=) $3"
                 "   AND m.status OPERATOR(pg_catalog.=) 'trained'"
                 "   AND ($2 OPERATOR(pg_catalog.=) 0 OR m.version OPERATOR(pg_catalog.=) $2)"
                 " ORDER BY m.version DESC LIMIT 1",
                 3, vtypes, vargs, nullptr, SPI_OK_SELECT, true);
  if (SPI_processed == 0)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg(o.version ? "model \"%s\" has no trained version %d"
                                     : "model \"%s\" has no trained version",
                           name, o.version)));
  HeapTuple row = SPI_tuptable->vals[0];
  TupleDesc desc = SPI_tuptable->tupdesc;
  bool isnull;
  int32 version = DatumGetInt32(SPI_getbinval(row, desc, 1, &isnull));
  char* loss_name = CopyValue(context, row, desc, 2);
  Oid model_type = SPI_gettypeid(desc, 3);
  Datum model = SPI_datumTransfer(SPI_getbinval(row, desc, 3, &isnull), false, -1);
  int32 d = DatumGetInt32(SPI_getbinval(row, desc, 4, &isnull));
  int32 classes = DatumGetInt32(SPI_getbinval(row, desc, 5, &isnull));
  SPI_finish();
  dperm::LossKind loss = ParseLossName(loss_name);
  bool huber = loss == dperm::LossKind::kHuber;

  // The relation: readable by the caller, or protected with the caller
  // among its analysts (then read as its owner, as dperm.train does).
  LockRelationOid(relid, AccessShareLock);
  char* relname = get_rel_name(relid);
  if (relname == nullptr)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE), errmsg("relation with OID %u does not exist", relid)));
  char* qualified = psprintf("%s.%s", quote_identifier(get_namespace_name(get_rel_namespace(relid))),
                             quote_identifier(relname));
  SPI_connect();
  bool allowed = false;
  Oid protected_rel = ProtectionOf(relid, caller, &allowed);
  Oid reader = caller;
  if (OidIsValid(protected_rel)) {
    if (!allowed)
      ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                      errmsg("role %s may not evaluate on %s", GetUserNameFromId(caller, false), relname),
                      errhint("The owner lists the analysts of a protected relation with dperm.protect.")));
    RefuseRowSecurity(relid, relname, false);
    HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
    if (!HeapTupleIsValid(tuple)) elog(ERROR, "relation %u vanished", relid);
    reader = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relowner;
    ReleaseSysCache(tuple);
  } else if (pg_class_aclcheck(relid, caller, ACL_SELECT) != ACLCHECK_OK) {
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("permission denied for table %s", relname),
                    errhint("dperm.evaluate reads relations you can SELECT, or protected relations "
                            "you are an analyst of.")));
  }
  Oid feature_type = ColumnType(relid, features);
  if (feature_type != FLOAT8ARRAYOID)
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("column \"%s\" must be float8[], not %s", features, format_type_be(feature_type))));
  TrainTarget target = TargetFor(loss, ColumnType(relid, label), label, loss_name);
  char* schema = ExtensionSchema("dperm", context);
  if (schema == nullptr) elog(ERROR, "dperm is not installed in this database");
  const char* ext = quote_identifier(schema);

  // n, public: every row counts.
  RunInternalSql(reader, psprintf("SELECT pg_catalog.count(*) FROM %s", qualified), 0,
                 nullptr, nullptr, nullptr, SPI_OK_SELECT, true);
  int64 n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  if (n == 0)
    ereport(ERROR, (errcode(ERRCODE_DATA_EXCEPTION),
                    errmsg("relation %s has no rows to evaluate on", relname),
                    errdetail("Nothing was released or charged.")));

  // Charged before the rows are read for the metrics.
  double* curve = static_cast<double*>(palloc(sizeof(double) * 64));
  int n_curve = 0;
  RunCore([&] {
    std::vector<double> c = dperm::PureDpRdpCurve(o.epsilon);
    n_curve = static_cast<int>(c.size());
    for (int i = 0; i < n_curve && i < 64; i++) curve[i] = c[i];
  });
  // Charged to what dperm.train would charge for this relation (the same
  // function): it, its partitions and inheritance children (the scan reads
  // them), for a view what it reads, and every ancestor of each.
  int n_relations = 0;
  Oid* relations = TrainRelations(relid, InvalidOid, &n_relations);
  ChargeRequest charge = {"evaluate", "discrete Laplace on clipped sums", loss_name, "replace_one",
                          o.epsilon, 0, n, d, curve, n_curve, o.has_seed};
  int64 ledger_id = ChargeRelease(charge, relations, n_relations);

  // The clipped sums, read as the reader. Labels as training reads them:
  // logistic positive when true or > 0 (NULL and NaN negative), softmax
  // classes clamped into 0 .. K-1 (NULL: 0), Huber targets NULL: 0.
  const char* y = quote_identifier(label);
  char* label_expr;
  if (huber)
    label_expr = psprintf("COALESCE(%s::pg_catalog.float8, 0)", y);
  else if (loss == dperm::LossKind::kSoftmax)
    label_expr = psprintf("pg_catalog.int4larger(0, pg_catalog.int4smaller(%d, COALESCE(%s::pg_catalog.int4, 0)))",
                          classes - 1, y);
  else if (strcmp(target.label_cast, "pg_catalog.bool") == 0)
    label_expr = psprintf("CASE WHEN %s THEN 1 ELSE 0 END", y);
  else
    label_expr = psprintf("CASE WHEN %s OPERATOR(pg_catalog.>) 0 AND %s OPERATOR(pg_catalog.<>) "
                          "'NaN'::pg_catalog.float8 THEN 1 ELSE 0 END", y, y);
  char* rows = psprintf(
      "SELECT COALESCE(%s::pg_catalog.float8[], pg_catalog.array_fill(0::pg_catalog.float8, ARRAY[$2])) AS f,"
      "       %s AS y FROM %s",
      quote_identifier(features), label_expr, qualified);
  const char* ok = "(pg_catalog.array_ndims(r.f) OPERATOR(pg_catalog.=) 1 AND "
                   "pg_catalog.array_length(r.f, 1) OPERATOR(pg_catalog.=) $2)";
  // The metric sums are exact (exact_sum.hpp): each row's value v in
  // [0, B] is rounded to B 2^-40 and the integers round(v/B 2^40) summed as
  // bigint (an exact numeric sum, whatever the row order or the parallel
  // plan), then rounded once to a double; the slack passed to
  // ReleaseBoundedSums counts the grid and that rounding. The count is exact.
  char* sql;
  if (huber)
    sql = psprintf(
        "SELECT COALESCE(pg_catalog.sum(pg_catalog.round((CASE WHEN %s THEN pg_catalog.power(pg_catalog.float8larger("
        "         OPERATOR(pg_catalog.-) $3, pg_catalog.float8smaller($3, r.y OPERATOR(pg_catalog.-) %s.dp_predict($1, r.f))), 2)"
        "         ELSE $3 OPERATOR(pg_catalog.*) $3 END) OPERATOR(pg_catalog./) ($3 OPERATOR(pg_catalog.*) $3)"
        "         OPERATOR(pg_catalog.*) 1099511627776::pg_catalog.float8)::pg_catalog.int8), 0)::pg_catalog.float8"
        "         OPERATOR(pg_catalog.*) ($3 OPERATOR(pg_catalog.*) $3) OPERATOR(pg_catalog./) 1099511627776::pg_catalog.float8,"
        "       0 FROM (%s) r",
        ok, ext, rows);
  else
    sql = psprintf(
        "SELECT COALESCE(pg_catalog.sum(CASE WHEN %s AND %s.dp_predict_class($1, r.f) OPERATOR(pg_catalog.=) r.y"
        "         THEN 1 ELSE 0 END), 0)::pg_catalog.float8,"
        "       COALESCE(pg_catalog.sum(pg_catalog.round((CASE WHEN %s THEN pg_catalog.float8smaller($3,"
        "         OPERATOR(pg_catalog.-) pg_catalog.ln(pg_catalog.float8larger(1e-300,"
        "           (%s.dp_predict_proba($1, r.f))[r.y OPERATOR(pg_catalog.+) 1])))"
        "         ELSE $3 END) OPERATOR(pg_catalog./) $3"
        "         OPERATOR(pg_catalog.*) 1099511627776::pg_catalog.float8)::pg_catalog.int8), 0)::pg_catalog.float8"
        "         OPERATOR(pg_catalog.*) $3 OPERATOR(pg_catalog./) 1099511627776::pg_catalog.float8"
        "  FROM (%s) r",
        ok, ext, ok, ext, rows);
  double bound = huber ? o.residual_bound : o.loss_bound;
  Oid stypes[3] = {model_type, INT4OID, FLOAT8OID};
  Datum sargs[3] = {model, Int32GetDatum(d), Float8GetDatum(bound)};
  RunInternalSql(reader, sql, 3, stypes, sargs, nullptr, SPI_OK_SELECT, true);
  double sums[2];
  sums[0] = DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  sums[1] = DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
  SPI_finish();

  // The noise (C++ phase).
  uint8 key[32];
  if (!o.has_seed && !pg_strong_random(key, sizeof key))
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("could not generate a random key for the noise")));
  double noisy[2] = {0, 0};
  double scale = 0, grid = 0;
  int metrics = huber ? 1 : 2;
  RunCore([&] {
    std::array<uint8_t, 32> k;
    memcpy(k.data(), key, sizeof key);
    dperm::SecureRng rng = o.has_seed ? dperm::SecureRng::FromSeed(static_cast<uint64_t>(o.seed))
                                      : dperm::SecureRng(k);
    std::vector<double> s(sums, sums + metrics);
    std::vector<double> bounds = huber ? std::vector<double>{bound * bound}
                                       : std::vector<double>{1.0, bound};
    // One grid step 2^-40 per sum, and the rounding of an exact sum of n
    // values in [0, 1] units to a double and back to the bound's units.
    const double slack = std::ldexp(1.0, -40) + std::ldexp(static_cast<double>(n), -50);
    dperm::NoisySums r = dperm::ReleaseBoundedSums(s, bounds, o.epsilon, rng, slack);
    for (int i = 0; i < metrics; i++) noisy[i] = r.values[i];
    scale = r.scale;
    grid = r.grid;
  });
  explicit_bzero(key, sizeof key);
  // Post-processing into the metrics' ranges.
  double dn = static_cast<double>(n);
  double m1 = huber ? std::sqrt(Max(noisy[0] / dn, 0.0)) : Min(Max(noisy[0] / dn, 0.0), 1.0);
  double m2 = huber ? 0 : Max(noisy[1] / dn, 0.0);

  SPI_connect();
  Oid jtypes[13] = {INT4OID, TEXTOID, INT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID,
                    FLOAT8OID, FLOAT8OID, INT8OID, BOOLOID, TEXTOID, BOOLOID};
  Datum jargs[13] = {Int32GetDatum(version), CStringGetTextDatum(qualified), Int64GetDatum(n),
                     Float8GetDatum(o.epsilon), Float8GetDatum(m1), Float8GetDatum(m2),
                     Float8GetDatum(bound), Float8GetDatum(scale), Float8GetDatum(grid),
                     Int64GetDatum(ledger_id), BoolGetDatum(huber),
                     CStringGetTextDatum(GetUserNameFromId(caller, false)), BoolGetDatum(o.has_seed)};
  RunAsCatalogOwner(
      "SELECT (pg_catalog.jsonb_build_object('version', $1, 'relation', $2, 'n', $3,"
      "   'epsilon', $4, 'delta', 0, 'ledger_id', $10, 'evaluated_by', $12,"
      "   'evaluated_at', pg_catalog.now(), 'private', NOT $13,"
      "   'mechanism', 'discrete Laplace on clipped sums (replace-one, n public)',"
      "   'noise_scale', $8, 'grid', $9)"
      " OPERATOR(pg_catalog.||) CASE WHEN $11"
      "   THEN pg_catalog.jsonb_build_object('rmse', $5, 'residual_bound', $7)"
      "   ELSE pg_catalog.jsonb_build_object('accuracy', $5, 'log_loss', $6, 'loss_bound', $7) END)"
      "   ::pg_catalog.text",
      13, jtypes, jargs, nullptr, SPI_OK_SELECT, true);
  char* evaluation = CopyValue(context, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
  Oid rtypes[4] = {TEXTOID, INT4OID, TEXTOID, OIDOID};
  Datum rargs[4] = {CStringGetTextDatum(name), Int32GetDatum(version), CStringGetTextDatum(evaluation),
                    ObjectIdGetDatum(owner)};
  RunAsCatalogOwner("SELECT pg_catalog.jsonb_build_object('name', $1, 'version', $2,"
                    "  'owner', $4, 'evaluation', $3::pg_catalog.jsonb)::pg_catalog.text",
                    4, rtypes, rargs, nullptr, SPI_OK_SELECT, true);
  char* record = CopyValue(context, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
  SPI_finish();
  // Stored by the ledger writer, so the charged evaluation outlives a rollback.
  SubmitModelRecord(kRecordEvaluation, record);
  PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(evaluation)));
}
