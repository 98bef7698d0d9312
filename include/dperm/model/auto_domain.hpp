// Private domains of a feature spec (docs/design.md section 7): a column
// declared "bounds": "auto" takes [lo, hi] from two private quantiles of its
// values, chosen by the exponential mechanism over a public grid of
// candidates, with a public share of the release's epsilon (the release is
// charged once for the domain step and the model: release.cpp).
//
// The candidates (AutoBoundsGrid) are public constants: 0 and +-{1, 2, 5} *
// 10^k for k = -6 .. 15 (133 values), so no candidate depends on a row. The
// quantiles are kAutoLowQuantile and kAutoHighQuantile, public too.
#pragma once

#include "dperm/noise/random.hpp"

#include <cstdint>
#include <vector>

namespace dperm {

// The share of a release's epsilon the domain step takes when a spec has
// auto columns (split evenly across them, half to each quantile); the model
// trains with the rest. Public.
constexpr double kAutoDomainShare = 0.1;
constexpr double kAutoLowQuantile = 0.01;
constexpr double kAutoHighQuantile = 0.99;

// The public candidate grid, ascending.
const std::vector<double>& AutoBoundsGrid();

// What the domain step reads of one column: for each value x (NULL and NaN
// skipped), the number of candidates <= x and < x, as two histograms over
// 0..G (G candidates). O(G) memory whatever the number of rows; each Add is
// two binary searches of the grid.
class QuantileCounts {
 public:
  QuantileCounts();
  void Add(double x) noexcept;
  int64_t n() const { return n_; }
  // #{x < grid[c]} and #{x <= grid[c]}.
  std::vector<int64_t> Below() const;
  std::vector<int64_t> AtOrBelow() const;

 private:
  std::vector<int64_t> le_index_;  // [p]: values with p candidates <= x
  std::vector<int64_t> lt_index_;  // [p]: values with p candidates < x
  int64_t n_ = 0;
};

// The exponential mechanism (McSherry & Talwar 2007, Theorem 6) choosing a
// candidate of `grid` for the q-quantile: utility u(c) = -|count(c) - q n|,
// count(c) = #{x < c} (or #{x <= c}, at_or_below), n the values counted.
// Sensitivity of u is 1 under either neighbouring relation: replacing a row
// moves count(c) by at most 1 and leaves n; adding or removing one moves
// count(c) by 0 or 1 and q n by q, so count - q n moves by at most
// max(q, 1 - q) <= 1 (Smith 2011 uses the same utility on the gaps between
// sorted values). Candidate c is drawn with probability proportional to
// mu(c) exp(epsilon u(c) / 2) (Delta u = 1): epsilon-DP. Sampled by the
// inverse CDF on normalised weights (log-sum-exp: the largest weight is 1).
//
// Beyond the data every candidate has the same count (n, or 0), so with a
// uniform mu the mechanism would pick uniformly among the dozens of
// candidates past the largest value. The mechanism allows a public base
// measure mu (McSherry & Talwar 2007, section 2: epsilon-DP for any mu that
// does not depend on the data): here mu(c) = 4^(inward * c) over the
// candidate index c, inward = +1 for the low bound (larger candidates
// preferred among ties), -1 for the high one, 0 for none; ties resolve
// towards the data (a factor 4 per grid step, worth 2 ln 4 / epsilon rows
// of utility). Returns the index of the chosen candidate.
int PrivateQuantileIndex(const std::vector<int64_t>& counts, int64_t n, double q, double epsilon,
                         int inward, SecureRng& rng);

// [lo, hi] for one auto column at `epsilon` (epsilon/2 to each quantile,
// basic composition: Dwork & Roth 2014, Theorem 3.16): the low quantile on
// #{x < c}, the high on #{x <= c}; when the noise gives hi <= lo, hi is the
// next candidate above lo (post-processing, no cost). Ends of the grid
// included, so lo < hi always holds.
struct AutoBounds {
  double lo, hi;
};
AutoBounds ChooseAutoBounds(const QuantileCounts& counts, double epsilon, SecureRng& rng);

}  // namespace dperm
