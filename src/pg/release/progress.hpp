// dperm.progress: what a backend's release is doing — the
// relation, the algorithm, the phase, the pass and the rows read — written
// into the backend's own progress slot of PostgreSQL's backend status array
// (the pgstat progress API that VACUUM and COPY use) and read back by
// dperm.progress_info() for the view. progress.cpp explains the slot.
//
// One release per backend is reported: the first to begin while the slot is
// free (dperm.train, or a dp_logreg/dp_huber/dp_softmax aggregate called
// directly). A release begun under a command that reports progress itself
// (COPY (SELECT dp_logreg(...) ...) TO ...) is not reported. None of these
// functions raises an error, so C++ frames may call them.
#pragma once
#include "dperm/options/options.hpp"

#include "base/boundary.hpp"

namespace dperm::pg {

// How a release reads its rows (the view's `mode`).
enum class ProgressMode : int64 { kInMemory = 1, kStreaming = 2 };

// What a release is doing (the view's `phase`).
enum class ProgressPhase : int64 {
  kCountingRows = 1,  // dperm.train: n and d, before anything else
  kReadingRows,       // the in-memory aggregate buffers the rows
  kCharging,          // the ledger writer checks the budgets and charges
  kTraining,          // in memory: over the buffer; streaming: the passes
};

// rows_read is published every kProgressRowBatch rows a backend reads (and
// at the end of each pass): a countdown per row, a shared-memory write per
// batch.
constexpr int64 kProgressRowBatch = 100000;

// This backend's reporting state (plain data; parallel workers start with
// it zeroed, so they never report).
struct ProgressState {
  bool active = false;
  uint64 generation = 0;         // which release is reported; 0 = none
  SubTransactionId subxact = 0;  // where it began (an abort there ends it)
  int64 pass = 0;
  int64 rows_done = 0;  // rows of the passes that ended
  int64 rows_pass = 0;  // rows this backend published during the current pass
  int64 countdown = kProgressRowBatch;
  bool iterations = false;       // in-memory training: pass counts iterations
  int64 iterations_planned = 0;  // of the loop that reports (0: none yet)
  int64 iterations_shown = -1;   // the last count published
};
extern ProgressState g_progress;

// Begins reporting a release of this backend on `relid`; returns its
// generation, or 0 when the slot is taken (or track_activities is off).
uint64 ProgressBegin(Oid relid, LossKind loss) noexcept;

// Ends the release `generation` if it is still the one reported (so a
// late callback never ends a newer release).
void ProgressEnd(uint64 generation) noexcept;

void ProgressSetMode(ProgressMode mode) noexcept;
void ProgressSetPhase(ProgressPhase phase) noexcept;
void ProgressSetAlgorithm(Algorithm algorithm) noexcept;
void ProgressSetPassesPlanned(int64 passes) noexcept;

// A pass over the rows begins (pass + 1), or ends having read `rows` rows
// in all processes (the leader knows a pass's total only at its end).
void ProgressStartPass() noexcept;
void ProgressEndPass(int64 rows) noexcept;

// In-memory training begins: from now on pass of passes_planned shows the
// iterations done of those planned by the training loop (ProgressIterations).
void ProgressStartIterations() noexcept;

// The core's iteration hook (interrupt.hpp, installed by _PG_init):
// publishes `done` of `planned` while ProgressStartIterations holds, at most
// about a thousand times per loop (and always its first and last count).
void ProgressIterations(int64_t done, int64_t planned) noexcept;

// Publishes rows_read one batch further (ProgressCountRow's slow path).
void ProgressPublishBatch() noexcept;

// One row read by this backend: a flag test and a countdown.
inline void ProgressCountRow() noexcept {
  if (g_progress.active && --g_progress.countdown == 0) ProgressPublishBatch();
}

// Registers the transaction callbacks that end a release's row when its
// (sub)transaction aborts or the transaction ends (from _PG_init).
void InitProgress();

}  // namespace dperm::pg
