// dperm.train's streaming mode (docs/design.md section 5): the release
// pipeline (release.cpp) plans and charges once, exactly as for a release in
// memory, then runs the plan's mechanism with every full-batch gradient
// taken by one pass of a per-pass aggregate (pass_aggregate.cpp) through
// SPI. Memory is O(dim), not O(n); the passes may use parallel workers, and
// on a Citus table the workers (each pass signed, citus.cpp).
//
// The passes run like dperm.train's in-memory query: as the reading role
// (the relation's owner for a protected relation, the caller otherwise),
// under SECURITY_RESTRICTED_OPERATION, search_path pinned, dperm's aggregate
// by schema with exact argument types, read-only so that every pass reads
// the statement's snapshot (the n the plan was made for).
//
// The core's training loop calls back into PostgreSQL for each pass. That
// crossing is the PostgreSQL -> C++ direction of the seam (boundary.hpp):
// RunPass holds no C++ object and runs under CallPostgres, which turns a
// PostgreSQL error into a PostgresError; once every C++ frame has unwound,
// the pipeline's RunKeyed re-raises the original error.
#include "dperm/model/model.hpp"
#include "dperm/release/streaming.hpp"
#include "dperm/algorithms/registry.hpp"

#include "arrays.hpp"
#include "citus.hpp"
#include "internal_sql.hpp"
#include "progress.hpp"
#include "streaming.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/guc.h"
}

namespace dperm::pg {

// What one pass needs: plain data only (it crosses the guard).
struct PassQuery {
  Oid reader;
  const char* sql;
  SPIPlanPtr plan;       // sql prepared by the first pass, run by every pass
                         // (in the SPI connection's memory, freed with it)
  double spec_values[kPassSpecSize];  // with_loss set per pass
  bool sign;             // a Citus table: each pass carries a token for its w
  int state_size;
  MemoryContext scratch; // reset after every pass
  int64 passes;          // passes run
};

namespace {

// Runs one pass at w (dim values) and copies its sums to `state`. Called
// only under CallPostgres: no C++ object lives in this frame, so the
// longjmp of a PostgreSQL error skips no destructor.
void RunPass(PassQuery* q, const double* w, int dim, bool with_loss, double* state) {
  MemoryContext caller = CurrentMemoryContext;
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
    RunInternalPlan(q->reader, &q->plan, q->sql, 2, types, args, SPI_OK_SELECT, true,
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

// The core's view of a pass: RunPass under the guard, its PostgreSQL error
// thrown as a PostgresError so that the training loop unwinds normally.
class SpiPassRunner final : public PassRunner {
 public:
  explicit SpiPassRunner(PassQuery* query) : query_(query) {}
  void Run(const Eigen::VectorXd& w, bool with_loss, double* state) override {
    PassQuery* q = query_;
    const double* values = w.data();
    int dim = static_cast<int>(w.size());
    CallPostgres([=] { RunPass(q, values, dim, with_loss, state); });
  }

 private:
  PassQuery* query_;
};

}  // namespace

PassQuery* PreparePasses(const PassSource& source, const dperm::Plan& plan) {
  PassQuery* q = static_cast<PassQuery*>(palloc0(sizeof(PassQuery)));
  q->reader = source.reader;
  q->sql = source.sql;
  q->sign = source.sign;
  dperm::PassSpec spec = dperm::PassSpecFor(plan);
  dperm::EncodePassSpec(spec, q->spec_values);
  q->state_size = dperm::PassStateSize(spec);
  q->scratch = AllocSetContextCreate(CurrentMemoryContext, "dperm streaming pass",
                                     ALLOCSET_DEFAULT_SIZES);
  return q;
}

std::vector<double> TrainByPasses(const dperm::Plan& plan, PassQuery* query,
                                  dperm::SecureRng& rng) {
  SpiPassRunner runner(query);
  int64_t count = 0;
  std::vector<double> w = dperm::TrainStreaming(plan, runner, rng, &count);
  query->passes = count;
  return w;
}

void EndPasses(PassQuery* query, const dperm::Plan& plan) {
  MemoryContextDelete(query->scratch);
  elog(DEBUG1, "dperm: streaming release of %s in " INT64_FORMAT " passes",
       AlgorithmName(plan.algorithm), query->passes);
}

Datum TrainStreamingRelease(const StreamingRequest& r, bool* isnull) {
  *isnull = true;
  // An empty relation releases nothing, as in memory (n = 0 is public).
  if (r.n == 0) return (Datum)0;
  ReleaseRequest release = {r.loss, r.parsed, r.options, r.n, r.d, r.relations, r.n_relations,
                            /*precharged=*/false, /*reports=*/true, r.unit_column, r.unit_rows,
                            r.unit_count_epsilon};
  PassSource passes = {r.reader, r.pass_sql, r.sign_passes};
  Datum model = ReleaseFromPasses(release, passes);
  *isnull = false;
  return model;
}

}  // namespace dperm::pg
