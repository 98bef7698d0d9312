// Module load: magic block, settings, and the core's interrupt probe.
#include "dperm/util/interrupt.hpp"
#include "dperm/util/row_parts.hpp"

#include <climits>
#include <cstring>

#include "citus.hpp"
#include "ledger.hpp"
#include "ledger_writer.hpp"
#include "models.hpp"
#include "module.hpp"
#include "pass_aggregate.hpp"
#include "persistent_ledger_writer.hpp"
#include "progress.hpp"
#include "release_guard.hpp"

extern "C" {
#include "access/parallel.h"
#include "miscadmin.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;
void _PG_init(void);
}

namespace dperm::pg {

bool g_allow_seed = false;
int g_max_coefficients = 1000000;
int g_max_buffer_kb = 256 * 1024;
bool g_streaming_spill = true;
int g_max_release_memory_kb = 1024 * 1024;
int g_training_threads = 2;

namespace {
// True when a cancel or termination is pending: the interrupts that end a
// query. Reads flags only and never raises, so the core may call it.
bool InterruptIsPending() {
  return InterruptPending && (QueryCancelPending || ProcDiePending);
}
// The value of dperm.max_release_memory that the server, a database or a
// role setting gave (an administrator's); only a superuser sets more.
int g_release_memory_ceiling_kb = 1024 * 1024;

// dperm.max_release_memory: any role may lower it for its session (SET, a
// function's SET clause), only a superuser may raise it above the ceiling.
// Values from the configuration file, ALTER SYSTEM, and database or role
// settings (validated when they were stored: a non-superuser's ALTER ROLE
// ... SET is checked here as PGC_S_TEST) become the ceiling. A parallel
// worker takes its leader's value, which passed here already.
bool CheckMaxReleaseMemory(int* value, void**, GucSource source) {
  if (source <= PGC_S_DATABASE_USER) {
    g_release_memory_ceiling_kb = *value;
    return true;
  }
  if (*value <= g_release_memory_ceiling_kb || InitializingParallelWorker || superuser())
    return true;
  GUC_check_errcode(ERRCODE_INSUFFICIENT_PRIVILEGE);
  GUC_check_errdetail("Only a superuser can raise dperm.max_release_memory above %d kB, "
                      "the value the server, database or role settings give.",
                      g_release_memory_ceiling_kb);
  return false;
}

// dperm.training_threads: the core's limit follows the setting.
void AssignTrainingThreads(int value, void*) { dperm::SetRowThreadLimit(value); }

// dperm.pass_key: empty (not configured) or at least 32 characters.
bool CheckPassKey(char** value, void**, GucSource) {
  if (*value == nullptr || (*value)[0] == '\0' || strlen(*value) >= 32) return true;
  GUC_check_errdetail("dperm.pass_key needs at least 32 characters.");
  return false;
}
}  // namespace

}  // namespace dperm::pg

