// Releases of noisy bounded sums (release_sums.hpp): the pipeline's charge,
// key and failure steps around the core's ReleaseBoundedSums.
#include "dperm/accounting/budget.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/model/evaluate.hpp"
#include "dperm/planning/unit_level.hpp"

#include <cmath>

#include "ledger/charge.hpp"
#include "base/internal_sql.hpp"
#include "release/noise_key.hpp"
#include "release/release_sums.hpp"

namespace dperm::pg {

SumsRelease ReleaseSums(const SumsRequest& r, ReadSums read, void* arg) {
  if (r.count < 1 || r.count > kMaxSums) elog(ERROR, "ReleaseSums: %d sums", r.count);
  // Step 2: a pure epsilon-DP release (discrete Laplace), charged on its
  // curve before a row is read.
  double* curve = static_cast<double*>(palloc(sizeof(double) * 64));
  int n_curve = 0;
  RunCore([&] {
    std::vector<double> c = dperm::PureDpRdpCurve(r.epsilon);
    n_curve = static_cast<int>(c.size());
    for (int i = 0; i < n_curve && i < 64; i++) curve[i] = c[i];
  });
  ChargeRequest charge = {r.role,
                          r.algorithm,
                          r.mechanism,
                          r.loss,
                          r.neighbors != nullptr ? r.neighbors : NeighborsOf(r.unit),
                          r.epsilon,
                          0,
                          r.n,
                          r.d,
                          curve,
                          n_curve,
                          r.seeded,
                          r.unit,
                          r.epsilon,
                          0,
                          curve,
                          n_curve};

  SumsRelease out;
  if (!r.charged) out.ledger_id = ChargeRelease(charge, r.relations, r.n_relations, nullptr);
  double sums[kMaxSums] = {0, 0, 0};
  read(arg, sums);
  // Steps 3 and 4.
  NoiseKey key = DrawNoiseKey(r.seeded, r.seed);
  RunKeyed(&key, [&](dperm::SecureRng& rng) {
    std::vector<double> s(sums, sums + r.count);
    std::vector<double> bounds(r.bounds, r.bounds + r.count);
    dperm::NoisySums noisy = dperm::ReleaseBoundedSums(s, bounds, r.noise_epsilon, rng, r.slack);
    for (int i = 0; i < r.count; i++) out.values[i] = noisy.values[i];
    out.scale = noisy.scale;
    out.grid = noisy.grid;
  });
  return out;
}

namespace {

// ReleaseUnitCount's read: the exact number of units.
struct UnitCountRead {
  Oid reader;
  const char* sql;
};
void ReadUnitCount(void* arg, double* sums) {
  const UnitCountRead* r = static_cast<const UnitCountRead*>(arg);
  RunInternalSql(r->reader, r->sql, 0, nullptr, nullptr, nullptr, SPI_OK_SELECT, true);
  bool isnull;
  sums[0] = double(
      DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)));
}

// The slack of ReleaseUnitCount's sum: the count is an integer below 2^53,
// exact in a double; one grid step.
constexpr double kUnitCountSlack = 0x1p-40;

}  // namespace

UnitCountNoise UnitCountNoiseAt(double epsilon) {
  UnitCountNoise out = {0, 0};
  RunCore([&] {
    const dperm::NoisySums noise = dperm::BoundedSumsNoise(1, epsilon, kUnitCountSlack);
    out.scale = noise.scale;
    out.grid = noise.grid;
  });
  return out;
}

int64 ChargeUnitRelease(const ReleaseRequest& r, const char* neighbors) {
  const Options& o = r.parsed.options;
  PgBox<dperm::UnitReleaseCost> cost(CurrentMemoryContext);
  RunCore([&] { cost.Emplace(dperm::UnitReleaseCharge(r.unit_count_epsilon, o)); });
  const dperm::ReleaseCost& unit = cost->unit;
  const dperm::ReleaseCost& row = cost->row;
  ChargeRequest charge = {r.role,
                          o.has_algorithm ? dperm::AlgorithmName(o.algorithm) : "auto",
                          r.unit.public_units > 0
                              ? "the model at the budget's public number of units (no count)"
                              : "unit count (discrete Laplace), then the model: one charge",
                          dperm::LossName(r.loss),
                          neighbors != nullptr ? neighbors : NeighborsOf(r.unit),
                          unit.epsilon,
                          unit.delta,
                          0,
                          r.d,
                          unit.curve.empty() ? nullptr : unit.curve.data(),
                          static_cast<int>(unit.curve.size()),
                          o.has_seed,
                          r.unit,
                          row.epsilon,
                          row.delta,
                          row.curve.empty() ? nullptr : row.curve.data(),
                          static_cast<int>(row.curve.size())};
  return ChargeRelease(charge, r.relations, r.n_relations, r.outcome);
}

int64 ReleaseUnitCount(const ReleaseRequest& r, Oid reader, const char* count_sql) {
  const Options& o = r.parsed.options;
  const char* loss = dperm::LossName(r.loss);
  const bool seeded = o.has_seed;
  const uint64 seed = static_cast<uint64>(o.seed);
  // The one charge of the whole release (unit_level.hpp), before the count
  // reads a row: admitted or refused as a whole (or, for one group of
  // dperm.train_query_groups, the statement's one charge, made already).
  if (!r.count_charged) ChargeUnitRelease(r, nullptr);
  const double bounds[1] = {1};
  SumsRequest sums = {"unit count",
                      "discrete Laplace on the number of units",
                      loss,
                      r.unit_count_epsilon,
                      seeded,
                      seed,
                      0,
                      r.d,
                      r.role,
                      r.relations,
                      r.n_relations,
                      1,
                      bounds,
                      kUnitCountSlack,
                      r.unit,
                      r.unit_count_epsilon,
                      /*charged=*/true,
                      nullptr};
  UnitCountRead read = {reader, count_sql};
  SumsRelease released = ReleaseSums(sums, ReadUnitCount, &read);
  const double units = std::round(released.values[0]);
  return units > 0 ? static_cast<int64>(std::min(units, 9.0e15)) : 0;
}

}  // namespace dperm::pg
