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

#include "settings.hpp"

#include <algorithm>

extern "C" {
#include "catalog/pg_type.h"
#include "commands/tablespace.h"
#include "executor/spi.h"
#include "storage/fd.h"
#include "utils/array.h"
#include "utils/guc.h"
#include "utils/wait_event.h"
}

namespace dperm::pg {

// The first pass's rows, record after record: the d features as the
// transition added them (sanitised and clipped) and the stored label, in
// a temporary file (temp_tablespaces; counted against temp_file_limit;
// deleted when the release ends or its transaction does).
struct RowSpill {
  File file;
  int d;
  int64 capacity;  // records in a chunk (the buffer)
  double* buffer;  // one chunk: what is written or read at a time
  int64 buffered;  // records in the buffer, not yet written
  int64 rows;      // records written or buffered
  off_t bytes;     // bytes in the file
  bool broken;     // a row of another shape came: the file is never read
};

RowSpill* g_row_spill = nullptr;

// What one pass needs: plain data only (it crosses the guard).
struct PassQuery {
  Oid reader;
  const char* sql;
  SPIPlanPtr plan;       // sql prepared by the first pass, run by every pass
                         // (in the SPI connection's memory, freed with it)
  double spec_values[kPassSpecSize];  // this pass's spec (EncodePassSpec)
  bool sign;             // a Citus table: each pass carries a token for its w
  int state_size;        // this pass's PassStateSize
  MemoryContext scratch; // reset after every pass
  int64 passes;          // passes run
  // Rows kept after the first pass (dperm.streaming_spill): nullptr when
  // every pass runs the query; `spilled` once the file holds exactly the
  // first pass's rows, which every later pass then reads instead.
  RowSpill* spill;
  bool spill_tried;
  bool spilled;
};

namespace {

const int kSpillChunkBytes = 8 << 20;

size_t RecordBytes(const RowSpill* s) { return sizeof(double) * (size_t(s->d) + 1); }

// Whether n records of d features fit the temporary file dperm may write:
// half of temp_file_limit (the rest for the statement's own sorts and
// hashes), from n and d only (public), never from the rows.
bool SpillFits(int64 n, int d) {
  if (temp_file_limit < 0) return true;
  const double bytes = double(n) * double(d + 1) * sizeof(double);
  return bytes <= double(temp_file_limit) * 1024.0 / 2;
}

RowSpill* NewSpill(int d) {
  RowSpill* s = static_cast<RowSpill*>(palloc0(sizeof(RowSpill)));
  s->d = d;
  s->capacity = std::max<int64>(1, kSpillChunkBytes / int64(RecordBytes(s)));
  s->buffer = static_cast<double*>(palloc(s->capacity * RecordBytes(s)));
  PrepareTempTablespaces();
  s->file = OpenTemporaryFile(false);
  return s;
}

void FreeSpill(RowSpill* s) {
  FileClose(s->file);
  pfree(s->buffer);
  pfree(s);
}

void FlushSpill(RowSpill* s) {
  const int bytes = int(s->buffered * RecordBytes(s));
  if (bytes == 0) return;
  errno = 0;
  const int written = FileWrite(s->file, reinterpret_cast<char*>(s->buffer), bytes, s->bytes,
                                WAIT_EVENT_BUFFILE_WRITE);
  if (written != bytes) {
    if (errno == 0) errno = ENOSPC;
    ereport(ERROR, (errcode_for_file_access(),
                    errmsg("could not write dperm's temporary copy of the rows: %m"),
                    errhint("Free space for temp_tablespaces, or SET dperm.streaming_spill = off.")));
  }
  s->bytes += bytes;
  s->buffered = 0;
}

// Reads `bytes` of the file at `offset` into the buffer.
void ReadSpill(RowSpill* s, off_t offset, int bytes) {
  errno = 0;
  if (FileRead(s->file, reinterpret_cast<char*>(s->buffer), bytes, offset,
               WAIT_EVENT_BUFFILE_READ) != bytes) {
    if (errno == 0) errno = EIO;
    ereport(ERROR, (errcode_for_file_access(),
                    errmsg("could not read dperm's temporary copy of the rows: %m")));
  }
}

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
  set_config_option("dperm.internal_pass", "on", PGC_SUSET, PGC_S_SESSION, GUC_ACTION_SAVE,
                    true, 0, false);
  // One generic plan for every pass; not on a Citus table, whose planner
  // cannot distribute a generic plan's parameters (each pass is planned
  // with its values there, as the test/citus.sh passes check).
  // The first pass keeps the rows when the release spills: serial, so
  // that every row passes through this backend's transition.
  const bool spilling = q->spill != nullptr && !q->spill_tried;
  q->spill_tried = true;
  if (spilling) g_row_spill = q->spill;
  PG_TRY();
  {
    if (q->sign || spilling)
      RunInternalSql(q->reader, q->sql, 2, types, args, nullptr, SPI_OK_SELECT, true,
                     /*allow_parallel=*/!spilling);
    else
      RunInternalPlan(q->reader, &q->plan, q->sql, 2, types, args, SPI_OK_SELECT, true,
                      /*allow_parallel=*/true);
  }
  PG_FINALLY();
  {
    g_row_spill = nullptr;
  }
  PG_END_TRY();
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
  if (spilling) {
    // Read by the later passes only if it holds exactly the rows this pass
    // added (a nested pass in the reader's own code would add more);
    // otherwise they run the query, as without a spill.
    FlushSpill(q->spill);
    q->spilled = !q->spill->broken && n > 0 && double(q->spill->rows) == state[0];
    if (!q->spilled) {
      FreeSpill(q->spill);
      q->spill = nullptr;
    }
  }
  // dperm.progress: the pass's rows, the workers' included.
  ProgressEndPass(n > 0 ? static_cast<int64>(state[0]) : 0);
  SPI_freetuptable(SPI_tuptable);
  MemoryContextSwitchTo(caller);
  MemoryContextReset(q->scratch);
}

// A pass over the spilled rows: each chunk read under the guard, then
// added by the core (PassAddRecords: the same sums, exact, as the per-pass
// transition's PassAddRow on the same rows in a pass of the query).
void SpillPass(PassQuery* q, const dperm::PassSpec& spec, const double* w, double* state) {
  RowSpill* s = q->spill;
  const off_t chunk = off_t(s->capacity * RecordBytes(s));
  ProgressStartPass();
  for (off_t offset = 0; offset < s->bytes; offset += chunk) {
    dperm::CheckInterrupt();
    const int bytes = int(std::min<off_t>(chunk, s->bytes - offset));
    CallPostgres([=] { ReadSpill(s, offset, bytes); });
    dperm::PassAddRecords(spec, w, s->buffer, int64(bytes / RecordBytes(s)), state);
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
    if (q->spilled) {
      SpillPass(q, spec, values, state);
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

// The per-pass transition's copy of a row it added, clipped (pass_aggregate.cpp):
// a row of another shape (a pass the reader's own code ran meanwhile)
// marks the file unusable rather than failing.
void SpillPassRow(const double* x, int d, double label) {
  RowSpill* s = g_row_spill;
  if (s->broken) return;
  if (d != s->d) {
    s->broken = true;
    return;
  }
  double* record = s->buffer + s->buffered * (d + 1);
  memcpy(record, x, sizeof(double) * d);
  record[d] = label;
  s->rows++;
  if (++s->buffered == s->capacity) FlushSpill(s);
}

PassQuery* PreparePasses(const PassSource& source, const dperm::Plan& plan) {
  PassQuery* q = static_cast<PassQuery*>(palloc0(sizeof(PassQuery)));
  q->reader = source.reader;
  q->sql = source.sql;
  q->sign = source.sign;
  // Not on a Citus table, whose rows the workers read.
  if (!q->sign && g_streaming_spill && SpillFits(plan.n, plan.d)) q->spill = NewSpill(plan.d);
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
  if (query->spill != nullptr) FreeSpill(query->spill);
  query->spill = nullptr;
  elog(DEBUG1, "dperm: streaming release of %s in " INT64_FORMAT " passes%s",
       AlgorithmName(plan.algorithm), query->passes,
       query->spilled ? ", all but the first over its temporary copy of the rows" : "");
}

Datum TrainStreamingRelease(const StreamingRequest& r, bool* isnull) {
  *isnull = true;
  // An empty relation releases nothing, as in memory (n = 0 is public).
  if (r.n == 0) return (Datum)0;
  ReleaseRequest release = {r.loss, r.parsed, r.options, r.n, r.d, r.relations, r.n_relations,
                            r.precharged, /*reports=*/true, r.unit_column, r.unit_rows,
                            r.unit_count_epsilon};
  PassSource passes = {r.reader, r.pass_sql, r.sign_passes};
  Datum model = ReleaseFromPasses(release, passes);
  *isnull = false;
  return model;
}

}  // namespace dperm::pg
