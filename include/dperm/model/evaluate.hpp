// Private evaluation of a model on a relation (dperm.evaluate, docs/design.md
// section 7): the metrics are sums over rows of per-row values, each clipped
// to a public bound, released with exact discrete Laplace noise.
#pragma once
#include "dperm/util/errors.hpp"
#include "dperm/noise/random.hpp"

#include <string>
#include <vector>

namespace dperm {

struct NoisySums {
  std::vector<double> values;  // the noisy sums, in the sums' own units
  double grid = 0;             // the release grid of the normalised sums
  double scale = 0;            // discrete Laplace scale per normalised sum (real units)
  double l1_sensitivity = 0;   // of the normalised, rounded sums
};

// Releases sums[i] = sum over rows of a per-row value in [0, bounds[i]],
// epsilon-DP under replace-one neighbours (n public). Derivation:
//   u_i = sums[i] / bounds[i]; replacing one row moves each u_i by at most 1,
//   so ||u - u'||_1 <= m (m = number of sums). Each u_i is rounded to the grid
//   g = 2^k (noise.hpp: rounding adds at most m g to the L1 distance), so the
//   rounded vector has L1 sensitivity Delta_1 = m (1 + g). Discrete Laplace
//   noise of scale b >= Delta_1 / epsilon per coordinate (CKS20 Alg. 2, on the
//   grid: P[Z = z] ∝ exp(-|z| g / b)) gives epsilon-DP, as the Laplace
//   mechanism does (Dwork & Roth 2014, Thm 3.6): the density ratio of two
//   neighbours is at most exp(||r(u) - r(u')||_1 / b) <= exp(epsilon).
//   The released sums are bounds[i] times the noisy u_i (post-processing).
// bounds must be positive and finite; epsilon > 0. `slack`: how far beyond
// one unit a replaced row may move a computed u_i (the sums' own rounding,
// exact_sum.hpp; 0 for sums that are exact), added to Delta_1 per sum.
NoisySums ReleaseBoundedSums(const std::vector<double>& sums, const std::vector<double>& bounds,
                             double epsilon, SecureRng& rng, double slack = 0);

// The grid, Delta_1 and scale ReleaseBoundedSums draws m sums with (values
// empty), from public inputs only: what dperm.explain_query shows of a
// query's noisy count.
NoisySums BoundedSumsNoise(int m, double epsilon, double slack = 0);

// The ledger's RDP curve of an epsilon-DP release on LedgerOrders():
// min(epsilon, alpha epsilon^2 / 2) (epsilon-DP implies (epsilon^2/2)-zCDP,
// Bun & Steinke 2016, Prop. 1.4, and (alpha, epsilon)-RDP), as for every
// pure-DP release in budget.cpp.
std::vector<double> PureDpRdpCurve(double epsilon);

}  // namespace dperm
