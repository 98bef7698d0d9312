// The release pipeline (release.cpp): plan -> charge -> key -> train ->
// model, and the failed-release path, written once for every release dperm
// makes. The in-memory aggregates feed it their row buffer
// (ReleaseFromRows); dperm.train's streaming mode and Citus feed it passes
// (ReleaseFromPasses, streaming.cpp); dperm.evaluate's noisy sums go
// through the same charge, key and failure steps (ReleaseSums).
#pragma once

#include "dperm/options/options.hpp"


#include "boundary.hpp"
#include "options_pg.hpp"
#include "privacy_unit.hpp"

extern "C" {
#include "utils/jsonb.h"
}

namespace dperm::pg {

// What a model release needs besides its rows; all public.
struct ReleaseRequest {
  LossKind loss;
  const ParsedOptions* parsed;
  Jsonb* options;          // as given: the model's JSON records them
  int64 n;                 // rows read (public under replace-one)
  int d;                   // the public d
  const Oid* relations;    // what the release is charged to
  int n_relations;
  bool precharged;         // dperm.train charged this release before the first
                           // row was read: in memory for g_release.n rows; a
                           // unit-level release with its count (ReleaseUnitCount)
  bool reports;            // writes its phases to dperm.progress
  // The privacy unit the rows were bounded to (privacy_unit.hpp): its
  // column (nullptr: the row) and k; the options carry k too.
  const char* unit_column;
  int64 unit_rows;
  double unit_count_epsilon;  // the epsilon the number of units was released with
};

// Passes over a relation (streaming.cpp runs them): `sql` ($1 = w, $2 =
// the pass spec) run as `reader`; `sign`: a Citus table, every pass
// carries a token (citus.cpp).
struct PassSource {
  Oid reader;
  const char* sql;
  bool sign;
};

// A release over n rows of stride d + 1 held in memory (the clipped
// features, then the label): plans, refuses what public inputs refuse,
// charges (unless precharged), draws the key, trains, returns the dp_model.
Datum ReleaseFromRows(const ReleaseRequest& request, const double* rows);

// The same release trained by passes of `passes` (n > 0).
Datum ReleaseFromPasses(const ReleaseRequest& request, const PassSource& passes);

// Refuses (54000; nothing is charged) a release whose training needs about
// `bytes` (an estimate from public quantities only) when that is more than
// dperm.max_release_memory. What is refused is named in the message.
void CheckReleaseMemory(double bytes, const char* what);

// Step 1 alone (public checks, plan, memory refusal), for dperm.train's
// refusals before it reads or charges anything.
void CheckReleasePlan(const ParsedOptions& parsed, LossKind loss, int64 n, int d, bool streaming);

// dperm.train's charge before it reads a relation in memory: steps 1 and 2
// of the pipeline for the plan the final function makes from the same
// options, n and d, so that whatever the read raises is paid for; the final
// function then skips its own charge (ReleaseRequest.precharged).
void PrechargeInMemory(const ParsedOptions& parsed, LossKind loss, int64 n, int d,
                       const Oid* relations, int n_relations, const PrivacyUnit& unit);

// dperm.evaluate's release of noisy bounded sums, through the pipeline's
// steps: the pure-epsilon charge (step 2, to `relations`) before `read`
// fills the exact clipped sums (PostgreSQL phase; so whatever the read
// raises is paid for), then the key (step 3) and ReleaseBoundedSums with
// `bounds` and `slack` (exact_sum.hpp) under RunKeyed (step 4).
struct SumsRequest {
  const char* algorithm;   // the ledger's algorithm and mechanism columns
  const char* mechanism;
  const char* loss;
  double epsilon;
  bool seeded;             // the superuser-only seed (dperm.allow_seed)
  uint64 seed;
  int64 n;
  int d;
  const Oid* relations;
  int n_relations;
  int count;               // sums released, at most 2
  const double* bounds;    // each sum's per-row bound
  double slack;
  // The privacy unit the release is charged for (privacy_unit.hpp; nullptr
  // and 0: the row), and the epsilon the noise is drawn at: epsilon, or
  // epsilon / unit_rows when one unit moves a sum by unit_rows bounds
  // (group privacy; for epsilon-DP exactly epsilon per unit).
  const char* unit_column;
  int64 unit_rows;
  double noise_epsilon;
  bool precharged;         // charged with the release it is part of (ReleaseUnitCount)
};
struct SumsRelease {
  double values[2] = {0, 0};
  double scale = 0, grid = 0;
  int64 ledger_id = 0;
};
using ReadSums = void (*)(void* arg, double* sums);
SumsRelease ReleaseSums(const SumsRequest& request, ReadSums read, void* arg);

// The number of units a unit-level release reads (privacy_unit.hpp): first
// the one charge of the whole release (UnitReleaseCharge: the count at
// `epsilon` and the model at (model_epsilon, model_delta) per unit, and its
// cost at the row for budgets without a unit), so that a refusal costs
// nothing; then pure epsilon-DP discrete Laplace on the exact count (a unit
// added or removed moves it by 1), as ReleaseSums does; max(0, the rounded
// noisy count). `count_sql` counts the units as `reader`. The model's own
// release is then precharged.
struct UnitCountRequest {
  Oid reader;
  const char* count_sql;
  const char* loss;
  double epsilon;
  bool seeded;
  uint64 seed;
  int d;
  const Oid* relations;
  int n_relations;
  const char* unit_column;
  int64 unit_rows;
  const char* algorithm;   // the ledger's algorithm column: the option, or "auto"
  double model_epsilon;
  double model_delta;
};
int64 ReleaseUnitCount(const UnitCountRequest& request);

// The current time as ISO 8601 UTC ("2026-11-23T14:00:00Z"), palloc'd: a
// model's created_at.
char* NowIso8601();

}  // namespace dperm::pg
