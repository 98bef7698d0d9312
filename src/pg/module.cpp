// Module load (_PG_init): the magic block, the settings, the ledger
// writer's handlers and the hooks. The one file that wires the others
// together: no file includes it.
#include "dperm/util/interrupt.hpp"

#include <climits>
#include <cstring>

#include "base/citus.hpp"
#include "ledger/ledger.hpp"
#include "ledger/ledger_request.hpp"
#include "models/model_records.hpp"
#include "release/pass_aggregate.hpp"
#include "ledger/persistent_ledger_writer.hpp"
#include "release/progress.hpp"
#include "release/release_guard.hpp"
#include "base/settings.hpp"

extern "C" {
#include "miscadmin.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;
void _PG_init(void);
}

namespace dperm::pg {

namespace {
// True when a cancel or termination is pending: the interrupts that end a
// query. Reads flags only and never raises, so the core may call it.
bool InterruptIsPending() { return InterruptPending && (QueryCancelPending || ProcDiePending); }
// dperm.pass_key: empty (not configured) or at least 32 characters.
bool CheckPassKey(char** value, void**, GucSource) {
  if (*value == nullptr || (*value)[0] == '\0' || strlen(*value) >= 32) return true;
  GUC_check_errdetail("dperm.pass_key needs at least 32 characters.");
  return false;
}
}  // namespace

}  // namespace dperm::pg

void _PG_init(void) {
  // dperm's own settings (settings.cpp), then those of one mechanism each.
  dperm::pg::DefineSettings();
  // Not a user setting: dperm.train turns it on around each streaming pass
  // (streaming.cpp) and the per-pass aggregates refuse without it. SUSET,
  // so no other role can set it (a function's SET clause runs with its
  // caller's rights); hidden, and refused in configuration files.
  DefineCustomBoolVariable(
      "dperm.internal_pass", "On only while dperm.train runs a streaming pass.",
      "The per-pass aggregates return exact gradient sums and refuse to run without it.",
      &dperm::pg::g_internal_pass, false, PGC_SUSET,
      GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE | GUC_DISALLOW_IN_FILE | GUC_DISALLOW_IN_AUTO_FILE |
          GUC_NO_RESET_ALL,
      nullptr, nullptr, nullptr);
  // The secret of the Citus pass tokens (citus.cpp): set in postgresql.conf
  // (or ALTER SYSTEM) on every node, never per database or role, whose
  // settings pg_db_role_setting shows every role. Readable by superusers
  // (and pg_read_all_settings) only.
  DefineCustomStringVariable(
      "dperm.pass_key",
      "Secret under which dperm.train signs the streaming passes Citus runs on workers.",
      "The same value, at least 32 characters, on the coordinator and every worker.",
      &dperm::pg::g_pass_key, "", PGC_SIGHUP,
      GUC_SUPERUSER_ONLY | GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE, &dperm::pg::CheckPassKey, nullptr,
      nullptr);
  DefineCustomIntVariable("dperm.ledger_wait_timeout",
                          "How long a release waits for a ledger writer to take its charge.",
                          "Without shared_preload_libraries = dperm: how long to wait for a free "
                          "background worker slot; with it: how long to wait for the persistent "
                          "ledger writer to take the request. Then the release fails with "
                          "SQLSTATE 53000 and no model. Also how long a release waits for its "
                          "turn behind other releases charged to the same relation, and retries "
                          "while another transaction holds a budget row it is charged to; then it "
                          "fails with SQLSTATE 55P03, uncharged. 0 fails at once.",
                          &dperm::pg::g_ledger_wait_timeout_ms, 30000, 0, INT_MAX, PGC_USERSET,
                          GUC_UNIT_MS, nullptr, nullptr, nullptr);
  MarkGUCPrefixReserved("dperm");
  // The ledger writer's request kinds besides a charge, registered in every
  // process that loads the library: the dynamic writer loads it, the
  // persistent writer inherits the postmaster's table.
  dperm::pg::RegisterLedgerHandler(dperm::pg::kRecordModelVersion, dperm::pg::ServeModelRecord);
  dperm::pg::RegisterLedgerHandler(dperm::pg::kRecordEvaluation, dperm::pg::ServeModelRecord);
  // With shared_preload_libraries = dperm: the persistent ledger writer.
  dperm::pg::InitPersistentLedgerWriter();
  dperm::SetInterruptProbe(&dperm::pg::InterruptIsPending);
  // dperm.progress: in-memory training reports its iterations.
  dperm::SetIterationHook(&dperm::pg::ProgressIterations);
  // dperm.progress: a release's row ends with its (sub)transaction.
  dperm::pg::InitProgress();
  // Every statement with a training aggregate is checked before it runs.
  dperm::pg::InstallReleaseGuard();
}
