// dperm.train's streaming mode (docs/design.md section 5): the release
// pipeline (release.cpp) plans and charges once, exactly as for a release in
// memory, then runs the plan's mechanism with every full-batch gradient
// taken by one pass of a per-pass aggregate (pass_aggregate.cpp) through
// SPI. Memory is O(dim), not O(n); the passes may use parallel workers, and
// on a Citus table the workers (each pass signed, citus.cpp).
//
// The passes run like dperm.train's in-memory read: as the reading role
// (the relation's owner for a protected relation, the caller otherwise),
// under SECURITY_RESTRICTED_OPERATION, search_path pinned, dperm's aggregate
// by schema with exact argument types, read-only so that every pass reads
// the statement's snapshot (the n the plan was made for).
//
// The relation is read once (docs/design.md section 5): the first pass
// reads its rows into a temporary file, the row buffer of the in-memory
// read (row_buffer.hpp), and every pass adds the file's chunks with the
// in-memory kernels (PassAddRecords: the same sums, exact, as the per-pass
// aggregate's on the same rows). Not on Citus (the workers hold the rows),
// nor when the file would pass half of temp_file_limit: then every pass
// runs the per-pass aggregate's query.
//
// The core's training loop calls back into PostgreSQL for each pass. That
// crossing is the PostgreSQL -> C++ direction of the seam (boundary.hpp):
// RunPass holds no C++ object and runs under CallPostgres, which turns a
// PostgreSQL error into a PostgresError; once every C++ frame has unwound,
// the pipeline's RunKeyed re-raises the original error.
#include "dperm/release/streaming.hpp"
#include "dperm/algorithms/registry.hpp"

#include <algorithm>

#include "base/arrays.hpp"
#include "base/citus.hpp"
#include "base/internal_sql.hpp"
#include "release/progress.hpp"
#include "release/row_buffer.hpp"
#include "base/settings.hpp"
#include "release/streaming.hpp"

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
  SPIPlanPtr plan;                    // sql prepared by the first pass, run by every pass
                                      // (in the SPI connection's memory, freed with it)
  double spec_values[kPassSpecSize];  // this pass's spec (EncodePassSpec)
  bool sign;                          // a Citus table: each pass carries a token for its w
  int state_size;                     // this pass's PassStateSize
  MemoryContext scratch;              // reset after every pass
  int64 passes;                       // passes run
  // The rows in a temporary file (dperm.streaming_spill), read by the
  // first pass and added by every pass; unused when `spills` is false.
  RowQuery rows_query;
  RowBuffer rows;
  bool spills;
  bool read;  // the file holds the rows
};

namespace {

// Runs one pass of q->spec_values at w (dim values) and copies its sums to
// `state` (q->state_size values). Called only under CallPostgres: no C++
// object lives in this frame, so the longjmp of a PostgreSQL error skips
// no destructor.
void RunPass(PassQuery* q, const double* w, int dim, double* state) {
  MemoryContext caller = CurrentMemoryContext;
  MemoryContextSwitchTo(q->scratch);
  Oid types[2] = {FLOAT8ARRAYOID, FLOAT8ARRAYOID};
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
  set_config_option("dperm.internal_pass", "on", PGC_SUSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0,
                    false);
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

// The first pass's read: every row of the query into the file, serially
// in this backend (ReadRows), counted in dperm.progress as it goes.
// Called only under CallPostgres, as RunPass.
void ReadPassRows(PassQuery* q) {
  ProgressStartPass();
  ReadRows(q->rows_query, &q->rows, /*reports=*/true);
  q->read = true;
}

// Reads chunk [offset, offset + bytes) of the file (under CallPostgres).
void ReadChunk(PassQuery* q, off_t offset, int bytes, int64* records) {
  *records = ReadRowChunk(&q->rows, offset, bytes);
}

// A pass over the file: each chunk read under the guard, then added by the
// core (PassAddRecords: the same sums, exact, as the per-pass transition's
// PassAddRow on the same rows in a pass of the query).
void FilePass(PassQuery* q, const dperm::PassSpec& spec, const double* w, double* state) {
  if (!q->read) {
    CallPostgres([=] { ReadPassRows(q); });  // the pass begun there goes on here
  } else {
    ProgressStartPass();
  }
  const off_t chunk = RowChunkBytes(&q->rows);
  for (off_t offset = 0; offset < q->rows.bytes; offset += chunk) {
    dperm::CheckInterrupt();
    const int bytes = int(std::min<off_t>(chunk, q->rows.bytes - offset));
    int64 records = 0;
    CallPostgres([=, &records] { ReadChunk(q, offset, bytes, &records); });
    dperm::PassAddRecords(spec, w, q->rows.rows, records, state);
  }
  ProgressEndPass(static_cast<int64>(state[0]));
}

// The core's view of a pass: RunPass under the guard, its PostgreSQL error
// thrown as a PostgresError so that the training loop unwinds normally.
class SpiPassRunner final : public PassRunner {
 public:
  explicit SpiPassRunner(PassQuery* query) : query_(query) {}
  void Run(const dperm::PassSpec& spec, const Eigen::VectorXd& w, double* state) override {
    PassQuery* q = query_;
    const double* values = w.data();
    if (q->spills) {
      FilePass(q, spec, values, state);
      return;
    }
    dperm::EncodePassSpec(spec, q->spec_values);
    q->state_size = dperm::PassStateSize(spec);
    int dim = static_cast<int>(w.size());
    CallPostgres([=] { RunPass(q, values, dim, state); });
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
  // Not on a Citus table, whose rows the workers read. The rows stored as
  // the per-pass aggregate stores them (PassSpecFor: the plan's bounds and
  // classes).
  q->spills = !source.on_citus && g_streaming_spill && RowFileFits(plan.n, plan.d);
  if (q->spills) {
    q->rows_query = source.rows;
    OpenRowFile(&q->rows, plan.d, source.rule, plan.options, plan.classes);
  }
  q->scratch =
      AllocSetContextCreate(CurrentMemoryContext, "dperm streaming pass", ALLOCSET_DEFAULT_SIZES);
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
  if (query->spills) FreeRows(&query->rows);
  elog(DEBUG1, "dperm: streaming release of %s in " INT64_FORMAT " passes%s",
       AlgorithmName(plan.algorithm), query->passes,
       query->spills ? " over its temporary copy of the rows" : "");
  query->spills = false;
}

}  // namespace dperm::pg
