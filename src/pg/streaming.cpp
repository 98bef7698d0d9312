// dperm.train's streaming mode (DESIGN.md section 5, issue 12): plan and
// charge once, exactly as the in-memory path does, then run the plan's
// mechanism with every full-batch gradient taken by one pass of a per-pass
// aggregate (pass_aggregate.cpp) through SPI. Memory is O(dim), not O(n);
// the passes may use parallel workers.
//
// The passes run like dperm.train's in-memory query: as the reading role
// (the relation's owner for a protected relation, the caller otherwise),
// under SECURITY_RESTRICTED_OPERATION, search_path pinned, dperm's aggregate
// by schema with exact argument types, read-only so that every pass reads
// the statement's snapshot (the n the plan was made for).
//
// The core's training loop calls back into PostgreSQL for each pass. That
// crossing is guarded (STYLE.md, "pg_duckdb"): RunPassGuarded holds no C++
// object, runs the SPI call under PG_TRY, and turns a PostgreSQL error into
// a C++ exception carrying the copied ErrorData; once every C++ frame has
// unwound, the boundary re-throws the original error.
#include "dperm/accounting/budget.hpp"
#include "dperm/model/model.hpp"
#include "dperm/release/streaming.hpp"
#include "dperm/noise/random.hpp"
#include "dperm/algorithms/registry.hpp"

#include <cmath>
#include <ctime>

#include "dperm_pg.hpp"
#include "progress.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "port.h"
#include "utils/array.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
}

namespace dperm::pg {
namespace {

// A PostgreSQL error caught inside a pass, carried through the C++ frames.
struct PgPassError {
  ErrorData* data;
};

// What one pass needs: plain data only (it crosses the guard).
struct PassQuery {
  Oid reader;
  const char* sql;
  SPIPlanPtr* plan;      // sql prepared by the first pass, run by every pass
  double* spec_values;   // kPassSpecSize values; with_loss set per pass
  bool sign;             // a Citus table: each pass carries a token for its w
  int state_size;
  MemoryContext scratch; // reset after every pass
  MemoryContext outer;   // where a caught error is copied to
};

// Runs one pass at w (dim values) and copies its sums to `state`. Returns
// nullptr, or the copied error of a pass that failed. No C++ object lives
// in this frame, so the longjmp of a PostgreSQL error skips no destructor.
ErrorData* RunPassGuarded(const PassQuery* q, const double* w, int dim, bool with_loss,
                          double* state) {
  ErrorData* volatile error = nullptr;
  MemoryContext volatile caller = CurrentMemoryContext;
  PG_TRY();
  {
    MemoryContextSwitchTo(q->scratch);
    Oid types[2] = {FLOAT8ARRAYOID, FLOAT8ARRAYOID};
    q->spec_values[kPassSpecIndexWithLoss] = with_loss ? 1 : 0;
    Datum args[2] = {Float8ArrayDatum(w, dim), Float8ArrayDatum(q->spec_values, kPassSpecSize)};
    if (q->sign) {  // the spec, then this pass's token (citus.cpp)
      double signed_spec[kPassSpecSize + kPassTokenSize];
      memcpy(signed_spec, q->spec_values, sizeof(double) * kPassSpecSize);
      SignPass(signed_spec, w, dim, signed_spec + kPassSpecSize);
      args[1] = Float8ArrayDatum(signed_spec, kPassSpecSize + kPassTokenSize);
    }
    ProgressStartPass();  // dperm.progress
    // dperm.internal_pass on for this pass only (pass_aggregate.cpp).
    int level = NewGUCNestLevel();
    set_config_option("dperm.internal_pass", "on", PGC_SUSET, PGC_S_SESSION, GUC_ACTION_SAVE,
                      true, 0, false);
    // One generic plan for every pass; not on a Citus table, whose planner
    // cannot distribute a generic plan's parameters (each pass is planned
    // with its values there, as the test/citus.sh passes check).
    if (q->sign)
      RunInternalSql(q->reader, q->sql, 2, types, args, nullptr, SPI_OK_SELECT, true,
                     /*allow_parallel=*/true);
    else
      RunInternalPlan(q->reader, q->plan, q->sql, 2, types, args, SPI_OK_SELECT, true,
                      /*allow_parallel=*/true);
    AtEOXact_GUC(true, level);
    if (SPI_processed != 1) elog(ERROR, "dperm: a streaming pass returned no row");
    bool isnull;
    Datum sums = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
    if (isnull) elog(ERROR, "dperm: a streaming pass returned NULL");
    ArrayType* a = DatumGetArrayTypeP(sums);
    int n = ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a));
    if (ARR_HASNULL(a) || ARR_ELEMTYPE(a) != FLOAT8OID || (n != 0 && n != q->state_size))
      elog(ERROR, "dperm: a streaming pass returned a malformed state");
    // n = 0: no row was read; the core then reports the row count.
    if (n > 0) memcpy(state, ARR_DATA_PTR(a), sizeof(double) * n);
    // dperm.progress: the pass's rows, the workers' included.
    ProgressEndPass(n > 0 ? static_cast<int64>(state[0]) : 0);
    SPI_freetuptable(SPI_tuptable);
    MemoryContextSwitchTo(caller);
    MemoryContextReset(q->scratch);
  }
  PG_CATCH();
  {
    MemoryContextSwitchTo(q->outer);
    error = CopyErrorData();
    FlushErrorState();
    MemoryContextSwitchTo(caller);
  }
  PG_END_TRY();
  return error;
}

