// Private evaluation: bounded sums with discrete Laplace noise (evaluate.hpp
// states the sensitivity and the mechanism).
#include "dperm/model/evaluate.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/accounting/budget.hpp"
#include "dperm/noise/noise.hpp"

namespace dperm {

NoisySums BoundedSumsNoise(int m, double epsilon, double slack) {
  if (!(epsilon > 0) || !std::isfinite(epsilon)) ThrowInvalid("epsilon must be positive");
  // The grid: the largest power of two g <= b0 / 2^10, b0 = m / epsilon the
  // noise scale before rounding, so the noise spans about 2^10 grid units;
  // the rounding adds m g to the L1 sensitivity (below). ldexp/ilogb give
  // an exact power of two.
  double grid = std::ldexp(1.0, std::ilogb(m / epsilon / 1024));
  NoisySums out;
  // Delta_1 = m (1 + g): the sums' own sensitivity plus the rounding's
  // (plus the sums' own rounding slack, when they have one).
  out.l1_sensitivity = m * (1 + grid + slack);
  out.scale = out.l1_sensitivity / epsilon;  // Laplace mechanism: b = Delta_1 / epsilon
  out.grid = grid;
  return out;
}

NoisySums ReleaseBoundedSums(const std::vector<double>& sums, const std::vector<double>& bounds,
                             double epsilon, SecureRng& rng, double slack) {
  const int m = static_cast<int>(sums.size());
  if (m < 1 || bounds.size() != sums.size())
    throw Error(ErrorKind::kInternal, "ReleaseBoundedSums: one bound per sum");
  if (!(epsilon > 0) || !std::isfinite(epsilon)) ThrowInvalid("epsilon must be positive");
  for (double b : bounds)
    if (!(b > 0) || !std::isfinite(b)) ThrowInvalid("the bounds of the metrics must be positive");
  NoisySums out = BoundedSumsNoise(m, epsilon, slack);
  const double grid = out.grid;
  uint64_t t, s;
  GridLaplaceScale(out.scale, grid, t, s);  // rounded up: at least b
  std::vector<double> u(m);
  for (int i = 0; i < m; i++) u[i] = sums[i] / bounds[i];
  SnapDiscreteLaplace(rng, grid, t, s, u.data(), m);
  out.values.resize(m);
  for (int i = 0; i < m; i++) out.values[i] = u[i] * bounds[i];
  return out;
}

std::vector<double> PureDpRdpCurve(double epsilon) {
  std::vector<double> curve;
  for (double a : LedgerOrders()) curve.push_back(std::min(epsilon, a * epsilon * epsilon / 2));
  return curve;
}

}  // namespace dperm
