// Releases of noisy bounded sums (release_sums.cpp), through the
// pipeline's steps (release.hpp): dperm.evaluate's metrics, and the number
// of units of a unit-level release.
#pragma once

#include "base/boundary.hpp"
#include "guard/privacy_unit.hpp"
#include "release/release_request.hpp"

namespace dperm::pg {

// A release of noisy bounded sums: the pure-epsilon charge (step 2, to
// `relations`, recorded under `role`) before `read` fills the exact
// clipped sums (PostgreSQL phase; so whatever the read raises is paid for),
// then the key (step 3) and ReleaseBoundedSums with `bounds` and `slack`
// (exact_sum.hpp) under RunKeyed (step 4).
constexpr int kMaxSums = 3;  // dperm.evaluate_query: two metric sums and n
struct SumsRequest {
  const char* algorithm;  // the ledger's algorithm and mechanism columns
  const char* mechanism;
  const char* loss;
  double epsilon;
  bool seeded;  // the superuser-only seed (dperm.allow_seed)
  uint64 seed;
  int64 n;
  int d;
  Oid role;
  const Oid* relations;
  int n_relations;
  int count;             // sums released, at most kMaxSums
  const double* bounds;  // each sum's per-row bound
  double slack;
  // The privacy unit the release is charged for (column nullptr: the row),
  // and the epsilon the noise is drawn at: epsilon, or epsilon / k when
  // one unit moves a sum by k bounds (group privacy; for epsilon-DP
  // exactly epsilon per unit). At a declared unit the release is charged
  // epsilon at the row as well, to budgets that name no unit (one row moves
  // a sum by at most one bound: at most epsilon / k <= epsilon).
  PrivacyUnit unit;
  double noise_epsilon;
  bool charged;  // charged with the release it is part of (ReleaseUnitCount)
  // The ledger row's neighbours (nullptr: NeighborsOf(unit)), e.g. a
  // per-group statement's groups.
  const char* neighbors;
};
struct SumsRelease {
  double values[kMaxSums] = {0, 0, 0};
  double scale = 0, grid = 0;
  int64 ledger_id = 0;
};
using ReadSums = void (*)(void* arg, double* sums);
SumsRelease ReleaseSums(const SumsRequest& request, ReadSums read, void* arg);

// The number of units the unit-level release `request` reads
// (privacy_unit.hpp): first the one charge of the whole release
// (UnitReleaseCharge: the count at request.unit_count_epsilon and the model
// at the options' (epsilon, delta) per unit, and its cost at the row for
// budgets without a unit), so that a refusal costs nothing; then pure
// epsilon-DP discrete Laplace on the exact count (a unit added or removed
// moves it by 1), as ReleaseSums does; max(0, the rounded noisy count).
// `count_sql` counts the units as `reader`. The model's own release is then
// charged already (request.charged).
// When request.count_charged (one group of dperm.train_query_groups), the
// statement was charged already and this charges nothing.
int64 ReleaseUnitCount(const ReleaseRequest& request, Oid reader, const char* count_sql);

// The discrete Laplace noise ReleaseUnitCount adds to a count released at
// `epsilon` (BoundedSumsNoise: one sum of bound 1 and its slack), from
// public inputs only: what dperm.explain_query shows without a count.
struct UnitCountNoise {
  double scale;  // b = Delta_1 / epsilon
  double grid;
};
UnitCountNoise UnitCountNoiseAt(double epsilon);

// The one charge of a unit-level release (UnitReleaseCharge: its count at
// request.unit_count_epsilon and its model at the options' (epsilon, delta)
// per unit, and its cost at the row for budgets without a unit), with
// `neighbors` as the ledger row's neighbours (nullptr: NeighborsOf(unit)).
// Returns the ledger row's id.
int64 ChargeUnitRelease(const ReleaseRequest& request, const char* neighbors);

}  // namespace dperm::pg
