// A named model's schedule as the catalogs hold it (model_schedule.hpp): its
// row in dperm.model_schedules and its pg_cron job. Scheduling itself is
// model_cron.cpp; dropping a model removes both (models.cpp).
#include "base/internal_sql.hpp"
#include "models/model_registry.hpp"
#include "models/model_schedule.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
}

namespace dperm::pg {

// The schema of pg_cron's functions and tables (its script creates schema
// `cron`; the extension itself is recorded in another), or nullptr when
// pg_cron is not installed. Needs SPI.
char* CronSchema(MemoryContext context) {
  RunAsCatalogOwner(
      "SELECT n.nspname::pg_catalog.text FROM pg_catalog.pg_extension e"
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
  RunAsCatalogOwner(
      "SELECT s.jobid FROM dperm.model_schedules s"
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
  RunAsCatalogOwner(
      "DELETE FROM dperm.model_schedules WHERE name OPERATOR(pg_catalog.=) $1"
      " AND owner OPERATOR(pg_catalog.=) $2",
      2, types, args, nullptr, SPI_OK_DELETE, false);
}

}  // namespace dperm::pg
