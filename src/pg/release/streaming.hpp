// dperm.train's streaming mode (streaming.cpp): the passes that feed the
// release pipeline (release.cpp) in place of rows in memory.
#pragma once

#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"

#include <vector>

#include "base/boundary.hpp"
#include "release/row_reader.hpp"

namespace dperm::pg {

// Passes over a relation: `sql` ($1 = w, $2 = the pass spec) run as
// `reader`; `sign`: a Citus table, every pass carries a token (citus.cpp).
// `rows`: the same rows (features, label) as a query, read once into a
// temporary file that every pass then reads (dperm.streaming_spill), with
// labels by `rule`; never when `on_citus` (the release reads a Citus table,
// whose rows its workers read).
struct PassSource {
  Oid reader;
  const char* sql;
  bool sign;
  bool on_citus;
  RowQuery rows;
  LabelRule rule;
};

// The passes of one release, prepared in the PostgreSQL phase for `plan`
// (its spec, a scratch memory context, the file when it fits), palloc'd.
struct PassQuery;
PassQuery* PreparePasses(const PassSource& source, const dperm::Plan& plan);

// C++ phase: trains by the plan, every full-batch gradient one pass run
// under CallPostgres (boundary.hpp), so a pass's PostgreSQL error unwinds
// the training loop as a PostgresError.
std::vector<double> TrainByPasses(const dperm::Plan& plan, PassQuery* query, dperm::SecureRng& rng);

// PostgreSQL phase, after a release trained: frees the passes' memory and file.
void EndPasses(PassQuery* query, const dperm::Plan& plan);

}  // namespace dperm::pg
