// The SQL dperm runs on its own behalf (docs/design.md section 6, docs/user-guide.md, "Trust
// model"): under which identity, and with which names in reach.
//
// Untrusted roles can create types, domains and relations in their session's
// temporary schema, and PostgreSQL searches pg_temp *first* for type and
// relation names unless the search_path names it. Every internal statement
// therefore runs with search_path = "pg_catalog, pg_temp" (pg_temp explicitly
// last) and spells dperm's own objects with their schema; functions and
// operators are never looked up in pg_temp.
#include "base/internal_sql.hpp"

extern "C" {
#include "catalog/pg_authid.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
}

namespace dperm::pg {

const char* const kInternalSearchPath = "pg_catalog, pg_temp";

namespace {

// The settings that change what dperm's own statements mean or how a value
// reads as text (a unit's sampling key hashes a value's text; literals such
// as '\x..'::bytea parse by standard_conforming_strings): pinned to
// PostgreSQL's defaults, whatever the caller SET. Every other setting
// changes neither a value nor a result.
const struct {
  const char* name;
  const char* value;
} kInternalSettings[] = {
    {"search_path", kInternalSearchPath},
    {"extra_float_digits", "1"},
    {"DateStyle", "ISO, MDY"},
    {"IntervalStyle", "postgres"},
    {"TimeZone", "UTC"},
    {"bytea_output", "hex"},
    {"lc_monetary", "C"},
    {"lc_numeric", "C"},
    {"xmlbinary", "base64"},
    {"xmloption", "content"},
    {"standard_conforming_strings", "on"},
    {"array_nulls", "on"},
    {"transform_null_equals", "off"},
    {"quote_all_identifiers", "off"},
};

}  // namespace

int PinInternalSettings() {
  int level = NewGUCNestLevel();
  for (const auto& s : kInternalSettings)
    set_config_option(s.name, s.value, PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
  return level;
}

namespace {

// The identity and settings RunInternalSql and RunInternalPlan run under.
struct InternalScope {
  Oid saved_user;
  int saved_context;
  bool parallel;
  int level;
};

InternalScope EnterInternal(Oid role, bool allow_parallel) {
  InternalScope s;
  GetUserIdAndSecContext(&s.saved_user, &s.saved_context);
  // One set of flags for every identity switch: SECURITY_RESTRICTED_OPERATION,
  // as VACUUM and ANALYZE use when they run a table owner's code: no SET
  // ROLE, no temporary objects, no lasting settings from whatever the
  // statement's objects execute, whoever `role` is.
  SetUserIdAndSecContext(
      role, s.saved_context | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
  // In parallel mode (a final function under a parallel plan: the
  // `dataset` check) PostgreSQL forbids setting parameters, and no new
  // parallel plan can start anyway; the statements dperm runs there spell
  // every name with its schema, which the pinned path only backs up.
  s.parallel = IsInParallelMode();
  s.level = s.parallel ? 0 : PinInternalSettings();
  // Serial plans only, unless asked: streaming passes may go parallel
  // (their aggregates read only their arguments and dperm.internal_pass,
  // which workers inherit).
  if (!s.parallel) {
    if (!allow_parallel)
      set_config_option("max_parallel_workers_per_gather", "0", PGC_USERSET, PGC_S_SESSION,
                        GUC_ACTION_SAVE, true, 0, false);
    set_config_option("force_parallel_mode", "off", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
                      true, 0, false);
  }
  return s;
}

// On an error the transaction's abort restores the identity and settings.
void LeaveInternal(const InternalScope& s) {
  if (!s.parallel) AtEOXact_GUC(true, s.level);
  SetUserIdAndSecContext(s.saved_user, s.saved_context);
}

}  // namespace

namespace {

// An error raised inside one of dperm's own statements reaches the caller
// without that statement: no CONTEXT line quoting it (a unit's sampling key,
// the SQL of a read) and no internal query. The SQLSTATE, message, detail
// and hint are kept.
[[noreturn]] void RethrowWithoutStatement(MemoryContext context) {
  MemoryContextSwitchTo(context);
  ErrorData* error = CopyErrorData();
  FlushErrorState();
  error->context = nullptr;
  error->internalquery = nullptr;
  error->internalpos = 0;
  ReThrowError(error);
}

}  // namespace

void RunInternalSql(Oid role, const char* sql, int nargs, Oid* types, Datum* args,
                    const char* nulls, int expected, bool read_only, bool allow_parallel) {
  MemoryContext context = CurrentMemoryContext;
  InternalScope scope = EnterInternal(role, allow_parallel);
  int result = 0;
  PG_TRY();
  { result = SPI_execute_with_args(sql, nargs, types, args, nulls, read_only, 0); }
  PG_CATCH();
  { RethrowWithoutStatement(context); }
  PG_END_TRY();
  if (result != expected) elog(ERROR, "dperm: an internal statement returned %d", result);
  LeaveInternal(scope);
}

void RunInternalPlan(Oid role, SPIPlanPtr* plan, const char* sql, int nargs, Oid* types,
                     Datum* args, int expected, bool read_only, bool allow_parallel) {
  InternalScope scope = EnterInternal(role, allow_parallel);
  if (*plan == nullptr) {
    // Planned once, under the identity and settings of every execution; a
    // generic plan, so that no execution plans again for its parameters.
    *plan = SPI_prepare_cursor(sql, nargs, types, CURSOR_OPT_PARALLEL_OK | CURSOR_OPT_GENERIC_PLAN);
    if (*plan == nullptr) elog(ERROR, "dperm: could not prepare \"%s\"", sql);
  }
  MemoryContext context = CurrentMemoryContext;
  int result = 0;
  PG_TRY();
  { result = SPI_execute_plan(*plan, args, nullptr, read_only, 0); }
  PG_CATCH();
  { RethrowWithoutStatement(context); }
  PG_END_TRY();
  if (result != expected) elog(ERROR, "dperm: an internal statement returned %d", result);
  LeaveInternal(scope);
}

void RunInternalCall(Oid role, void (*fn)(void* arg), void* arg) {
  MemoryContext context = CurrentMemoryContext;
  InternalScope scope = EnterInternal(role, false);
  PG_TRY();
  { fn(arg); }
  PG_CATCH();
  { RethrowWithoutStatement(context); }
  PG_END_TRY();
  LeaveInternal(scope);
}

bool RoleColumnIsOid(const char* table, const char* column) {
  Oid nsp = get_namespace_oid("dperm", true);
  Oid rel = OidIsValid(nsp) ? get_relname_relid(table, nsp) : InvalidOid;
  AttrNumber att = OidIsValid(rel) ? get_attnum(rel, column) : InvalidAttrNumber;
  return att != InvalidAttrNumber && get_atttype(rel, att) == REGROLEOID;
}

const char* RoleColumnValue(const char* table, const char* column, int param) {
  return RoleColumnIsOid(table, column) ? psprintf("$%d::pg_catalog.regrole", param)
                                        : psprintf("pg_catalog.pg_get_userbyid($%d)", param);
}

void RunAsCatalogOwner(const char* sql, int nargs, Oid* types, Datum* args, const char* nulls,
                       int expected, bool read_only) {
  RunInternalSql(BOOTSTRAP_SUPERUSERID, sql, nargs, types, args, nulls, expected, read_only);
}

}  // namespace dperm::pg
