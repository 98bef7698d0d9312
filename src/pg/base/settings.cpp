// dperm's settings (settings.hpp): the variables and their definitions, with
// who may change each and why.
#include "dperm/rows/row_parts.hpp"

#include <climits>

#include "base/settings.hpp"

extern "C" {
#include "access/parallel.h"
#include "miscadmin.h"
#include "utils/guc.h"
}

namespace dperm::pg {

bool g_allow_seed = false;
int g_max_coefficients = 1000000;
int g_max_buffer_kb = 256 * 1024;
bool g_streaming_spill = true;
int g_max_release_memory_kb = 1024 * 1024;
int g_training_threads = 2;

namespace {

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
  GUC_check_errdetail(
      "Only a superuser can raise dperm.max_release_memory above %d kB, "
      "the value the server, database or role settings give.",
      g_release_memory_ceiling_kb);
  return false;
}

// dperm.training_threads: the core's limit follows the setting.
void AssignTrainingThreads(int value, void*) { dperm::SetRowThreadLimit(value); }

}  // namespace

void DefineSettings() {
  DefineCustomBoolVariable("dperm.allow_seed",
                           "Lets the seed option fix the noise of a release (for tests only).",
                           "Seeded releases are reproducible and therefore not private; they are "
                           "marked \"private\": false.",
                           &g_allow_seed, false, PGC_SUSET, 0, nullptr, nullptr, nullptr);
  DefineCustomIntVariable("dperm.max_coefficients", "The most coefficients one release may have.",
                          "Checked from the options and the features' dimension before training: "
                          "a softmax model has classes * (d + 1) coefficients, and its training "
                          "holds several copies of them.",
                          &g_max_coefficients, 1000000, 1, INT_MAX, PGC_SUSET, 0, nullptr, nullptr,
                          nullptr);
  // Superuser-only, like temp_file_limit: it bounds a backend's memory, a
  // server resource, and a role that could raise it could make any backend
  // allocate many gigabytes. It is not a privacy parameter (the refusal
  // depends on n and d only); a role that wants streaming below the limit
  // passes mode => 'streaming' to dperm.train.
  DefineCustomIntVariable(
      "dperm.max_buffer", "The most row data an in-memory training aggregate may buffer.",
      "dp_logreg, dp_huber and dp_softmax refuse (SQLSTATE 54000) when n (d + 1) "
      "float8 values pass it; dperm.train streams over relations estimated to "
      "need more.",
      &g_max_buffer_kb, 256 * 1024, 64, INT_MAX, PGC_SUSET, GUC_UNIT_KB, nullptr, nullptr, nullptr);
  // Any role may lower it; only a superuser may raise it (CheckMaxReleaseMemory):
  // like max_buffer it bounds a backend's memory, a server resource.
  DefineCustomIntVariable(
      "dperm.max_release_memory",
      "The most memory one release's training may need, besides its rows.",
      "Estimated from n, d, the classes and the options before the release is "
      "charged (dp_explain shows it as memory_bytes); a release above it is refused "
      "with SQLSTATE 54000 and nothing is charged. Any role may lower it; only a "
      "superuser may raise it.",
      &g_max_release_memory_kb, 1024 * 1024, 1024, INT_MAX, PGC_USERSET, GUC_UNIT_KB,
      &CheckMaxReleaseMemory, nullptr, nullptr);
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
      &g_training_threads, 2, 1, 64, PGC_SUSET, 0, nullptr, &AssignTrainingThreads, nullptr);
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
      &g_streaming_spill, true, PGC_USERSET, 0, nullptr, nullptr, nullptr);
}

}  // namespace dperm::pg
