// Scheduled retraining of named models through pg_cron (docs/design.md
// section 7, docs/user-guide.md, "Named models and retraining"): a pg_cron job per model
// runs dperm.retrain_on_schedule(name, owner) as the role that scheduled it,
// which pauses the schedule instead of running when the budget cannot pay;
// dperm.retraining_forecast (SQL) says how many runs still fit, and
// dperm.cron_next_run forecasts a schedule's runs (cron_forecast.cpp).
#include "base/internal_sql.hpp"
#include "models/model_registry.hpp"
#include "models/model_schedule.hpp"
#include "models/model_versions.hpp"

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

// SQLSTATE of a budget refusal (charge.cpp raises the same for releases).
const int kBudgetExceeded = MAKE_SQLSTATE('D', 'P', '0', '0', '1');

// pg_cron's schema, or the error that says how to install it.
char* RequireCron(MemoryContext context) {
  SPI_connect();
  char* cron = CronSchema(context);
  SPI_finish();
  if (cron == nullptr) {
    const char* db = get_database_name(MyDatabaseId);
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("scheduled retraining needs the pg_cron extension, which is not "
                           "installed in database \"%s\"",
                           db),
                    errhint("Install the package postgresql-15-cron; in postgresql.conf add "
                            "pg_cron to the list in shared_preload_libraries (keep what is there, "
                            "e.g. 'dperm,pg_cron') and set cron.database_name = '%s'; restart "
                            "PostgreSQL, then run CREATE EXTENSION pg_cron in \"%s\".",
                            db, db)));
  }
  // Installed but not loaded (removed from shared_preload_libraries), or
  // the jobs would run in another database: nothing would ever run here.
  const char* cron_db = GetConfigOption("cron.database_name", true, false);
  const char* db = get_database_name(MyDatabaseId);
  if (cron_db == nullptr || strcmp(cron_db, db) != 0)
    ereport(ERROR,
            (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
             errmsg(cron_db == nullptr ? "pg_cron is installed in database \"%s\" but not loaded"
                                       : "pg_cron runs its jobs in database \"%s\", not in \"%s\"",
                    cron_db == nullptr ? db : cron_db, db),
             errhint("In postgresql.conf add pg_cron to the list in shared_preload_libraries "
                     "(keep what is there, e.g. 'dperm,pg_cron') and set cron.database_name = "
                     "'%s'; restart PostgreSQL.",
                     db)));
  return cron;
}

// Why the next run of `owner`'s model `name` would be refused for budget,
// or nullptr when it fits: the latest trained version's charge (RDP curve,
// epsilon, delta), once more, against each budget it went to that the
// caller may see (dperm.charges_fit, the forecast's test). nullptr too when
// no version is trained (nothing to forecast with). Needs SPI.
char* NextRunShortfall(const char* name, Oid owner, MemoryContext context) {
  Oid types[2] = {TEXTOID, OIDOID};
  Datum args[2] = {CStringGetTextDatum(name), ObjectIdGetDatum(owner)};
  RunInternalSql(
      GetUserId(),
      "SELECT b.relation::pg_catalog.text, c.epsilon, c.delta"
      "  FROM dperm.models m"
      "  JOIN dperm.budgets b"
      "    ON b.relation OPERATOR(pg_catalog.=) ANY (COALESCE(m.relations, ARRAY[m.relation]))"
      // the run's cost at this budget's unit (dperm.run_charge)
      " CROSS JOIN LATERAL dperm.run_charge(m, b.privacy_unit) c"
      " WHERE m.name OPERATOR(pg_catalog.=) $1 AND m.owner OPERATOR(pg_catalog.=) $2"
      "   AND m.version OPERATOR(pg_catalog.=)"
      "       (SELECT pg_catalog.max(v.version) FROM dperm.models v"
      "         WHERE v.name OPERATOR(pg_catalog.=) $1 AND v.owner OPERATOR(pg_catalog.=) $2"
      "           AND v.status OPERATOR(pg_catalog.=) 'trained')"
      "   AND NOT dperm.charges_fit(b.relation, b.accounting, b.epsilon, b.delta, c.rdp,"
      "                             c.epsilon, c.delta, 1)"
      " ORDER BY b.relation::pg_catalog.oid LIMIT 1",
      2, types, args, nullptr, SPI_OK_SELECT, true);
  if (SPI_processed == 0) return nullptr;
  HeapTuple row = SPI_tuptable->vals[0];
  TupleDesc desc = SPI_tuptable->tupdesc;
  bool isnull;
  char* relation = CopyValue(context, row, desc, 1);
  double eps = DatumGetFloat8(SPI_getbinval(row, desc, 2, &isnull));
  double delta = DatumGetFloat8(SPI_getbinval(row, desc, 3, &isnull));
  MemoryContext old = MemoryContextSwitchTo(context);
  char* reason = psprintf(
      "the next run (epsilon = %g, delta = %g, the latest trained version's "
      "charge at this budget's unit) does not fit in the privacy budget of "
      "relation %s",
      eps, delta, relation);
  MemoryContextSwitchTo(old);
  return reason;
}

