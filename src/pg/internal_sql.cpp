// The SQL dperm runs on its own behalf (DESIGN.md section 6, README "Trust
// model"): under which identity, and with which names in reach.
//
// Untrusted roles can create types, domains and relations in their session's
// temporary schema, and PostgreSQL searches pg_temp *first* for type and
// relation names unless the search_path names it. Every internal statement
// therefore runs with search_path = "pg_catalog, pg_temp" (pg_temp explicitly
// last) and spells dperm's own objects with their schema; functions and
// operators are never looked up in pg_temp.
#include "internal_sql.hpp"
#include "relations.hpp"

extern "C" {
#include "catalog/pg_authid.h"
#include "access/xact.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/guc.h"
}

namespace dperm::pg {

const char* const kInternalSearchPath = "pg_catalog, pg_temp";

int PinInternalSearchPath() {
  int level = NewGUCNestLevel();
  set_config_option("search_path", kInternalSearchPath, PGC_USERSET, PGC_S_SESSION,
                    GUC_ACTION_SAVE, true, 0, false);
  return level;
}

void RunInternalSql(Oid role, const char* sql, int nargs, Oid* types,
                    Datum* args, const char* nulls, int expected, bool read_only,
                    bool allow_parallel) {
  Oid saved_user;
  int saved_context;
  GetUserIdAndSecContext(&saved_user, &saved_context);
  // One set of flags for every identity switch: SECURITY_RESTRICTED_OPERATION,
  // as VACUUM and ANALYZE use when they run a table owner's code: no SET
  // ROLE, no temporary objects, no lasting settings from whatever the
  // statement's objects execute, whoever `role` is.
  SetUserIdAndSecContext(role, saved_context | SECURITY_LOCAL_USERID_CHANGE |
                                   SECURITY_RESTRICTED_OPERATION);
  // In parallel mode (a final function under a parallel plan: the
  // `dataset` check) PostgreSQL forbids setting parameters, and no new
  // parallel plan can start anyway; the statements dperm runs there spell
  // every name with its schema, which the pinned path only backs up.
  bool parallel = IsInParallelMode();
  int level = parallel ? 0 : PinInternalSearchPath();
  // Serial plans only: the release context (g_release) lives in this
  // backend, and a parallel worker running the final function would not see
  // it. Streaming passes may go parallel: their aggregates read only their
  // arguments and dperm.internal_pass, which workers inherit.
  if (!parallel) {
    if (!allow_parallel)
      set_config_option("max_parallel_workers_per_gather", "0", PGC_USERSET, PGC_S_SESSION,
                        GUC_ACTION_SAVE, true, 0, false);
    set_config_option("force_parallel_mode", "off", PGC_USERSET, PGC_S_SESSION,
                      GUC_ACTION_SAVE, true, 0, false);
  }
  // On an error the transaction's abort restores the identity and settings.
  if (SPI_execute_with_args(sql, nargs, types, args, nulls, read_only, 0) != expected)
    elog(ERROR, "dperm: could not run \"%s\"", sql);
  if (!parallel) AtEOXact_GUC(true, level);
  SetUserIdAndSecContext(saved_user, saved_context);
}

void RunAsCatalogOwner(const char* sql, int nargs, Oid* types, Datum* args, const char* nulls,
                       int expected, bool read_only) {
  RunInternalSql(BOOTSTRAP_SUPERUSERID, sql, nargs, types, args, nulls, expected,
                 read_only);
}

}  // namespace dperm::pg