void _PG_init(void) {
  DefineCustomBoolVariable(
      "dperm.allow_seed",
      "Lets the seed option fix the noise of a release (for tests only).",
      "Seeded releases are reproducible and therefore not private; they are "
      "marked \"private\": false.",
      &dperm::pg::g_allow_seed, false, PGC_SUSET, 0, nullptr, nullptr, nullptr);
  DefineCustomIntVariable(
      "dperm.max_coefficients",
      "The most coefficients one release may have.",
      "Checked from the options and the features' dimension before training: "
      "a softmax model has classes * (d + 1) coefficients, and its training "
      "holds several copies of them.",
      &dperm::pg::g_max_coefficients, 1000000, 1, INT_MAX, PGC_SUSET, 0, nullptr, nullptr,
      nullptr);
  // Superuser-only, like temp_file_limit: it bounds a backend's memory, a
  // server resource, and a role that could raise it could make any backend
  // allocate many gigabytes. It is not a privacy parameter (the refusal
  // depends on n and d only); a role that wants streaming below the limit
  // passes mode => 'streaming' to dperm.train.
  DefineCustomIntVariable(
      "dperm.max_buffer",
      "The most row data an in-memory training aggregate may buffer.",
      "dp_logreg, dp_huber and dp_softmax refuse (SQLSTATE 54000) when n (d + 1) "
      "float8 values pass it; dperm.train streams over relations estimated to "
      "need more.",
      &dperm::pg::g_max_buffer_kb, 256 * 1024, 64, INT_MAX, PGC_SUSET, GUC_UNIT_KB, nullptr,
      nullptr, nullptr);
  // Any role may lower it; only a superuser may raise it (CheckMaxReleaseMemory):
  // like max_buffer it bounds a backend's memory, a server resource.
  DefineCustomIntVariable(
      "dperm.max_release_memory",
      "The most memory one release's training may need, besides its rows.",
      "Estimated from n, d, the classes and the options before the release is "
      "charged (dp_explain shows it as memory_bytes); a release above it is refused "
      "with SQLSTATE 54000 and nothing is charged. Any role may lower it; only a "
      "superuser may raise it.",
      &dperm::pg::g_max_release_memory_kb, 1024 * 1024, 1024, INT_MAX, PGC_USERSET,
      GUC_UNIT_KB, &dperm::pg::CheckMaxReleaseMemory, nullptr, nullptr);
  // Superuser-only, like dperm.max_buffer: it sets how many cores one
  // backend may keep busy, a server resource. The threads exist only during
  // a full pass over the rows and run no PostgreSQL code (row_parts.hpp);
  // the model is the same bits for every value (exact sums).
  DefineCustomIntVariable(
      "dperm.training_threads",
      "Threads one in-memory release may use for its passes over the rows.",
      "Full gradient passes of in-memory training (dp_gd, objective perturbation, "
      "the other full-batch solvers) split the rows across this many threads of the "
      "backend; passes too small to repay a thread use fewer. The released model does "
      "not depend on it.",
      &dperm::pg::g_training_threads, 2, 1, 64, PGC_SUSET, 0, nullptr,
      &dperm::pg::AssignTrainingThreads, nullptr);
  // Any role: it changes where a streaming release reads its later passes
  // from, never what they sum (the same model bits), and the file it writes
  // is bounded by temp_file_limit like any sort's.
  DefineCustomBoolVariable(
      "dperm.streaming_spill",
      "Whether a streaming release keeps its rows in a temporary file after the first pass.",
      "The first pass of dperm.train's streaming mode then runs serially and writes n (d + 1) "
      "float8 values to a temporary file (temp_tablespaces, at most half of temp_file_limit; "
      "else the query runs every pass), which the later passes read instead of running the "
      "query again. Not on Citus tables. The released model does not depend on it.",
      &dperm::pg::g_streaming_spill, true, PGC_USERSET, 0, nullptr, nullptr, nullptr);
  // Not a user setting: dperm.train turns it on around each streaming pass
  // (streaming.cpp) and the per-pass aggregates refuse without it. SUSET,
  // so no other role can set it (a function's SET clause runs with its
  // caller's rights); hidden, and refused in configuration files.
  DefineCustomBoolVariable(
      "dperm.internal_pass",
      "On only while dperm.train runs a streaming pass.",
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
      GUC_SUPERUSER_ONLY | GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE, &dperm::pg::CheckPassKey, nullptr, nullptr);
  DefineCustomIntVariable(
      "dperm.ledger_wait_timeout",
      "How long a release waits for a ledger writer to take its charge.",
      "Without shared_preload_libraries = dperm: how long to wait for a free "
      "background worker slot; with it: how long to wait for the persistent "
      "ledger writer to take the request. Then the release fails with "
      "SQLSTATE 53000 and no model. Also how long a release waits for its "
      "turn behind other releases charged to the same relation, and retries "
      "while another transaction holds a budget row it is charged to; then it "
      "fails with SQLSTATE 55P03, uncharged. 0 fails at once.",
      &dperm::pg::g_ledger_wait_timeout_ms, 30000, 0, INT_MAX, PGC_USERSET, GUC_UNIT_MS,
      nullptr, nullptr, nullptr);
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