// The core's view of a pass: the guarded SPI call, its error rethrown as a
// C++ exception so that the training loop unwinds normally.
class SpiPassRunner final : public PassRunner {
 public:
  explicit SpiPassRunner(const PassQuery* query) : query_(query) {}
  void Run(const Eigen::VectorXd& w, bool with_loss, double* state) override {
    ErrorData* error =
        RunPassGuarded(query_, w.data(), static_cast<int>(w.size()), with_loss, state);
    if (error != nullptr) throw PgPassError{error};
  }

 private:
  const PassQuery* query_;
};

}  // namespace

Datum TrainStreamingRelease(const StreamingRequest& r, bool* isnull) {
  *isnull = true;
  // An empty relation releases nothing, as in memory (n = 0 is public).
  if (r.n == 0) return (Datum)0;
  const Options& o = r.parsed->options;
  // Everything up to the charge depends on the options and on (n, d) only.
  PgBox<dperm::Plan> plan(CurrentMemoryContext);
  PgBox<std::vector<double>> curve(CurrentMemoryContext);
  double memory = 0;
  RunCore([&] {
    plan.Emplace(dperm::PlanStreamingRelease(o, r.loss, r.n, r.d));
    curve.Emplace(dperm::ReleaseRdpCurve(*plan));
    memory = dperm::ReleaseMemoryBytes(*plan, true);
  });
  CheckReleaseMemory(memory, "the release");
  if (o.n_feature_names >= 0 && o.n_feature_names != r.d)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("feature_names has %d names, but the rows have %d features",
                           o.n_feature_names, r.d)));

  // dperm.progress: the mechanisms that stream (output_gd, dp_gd, dp_accmd)
  // take one full-batch gradient, so one pass, per iteration.
  ProgressSetAlgorithm(plan->algorithm);
  ProgressSetPassesPlanned(plan->iterations);
  ProgressSetPhase(ProgressPhase::kCharging);
  // Charged before any row is read for training: one charge, the in-memory
  // path's, whatever the number of passes.
  ChargeRelease(PlanCharge(*plan, o, *curve), r.relations, r.n_relations);
  ProgressSetPhase(ProgressPhase::kTraining);

  dperm::PassSpec spec = dperm::PassSpecFor(*plan);
  double spec_values[dperm::kPassSpecSize];
  dperm::EncodePassSpec(spec, spec_values);
  PassQuery query;
  query.reader = r.reader;
  query.sql = r.pass_sql;
  SPIPlanPtr pass_plan = nullptr;  // in the SPI connection's memory, freed with it
  query.plan = &pass_plan;
  query.spec_values = spec_values;
  query.sign = r.sign_passes;
  query.state_size = dperm::PassStateSize(spec);
  query.scratch = AllocSetContextCreate(CurrentMemoryContext, "dperm streaming pass",
                                        ALLOCSET_DEFAULT_SIZES);
  query.outer = CurrentMemoryContext;

  uint8 key[32];
  if (!o.has_seed && !pg_strong_random(key, sizeof key))
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                    errmsg("could not generate a random key for the noise")));
  dperm::ModelMeta meta;
  meta.created_at = NowIso8601();
  meta.options_json = JsonbText(r.options);
  meta.feature_names = r.parsed->feature_names;
  meta.seeded = o.has_seed;
  PgBox<std::vector<double>> w(CurrentMemoryContext);
  PgBox<std::string> json(CurrentMemoryContext);
  ErrorData* pass_error = nullptr;
  CoreError failure;
  int64 passes = 0;
  CaptureCore([&] {
    try {
      std::array<uint8_t, 32> k;
      memcpy(k.data(), key, sizeof key);
      dperm::SecureRng rng = o.has_seed ? dperm::SecureRng::FromSeed(o.seed) : dperm::SecureRng(k);
      SpiPassRunner runner(&query);
      int64_t count = 0;
      w.Emplace(dperm::TrainStreaming(*plan, runner, rng, &count));
      passes = count;
      json.Emplace(dperm::ModelJson(*plan, *w, meta));
    } catch (const PgPassError& e) {
      pass_error = e.data;
    }
  }, &failure);
  explicit_bzero(key, sizeof key);
  // Every C++ frame of the training loop has unwound: re-raise a pass's
  // PostgreSQL error as it was, or the core's.
  if (pass_error != nullptr) ReThrowError(pass_error);
  if (failure.raised) ReportCoreError(failure);
  MemoryContextDelete(query.scratch);
  elog(DEBUG1, "dperm: streaming release of %s in " INT64_FORMAT " passes",
       AlgorithmName(plan->algorithm), passes);
  *isnull = false;
  return MakeModelDatum(r.loss, r.d, plan->classes, o.fit_intercept, o.feature_bound,
                        plan->options.huber_delta, w->data(), json->c_str());
}

}  // namespace dperm::pg
