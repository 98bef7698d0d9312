// dperm.progress: each backend's release in its progress slot of
// the backend status array, and the set-returning function behind the view.
//
// The slot. PostgreSQL 15 gives each backend one progress slot: a command
// type, a relation and 20 int64 parameters, written by
// pgstat_progress_start_command/_update_param/_end_command into the shared
// backend status array, read by pg_stat_get_progress_info('VACUUM' | 'COPY'
// | ...). Extensions have no command type of their own; Citus reports as
// VACUUM with a magic number in parameter 0, so its rows also appear in
// pg_stat_progress_vacuum (relid set, phase NULL) for every DBA and
// monitoring tool that reads that view — and so would dperm's in any of the
// six system views (docs/user-guide.md, "Progress of a release"). dperm writes the command type
// kProgressCommand = 7 instead, which no pg_stat_get_progress_info name
// selects: no pg_stat_progress_* view lists dperm's rows, and
// dperm.progress_info() reads the slots itself, with the same permission
// rule as pg_stat_get_progress_info (HAS_PGSTAT_PERMISSIONS, pgstatfuncs.c).
// PostgreSQL 15's ProgressCommandType ends at PROGRESS_COMMAND_COPY = 6, so 7
// lies within the enum's range of values (C++17 [dcl.enum]/8: the values of
// a 3-bit field); parameter 0 holds kProgressMagic as well, should another
// extension pick 7 too. Nothing needs shared_preload_libraries.
//
// Ending. A release's row ends on every path: the code that began it ends
// it when the release returns; a transaction (or subtransaction) that aborts
// — an error, a cancel, statement_timeout — ends it in the transaction
// callbacks below, as does the end of the transaction (PostgreSQL's abort
// clears the slot too, but only the callbacks reset this backend's state:
// without them it would never report again); an in-memory aggregate whose
// final function never runs (a LIMIT stops a grouped scan) ends it when its
// memory context is reset (aggregate.cpp).
//
// What the view shows: the relation and the options' algorithm (public:
// the caller names them), the phase, the pass and the passes planned (from
// the plan, which depends on the options, n and d only; while an in-memory
// release trains, the iterations done of those its loop plans, reported by
// the core's loops whose length the plan fixes), and rows_read,
// which reaches n: public under replace-one neighbours (docs/user-guide.md, "The privacy model": "n is
// public"), and shown only to roles with the privileges of the releasing
// session's role, and to pg_read_all_stats. No model value, gradient or loss is ever written here.
#include "release/progress.hpp"

extern "C" {
#include "access/xact.h"
#include "catalog/pg_authid_d.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/acl.h"
#include "utils/backend_progress.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
}

namespace dperm::pg {

ProgressState g_progress;

namespace {

// The progress command type of a dperm release (see above).
constexpr ProgressCommandType kProgressCommand = static_cast<ProgressCommandType>(7);
static_assert(PROGRESS_COMMAND_COPY == 6,
              "dperm's progress command 7 must lie past PostgreSQL's own command types");
constexpr int64 kProgressMagic = 0x6470726D50524F47;  // "dprmPROG"

// The parameters of the slot.
enum Param : int {
  kMagic = 0,
  kLoss,       // LossKind + 1
  kMode,       // ProgressMode (0: not chosen yet)
  kAlgorithm,  // Algorithm + 1 (0: not chosen yet)
  kPhase,      // ProgressPhase
  kPass,
  kPassesPlanned,  // 0: not known yet
  kRowsRead,
  kStartedAt,  // TimestampTz
};

void Set(Param param, int64 value) {
  if (g_progress.active) pgstat_progress_update_param(param, value);
}

// Whether the current role may see the slots of backends of `role`: the
// rule pg_stat_get_progress_info applies (HAS_PGSTAT_PERMISSIONS).
bool MaySee(Oid role) {
  return has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS) ||
         has_privs_of_role(GetUserId(), role);
}

// The view's name of a phase.
const char* PhaseName(int64 phase) {
  switch (static_cast<ProgressPhase>(phase)) {
    case ProgressPhase::kCountingRows: return "counting rows";
    case ProgressPhase::kReadingRows: return "reading rows";
    case ProgressPhase::kCharging: return "charging the ledger";
    case ProgressPhase::kTraining: return "training";
  }
  return "starting";
}

void EndOnXact(XactEvent event, void*) {
  if (event == XACT_EVENT_ABORT || event == XACT_EVENT_COMMIT || event == XACT_EVENT_PREPARE)
    ProgressEnd(g_progress.generation);
}

// A subtransaction that aborts ends a release begun inside it (or inside a
// subtransaction of it: their ids are larger).
void EndOnSubXact(SubXactEvent event, SubTransactionId sub, SubTransactionId, void*) {
  if (event == SUBXACT_EVENT_ABORT_SUB && g_progress.active && g_progress.subxact >= sub)
    ProgressEnd(g_progress.generation);
}

}  // namespace

uint64 ProgressBegin(Oid relid, LossKind loss) noexcept {
  if (g_progress.active || MyBEEntry == nullptr || !pgstat_track_activities ||
      MyBEEntry->st_progress_command != PROGRESS_COMMAND_INVALID)
    return 0;
  static uint64 generations = 0;
  pgstat_progress_start_command(kProgressCommand, relid);
  g_progress = ProgressState();
  g_progress.active = true;
  g_progress.generation = ++generations;
  g_progress.subxact = GetCurrentSubTransactionId();
  const int params[] = {kMagic, kLoss, kStartedAt};
  const int64 values[] = {kProgressMagic, static_cast<int64>(loss) + 1, GetCurrentTimestamp()};
  pgstat_progress_update_multi_param(3, params, values);
  return g_progress.generation;
}