// Marks the schedule of `owner`'s model `name` paused for `reason` (when
// first paused: paused_at; each paused run: the reason). Warns when it
// pauses, so the server log says so once. Needs SPI.
void PauseSchedule(const char* name, Oid owner, const char* reason) {
  Oid types[3] = {TEXTOID, OIDOID, TEXTOID};
  Datum args[3] = {CStringGetTextDatum(name), ObjectIdGetDatum(owner), CStringGetTextDatum(reason)};
  RunAsCatalogOwner(
      "SELECT s.paused_at IS NULL FROM dperm.model_schedules s"
      " WHERE s.name OPERATOR(pg_catalog.=) $1 AND s.owner OPERATOR(pg_catalog.=) $2"
      " FOR UPDATE",
      2, types, args, nullptr, SPI_OK_SELECT, false);
  if (SPI_processed == 0) return;
  bool isnull;
  bool pausing =
      DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  RunAsCatalogOwner(
      "UPDATE dperm.model_schedules"
      "   SET paused_at = COALESCE(paused_at, pg_catalog.now()), paused_reason = $3"
      " WHERE name OPERATOR(pg_catalog.=) $1 AND owner OPERATOR(pg_catalog.=) $2",
      3, types, args, nullptr, SPI_OK_UPDATE, false);
  ereport(pausing ? WARNING : NOTICE,
          (errmsg("retraining of model \"%s\" is paused: %s", name, reason),
           errdetail("No version was trained and nothing was charged."),
           errhint("Each scheduled run checks the budget again and resumes once the run fits; "
                   "the relation's owner raises the budget with dperm.set_budget.")));
}

// Clears the pause of `owner`'s model `name`'s schedule, if paused: its run
// fits again. Needs SPI.
void ResumeSchedule(const char* name, Oid owner) {
  Oid types[2] = {TEXTOID, OIDOID};
  Datum args[2] = {CStringGetTextDatum(name), ObjectIdGetDatum(owner)};
  RunAsCatalogOwner(
      "UPDATE dperm.model_schedules SET paused_at = NULL, paused_reason = NULL"
      " WHERE name OPERATOR(pg_catalog.=) $1 AND owner OPERATOR(pg_catalog.=) $2"
      "   AND paused_at IS NOT NULL",
      2, types, args, nullptr, SPI_OK_UPDATE, false);
  if (SPI_processed > 0)
    ereport(LOG,
            (errmsg("retraining of model \"%s\" resumes: its next run fits in the budget", name)));
}

}  // namespace

}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.schedule_retraining(name, cron_schedule, min_runs DEFAULT 1) ->
// bigint: a pg_cron job, owned by the caller, that runs
// dperm.retrain_on_schedule(name, owner) on the schedule (a new schedule
// is not paused); refused (DP001) when fewer than min_runs retrainings fit
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
                              "the ledger under the relation's accounting.",
                              eps, delta),
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
  char* command =
      psprintf("SELECT dperm.retrain_on_schedule(%s, %s::pg_catalog.regrole)",
               quote_literal_cstr(name), quote_literal_cstr(quote_identifier(RoleName(owner))));
  args[0] = CStringGetTextDatum(schedule);
  args[1] = CStringGetTextDatum(command);
  RunInternalSql(GetUserId(), psprintf("SELECT %s.schedule($1, $2)", quote_identifier(cron)), 2,
                 types, args, nullptr, SPI_OK_SELECT, false);
  int64 job =
      DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  Oid stypes[6] = {TEXTOID, TEXTOID, INT8OID, INT4OID, OIDOID, OIDOID};
  Datum sargs[6] = {
      CStringGetTextDatum(name), CStringGetTextDatum(schedule), Int64GetDatum(job),
      Int32GetDatum(min_runs),   ObjectIdGetDatum(GetUserId()), ObjectIdGetDatum(owner)};
  RunAsCatalogOwner(
      "INSERT INTO dperm.model_schedules (owner, name, cron_schedule, jobid, min_runs,"
      "  scheduled_by, scheduled_at)"
      " VALUES ($6::pg_catalog.regrole, $1, $2, $3, $4, $5::pg_catalog.regrole, pg_catalog.now())"
      " ON CONFLICT (owner, name) DO UPDATE SET cron_schedule = excluded.cron_schedule,"
      "   jobid = excluded.jobid, min_runs = excluded.min_runs,"
      "   scheduled_by = excluded.scheduled_by, scheduled_at = excluded.scheduled_at,"
      "   paused_at = NULL, paused_reason = NULL",
      6, stypes, sargs, nullptr, SPI_OK_INSERT, false);
  SPI_finish();
  PG_RETURN_INT64(job);
}

// dperm.retrain_on_schedule(name, owner) -> int: what a scheduled job
// runs. Like dperm.retrain(name, owner), except on a scheduled model whose
// next run the budget cannot pay for: then it trains nothing, charges
// nothing and adds no version, marks the schedule paused (paused_at,
// paused_reason) and returns NULL; the first run that fits again clears
// the pause and trains. The forecast's test decides before the charge; a
// refusal by the ledger writer itself (another role spent the budget
// meanwhile) pauses too.
DPERM_FUNCTION(dperm_retrain_on_schedule) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  Oid owner = PG_GETARG_OID(1);
  if (!OidIsValid(owner))
    ereport(ERROR,
            (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("model \"%s\" does not exist", name)));
  ModelSpec spec = OwnedModel(name, "retrain", owner);
  MemoryContext context = CurrentMemoryContext;
  SPI_connect();
  bool scheduled;
  ScheduledJob(name, spec.owner, &scheduled);
  char* shortfall = scheduled ? NextRunShortfall(name, spec.owner, context) : nullptr;
  if (shortfall != nullptr) {
    PauseSchedule(name, spec.owner, shortfall);
    SPI_finish();
    PG_RETURN_NULL();
  }
  if (scheduled) ResumeSchedule(name, spec.owner);
  SPI_finish();
  ErrorData* refusal = nullptr;
  int64 version = RunVersion(spec, scheduled ? &refusal : nullptr);
  if (refusal != nullptr) {
    SPI_connect();
    PauseSchedule(name, spec.owner, refusal->message);
    SPI_finish();
    PG_RETURN_NULL();
  }
  PG_RETURN_INT32(static_cast<int32>(version));
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
