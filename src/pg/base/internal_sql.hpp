// The SQL dperm runs on its own behalf (internal_sql.cpp): the one place that
// switches identity and pins the settings its statements depend on.
#pragma once

#include "base/boundary.hpp"

extern "C" {
#include "executor/spi.h"
}

namespace dperm::pg {

// search_path of every statement dperm runs internally: "pg_catalog, pg_temp".
extern const char* const kInternalSearchPath;

// Pins search_path to kInternalSearchPath and every setting that changes how
// a statement parses or a value reads as text (extra_float_digits,
// DateStyle, IntervalStyle, TimeZone, bytea_output, ...) to PostgreSQL's
// default; returns the GUC nest level to pass to AtEOXact_GUC.
int PinInternalSettings();

// Runs `sql` through SPI (connected by the caller) as `role`, under
// SECURITY_RESTRICTED_OPERATION, with PinInternalSettings and serial plans;
// checks that SPI returns `expected`. The caller's identity and settings come
// back on return, or on abort. An error inside `sql` is raised without the
// statement (no CONTEXT line or internal query quoting it).
// allow_parallel: let the planner use parallel workers (streaming passes,
// whose aggregates need no backend-local state); otherwise serial plans.
void RunInternalSql(Oid role, const char* sql, int nargs, Oid* types, Datum* args,
                    const char* nulls, int expected, bool read_only, bool allow_parallel = false);

// RunInternalSql for a statement run many times (dperm.train's passes): the
// first call prepares `sql` into *plan (nullptr before), a generic plan in
// the SPI connection's memory; every call executes *plan, planning nothing.
void RunInternalPlan(Oid role, SPIPlanPtr* plan, const char* sql, int nargs, Oid* types,
                     Datum* args, int expected, bool read_only, bool allow_parallel);

// Runs fn(arg), SPI calls RunInternalSql does not make (a cursor's open and
// each fetch: row_reader.cpp), as `role` with RunInternalSql's flags,
// settings, serial plans and error rule.
void RunInternalCall(Oid role, void (*fn)(void* arg), void* arg);

// Whether column `column` of dperm's catalog table `table` holds a role by
// OID (regrole: dperm 0.7.0's catalog) rather than by name (an older
// catalog, served until ALTER EXTENSION dperm UPDATE).
bool RoleColumnIsOid(const char* table, const char* column);

// The SQL expression that stores role OID parameter $`param` in column
// `column` of dperm's catalog table `table`: the regrole itself (dperm
// 0.7.0's catalog), or the role's name where the column is still a name (an
// older catalog, served until ALTER EXTENSION dperm UPDATE).
const char* RoleColumnValue(const char* table, const char* column, int param);

// RunInternalSql as the bootstrap superuser, for dperm's own catalog.
void RunAsCatalogOwner(const char* sql, int nargs, Oid* types, Datum* args, const char* nulls,
                       int expected, bool read_only);

}  // namespace dperm::pg
