// dperm.train's streaming mode (streaming.cpp): the passes that feed the
// release pipeline (release.hpp), and dperm.train's entry to it.
#pragma once

#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"

#include <vector>

#include "boundary.hpp"
#include "options_pg.hpp"
#include "release.hpp"

extern "C" {
#include "utils/jsonb.h"
}

namespace dperm::pg {

// One streaming release of dperm.train, everything public already checked:
// the pipeline (ReleaseFromPasses) plans, charges `relations` once, then
// trains by passes of `pass_sql` ($1 = w, $2 = spec) run as `reader`. NULL
// (*isnull) for n = 0.
struct StreamingRequest {
  Oid reader;
  const char* pass_sql;
  LossKind loss;
  const ParsedOptions* parsed;
  Jsonb* options;
  int64 n;
  int d;
  const Oid* relations;
  int n_relations;
  bool sign_passes;  // a Citus table: every pass carries a token (citus.cpp)
  const char* unit_column;  // the privacy unit the passes' rows are bounded to
  int64 unit_rows;          // (privacy_unit.hpp); nullptr and 0: the row
  double unit_count_epsilon;  // the epsilon that released the number of units
  bool precharged;            // dperm.train charged the whole release before the
                              // count (a unit-level release: ReleaseUnitCount)
};
Datum TrainStreamingRelease(const StreamingRequest& request, bool* isnull);

// The passes of one release, prepared in the PostgreSQL phase for `plan`
// (its spec and a scratch memory context), palloc'd.
// The rows of a streaming release's first pass, kept in a temporary file
// for its later passes (streaming.cpp). g_row_spill is set only while that
// pass runs; the per-pass transition then hands it every row it adds: x,
// the d features clipped, and the stored label.
struct RowSpill;
extern RowSpill* g_row_spill;
void SpillPassRow(const double* x, int d, double label);

struct PassQuery;
PassQuery* PreparePasses(const PassSource& source, const dperm::Plan& plan);

// C++ phase: trains by the plan, every full-batch gradient one pass run
// under CallPostgres (boundary.hpp), so a pass's PostgreSQL error unwinds
// the training loop as a PostgresError.
std::vector<double> TrainByPasses(const dperm::Plan& plan, PassQuery* query,
                                  dperm::SecureRng& rng);

// PostgreSQL phase, after a release trained: frees the passes' memory.
void EndPasses(PassQuery* query, const dperm::Plan& plan);

}  // namespace dperm::pg