void ProgressEnd(uint64 generation) noexcept {
  if (!g_progress.active || generation != g_progress.generation) return;
  g_progress.active = false;
  pgstat_progress_end_command();
}

void ProgressSetMode(ProgressMode mode) noexcept { Set(kMode, static_cast<int64>(mode)); }
void ProgressSetPhase(ProgressPhase phase) noexcept { Set(kPhase, static_cast<int64>(phase)); }
void ProgressSetAlgorithm(Algorithm algorithm) noexcept {
  Set(kAlgorithm, static_cast<int64>(algorithm) + 1);
}
void ProgressSetPassesPlanned(int64 passes) noexcept { Set(kPassesPlanned, passes); }

void ProgressStartPass() noexcept {
  if (!g_progress.active) return;
  g_progress.rows_pass = 0;
  g_progress.countdown = kProgressRowBatch;
  Set(kPass, ++g_progress.pass);
}

void ProgressEndPass(int64 rows) noexcept {
  if (!g_progress.active) return;
  g_progress.rows_done += rows;
  g_progress.rows_pass = 0;
  g_progress.countdown = kProgressRowBatch;
  Set(kRowsRead, g_progress.rows_done);
}

void ProgressStartIterations() noexcept {
  if (!g_progress.active) return;
  g_progress.iterations = true;
  g_progress.iterations_planned = 0;
  g_progress.iterations_shown = -1;
  // 0 of NULL until the loop reports (a mechanism without a loop of planned
  // length, rrpsgd's, never does).
  const int params[] = {kPass, kPassesPlanned};
  const int64 values[] = {0, 0};
  pgstat_progress_update_multi_param(2, params, values);
}

void ProgressIterations(int64_t done, int64_t planned) noexcept {
  if (!g_progress.active || !g_progress.iterations) return;
  if (planned != g_progress.iterations_planned) {
    g_progress.iterations_planned = planned;
    g_progress.iterations_shown = -1;
    Set(kPassesPlanned, Min(planned, int64(PG_INT32_MAX)));
  }
  // Every planned / 1000 iterations (a shared-memory write each).
  int64 step = Max(planned / 1000, int64(1));
  if (done == planned || done < g_progress.iterations_shown ||
      done - g_progress.iterations_shown >= step) {
    g_progress.iterations_shown = done;
    Set(kPass, Min(done, int64(PG_INT32_MAX)));
  }
}

void ProgressPublishBatch() noexcept {
  g_progress.rows_pass += kProgressRowBatch;
  g_progress.countdown = kProgressRowBatch;
  Set(kRowsRead, g_progress.rows_done + g_progress.rows_pass);
}

void InitProgress() {
  RegisterXactCallback(EndOnXact, nullptr);
  RegisterSubXactCallback(EndOnSubXact, nullptr);
}

}  // namespace dperm::pg

using dperm::Algorithm;
using dperm::LossKind;
using namespace dperm::pg;

// dperm.progress_info(): one row per backend reporting a dperm release that
// the current role may see (backends of roles whose privileges it has, or
// every backend for pg_read_all_stats), as pg_stat_get_progress_info shows
// progress. Codes become names here; 0 (not chosen yet) becomes NULL.
DPERM_FUNCTION(dperm_progress_info) {
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  int backends = pgstat_fetch_stat_numbackends();
  for (int i = 1; i <= backends; i++) {
    LocalPgBackendStatus* local = pgstat_fetch_stat_local_beentry(i);
    if (local == nullptr) continue;
    const PgBackendStatus* be = &local->backendStatus;
    const int64* p = be->st_progress_param;
    if (be->st_progress_command != kProgressCommand || p[kMagic] != kProgressMagic) continue;
    if (!MaySee(be->st_userid)) continue;
    Datum values[11];
    bool nulls[11] = {false};
    values[0] = Int32GetDatum(be->st_procpid);
    values[1] = ObjectIdGetDatum(be->st_databaseid);
    values[2] = ObjectIdGetDatum(be->st_progress_command_target);
    nulls[2] = !OidIsValid(be->st_progress_command_target);
    values[3] = CStringGetTextDatum(LossName(static_cast<LossKind>(p[kLoss] - 1)));
    values[4] = CStringGetTextDatum(
        p[kMode] == static_cast<int64>(ProgressMode::kStreaming) ? "streaming" : "in_memory");
    nulls[4] = p[kMode] == 0;
    values[5] = CStringGetTextDatum(AlgorithmName(static_cast<Algorithm>(p[kAlgorithm] - 1)));
    nulls[5] = p[kAlgorithm] == 0;
    values[6] = CStringGetTextDatum(PhaseName(p[kPhase]));
    values[7] = Int32GetDatum(static_cast<int32>(p[kPass]));
    values[8] = Int32GetDatum(static_cast<int32>(p[kPassesPlanned]));
    nulls[8] = p[kPassesPlanned] == 0;
    values[9] = Int64GetDatum(p[kRowsRead]);
    values[10] = TimestampTzGetDatum(p[kStartedAt]);
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
  }
  return (Datum)0;
}
