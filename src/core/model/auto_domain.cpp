// Private domains of a feature spec (auto_domain.hpp).
#include "dperm/model/auto_domain.hpp"

#include "dperm/util/errors.hpp"

#include <algorithm>
#include <cmath>

namespace dperm {

const std::vector<double>& AutoBoundsGrid() {
  static const std::vector<double> grid = [] {
    std::vector<double> g;
    for (int k = -6; k <= 15; k++)
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = m * std::pow(10.0, k);
        g.push_back(v);
        g.push_back(-v);
      }
    g.push_back(0);
    std::sort(g.begin(), g.end());
    return g;
  }();
  return grid;
}

QuantileCounts::QuantileCounts()
    : le_index_(AutoBoundsGrid().size() + 1, 0), lt_index_(AutoBoundsGrid().size() + 1, 0) {}

void QuantileCounts::Add(double x) noexcept {
  if (std::isnan(x)) return;
  const std::vector<double>& g = AutoBoundsGrid();
  le_index_[size_t(std::upper_bound(g.begin(), g.end(), x) - g.begin())]++;
  lt_index_[size_t(std::lower_bound(g.begin(), g.end(), x) - g.begin())]++;
  n_++;
}

// x < grid[c] iff (candidates <= x) <= c; x <= grid[c] iff (candidates < x) <= c.
std::vector<int64_t> QuantileCounts::Below() const {
  std::vector<int64_t> out(AutoBoundsGrid().size());
  int64_t s = 0;
  for (size_t c = 0; c < out.size(); c++) out[c] = (s += le_index_[c]);
  return out;
}

std::vector<int64_t> QuantileCounts::AtOrBelow() const {
  std::vector<int64_t> out(AutoBoundsGrid().size());
  int64_t s = 0;
  for (size_t c = 0; c < out.size(); c++) out[c] = (s += lt_index_[c]);
  return out;
}

int PrivateQuantileIndex(const std::vector<int64_t>& counts, int64_t n, double q, double epsilon,
                         int inward, SecureRng& rng) {
  if (counts.empty() || !(epsilon > 0) || !std::isfinite(epsilon) || !(q >= 0 && q <= 1))
    ThrowInvalid("a private quantile needs candidates, epsilon > 0 and q in [0, 1]");
  // u(c) = -|count(c) - q n|, sensitivity 1 (auto_domain.hpp); the log
  // weight epsilon u(c) / 2 + log mu(c) (McSherry & Talwar 2007, Theorem 6,
  // with the public base measure mu(c) = 4^(inward c)), less its largest
  // value before exp.
  const double log_step = inward * std::log(4.0);
  std::vector<double> u(counts.size());
  double best = -INFINITY;
  for (size_t c = 0; c < counts.size(); c++) {
    u[c] = epsilon * -std::fabs(double(counts[c]) - q * double(n)) / 2 + log_step * double(c);
    best = std::max(best, u[c]);
  }
  double total = 0;
  for (double& w : u) total += (w = std::exp(w - best));
  const double target = rng.Uniform01() * total;
  double acc = 0;
  for (size_t c = 0; c < u.size(); c++) {
    acc += u[c];
    if (target < acc) return int(c);
  }
  return int(u.size()) - 1;
}

AutoBounds ChooseAutoBounds(const QuantileCounts& counts, double epsilon, SecureRng& rng) {
  const std::vector<double>& g = AutoBoundsGrid();
  // epsilon/2 to each quantile: basic composition (Dwork & Roth 2014, Thm 3.16).
  const int lo =
      PrivateQuantileIndex(counts.Below(), counts.n(), kAutoLowQuantile, epsilon / 2, +1, rng);
  int hi =
      PrivateQuantileIndex(counts.AtOrBelow(), counts.n(), kAutoHighQuantile, epsilon / 2, -1, rng);
  // Post-processing (no cost): an empty or inverted range takes the next
  // candidate above lo (or, at the grid's top, the one below it).
  if (hi <= lo) hi = lo + 1;
  if (hi >= int(g.size())) return {g[g.size() - 2], g[g.size() - 1]};
  return {g[size_t(lo)], g[size_t(hi)]};
}

}  // namespace dperm
