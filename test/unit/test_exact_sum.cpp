// Unit tests of the exact sums over rows (exact_sum.hpp): at n = 10^7, with
// values chosen so that a floating-point sum depends on the order of the
// rows, the exact sum is bit-identical in forward, reversed and shuffled
// order and under any split into pass states combined in any order; a
// neighbouring pair whose naive float sums differ by more than the
// sensitivity stays within it (plus the grid's slack) with the exact sums;
// the plans count the slack.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "dperm/rows/exact_sum.hpp"
#include "dperm/release/streaming.hpp"
#include "dperm/planning/plan_release.hpp"

namespace {

using dperm::ExactSum;

const int64_t kRows = 10000000;  // the 10^7 rows of the attack
const double kL = 1.0;           // the per-row bound of every contribution

// n values of magnitude <= 1 on which float sums depend on the order: two
// rows of +-1 among small values of a few grid steps whose low bits an
// accumulator near 1 cannot hold (so they are rounded away after the +1
// and kept when the small ones come first), with fractional grid parts.
std::vector<double> AdversarialValues(int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  const double small = std::ldexp(1.0, -44);  // 2 grid steps of SumGrid(1) = 2^-45
  for (int64_t i = 0; i < n; i++)
    v[size_t(i)] = small * (1 + std::ldexp(double(i % 4093), -12)) * (i % 5 == 4 ? -1 : 1);
  v[0] = 1;
  v[size_t(n / 2)] = -1;
  return v;
}

double NaiveSum(const std::vector<double>& v, const std::vector<uint32_t>& order) {
  double s = 0;
  for (uint32_t i : order) s += v[i];
  return s;
}

__int128 ExactUnits(const std::vector<double>& v, const std::vector<uint32_t>& order, double q) {
  ExactSum sum(1, q);
  for (uint32_t i : order) sum.Add(0, v[i]);
  return sum.Units(0);
}

// A pass spec whose row gradient is exactly the value: logistic at w = 0
// has f'(0) = -y/2, so the row (x = 2 v, y = -1) contributes v.
dperm::PassSpec ValueSpec(double q) {
  dperm::PassSpec s;
  s.loss = dperm::LossKind::kLogistic;
  s.d = 1;
  s.fit_intercept = false;
  s.feature_bound = 4;
  s.with_loss = false;
  s.sum_grid = q;
  s.sum_inv = 1 / q;
  return s;
}

TEST(ExactSum, BitIdenticalInEveryOrderAndSplitAtTenMillionRows) {
  const std::vector<double> v = AdversarialValues(kRows);
  const double q = dperm::SumGrid(kL);
  std::vector<uint32_t> forward(static_cast<size_t>(kRows));
  std::iota(forward.begin(), forward.end(), 0u);
  std::vector<uint32_t> reversed(forward.rbegin(), forward.rend());
  std::vector<uint32_t> shuffled = forward;
  std::mt19937_64 gen(20251127);
  std::shuffle(shuffled.begin(), shuffled.end(), gen);

  // The attack's premise: the naive float sum depends on the order.
  const double naive_fwd = NaiveSum(v, forward), naive_rev = NaiveSum(v, reversed),
               naive_shuf = NaiveSum(v, shuffled);
  EXPECT_NE(naive_fwd, naive_rev);
  EXPECT_NE(naive_fwd, naive_shuf);

  const __int128 exact = ExactUnits(v, forward, q);
  EXPECT_TRUE(ExactUnits(v, reversed, q) == exact);
  EXPECT_TRUE(ExactUnits(v, shuffled, q) == exact);
  // The exact value itself: every rounded value's integer, summed in
  // int128 outside ExactSum.
  __int128 reference = 0;
  for (double x : v) reference += dperm::RoundToGridInt(x / q);
  EXPECT_TRUE(exact == reference);

  // The streaming pass: the rows in shuffled order cut into 13 partial
  // states of random sizes (parallel workers, Citus shards), combined in a
  // random order; and the whole table in one state, forward.
  const dperm::PassSpec spec = ValueSpec(q);
  const int size = dperm::PassStateSize(spec);
  const double w = 0;
  double scratch = 0;
  auto fill = [&](const uint32_t* rows, size_t count, std::vector<double>& state) {
    state.assign(size_t(size), 0.0);
    dperm::PassInitState(state.data());
    for (size_t k = 0; k < count; k++) {
      const double x = 2 * v[rows[k]];
      dperm::PassAddRow(spec, &w, &x, -1.0, state.data(), &scratch);
    }
  };
  std::vector<size_t> cuts = {0, size_t(kRows)};
  for (int k = 0; k < 12; k++) cuts.push_back(size_t(gen() % uint64_t(kRows)));
  std::sort(cuts.begin(), cuts.end());
  std::vector<std::vector<double>> parts(cuts.size() - 1);
  for (size_t p = 0; p + 1 < cuts.size(); p++)
    fill(shuffled.data() + cuts[p], cuts[p + 1] - cuts[p], parts[p]);
  std::shuffle(parts.begin(), parts.end(), gen);
  std::vector<double> combined = parts[0];
  for (size_t p = 1; p < parts.size(); p++)
    ASSERT_TRUE(dperm::PassCombine(combined.data(), parts[p].data(), size));
  std::vector<double> whole;
  fill(forward.data(), forward.size(), whole);
  EXPECT_EQ(combined[0], double(kRows));
  double g_combined = 0, g_whole = 0;
  dperm::PassStateSums(spec, combined.data(), &g_combined);
  dperm::PassStateSums(spec, whole.data(), &g_whole);
  EXPECT_TRUE(dperm::LimbUnits(combined[4], combined[5]) == exact);
  EXPECT_TRUE(dperm::LimbUnits(whole[4], whole[5]) == exact);
  EXPECT_EQ(g_combined, dperm::UnitsValue(exact, q));
  EXPECT_EQ(g_whole, g_combined);
}

// The neighbouring pair of the attack: D has a first row of +L, D' of -L,
// and 10^7 - 1 rows just above half an ulp. Naively summed in row order,
// every small row rounds up after +L and down after -L, so the sums differ
// by more than 2L, the most one replaced row may move them. The exact sums
// differ by 2L plus at most one grid step per coordinate.
TEST(ExactSum, NeighboursStayWithinTheSensitivityAtTenMillionRows) {
  const double v = std::ldexp(1.0, -53) + std::ldexp(1.0, -60);
  const double q = dperm::SumGrid(kL);
  double naive_d = kL, naive_d2 = -kL;
  ExactSum exact_d(1, q), exact_d2(1, q);
  exact_d.Add(0, kL);
  exact_d2.Add(0, -kL);
  for (int64_t i = 1; i < kRows; i++) {
    naive_d += v;
    naive_d2 += v;
    exact_d.Add(0, v);
    exact_d2.Add(0, v);
  }
  const double sensitivity = 2 * kL;
  EXPECT_GT(naive_d - naive_d2, sensitivity) << "the naive sums must break the bound";
  const double exact_difference = double(exact_d.Units(0) - exact_d2.Units(0)) * q;
  EXPECT_LE(std::fabs(exact_difference), sensitivity + 2 * q);
  // And at the level the mechanisms use: means within 2 (L + slack)/n.
  const double slack = dperm::SumSlack(kRows, 1, q);
  EXPECT_LE(std::fabs(exact_d.Value(0) / double(kRows) - exact_d2.Value(0) / double(kRows)),
            2 * (kL + slack) / double(kRows));
  EXPECT_GT(std::fabs(naive_d / double(kRows) - naive_d2 / double(kRows)), 2 * kL / double(kRows));
}

TEST(ExactSum, RoundingClampAndLimbs) {
  EXPECT_EQ(dperm::RoundToGrid(2.5), 2.0);  // ties to even
  EXPECT_EQ(dperm::RoundToGrid(-2.5), -2.0);
  EXPECT_EQ(dperm::RoundToGrid(3.5), 4.0);
  EXPECT_EQ(dperm::RoundToGridInt(-7.49), -7);
  EXPECT_EQ(dperm::RoundToGrid(NAN), -dperm::kSumClamp);
  EXPECT_EQ(dperm::RoundToGrid(1e300), dperm::kSumClamp);
  EXPECT_EQ(dperm::RoundToGridInt(-1e300), -int64_t(dperm::kSumClamp));
  EXPECT_EQ(dperm::SumGrid(1.0), std::ldexp(1.0, -45));
  EXPECT_EQ(dperm::SumGrid(0.75), std::ldexp(1.0, -46));
  EXPECT_LE(0.75, dperm::SumGrid(0.75) * std::ldexp(1.0, dperm::kSumRowBits));
  // kLimbWindow rows of the largest contribution stay exact in a low limb.
  double lo = std::ldexp(1.0, 31), hi = 0;
  for (int k = 0; k < dperm::kLimbWindow; k++) lo += dperm::RoundToGrid(1e300);
  EXPECT_LT(std::fabs(lo), std::ldexp(1.0, 53));
  const __int128 before = dperm::LimbUnits(lo, hi);
  dperm::LimbNormalise(&lo, &hi, 1);
  EXPECT_LE(std::fabs(lo), std::ldexp(1.0, 31));
  EXPECT_TRUE(dperm::LimbUnits(lo, hi) == before);
  double bad_lo = 0.5, bad_hi = 0;
  EXPECT_FALSE(dperm::LimbsValid(&bad_lo, &bad_hi, 1));
  bad_lo = NAN;
  EXPECT_FALSE(dperm::LimbsValid(&bad_lo, &bad_hi, 1));
  EXPECT_TRUE(dperm::LimbsValid(&lo, &hi, 1));
  // A state that is not a pass state is refused by the combine.
  const dperm::PassSpec spec = ValueSpec(dperm::SumGrid(kL));
  std::vector<double> a(size_t(dperm::PassStateSize(spec)), 0.0), b = a;
  EXPECT_FALSE(dperm::PassCombine(a.data(), b.data(), int(a.size())));  // no format tag
  dperm::PassInitState(a.data());
  dperm::PassInitState(b.data());
  EXPECT_TRUE(dperm::PassCombine(a.data(), b.data(), int(a.size())));
  b[4] = 0.25;
  EXPECT_FALSE(dperm::PassCombine(a.data(), b.data(), int(a.size())));
}

// Every plan counts the sums' slack: output perturbation inflates its
// sensitivity by sensitivity * sum_slack / L, gradient perturbation by
// 2 sum_slack / batch_size, both reported in rounding_inflation.
TEST(ExactSum, PlansCountTheSlack) {
  dperm::Options o;
  o.epsilon = 1;
  o.l2 = 0.1;
  o.algorithm = dperm::Algorithm::kOutputGd;
  o.has_algorithm = true;
  const int64_t n = 1000000;
  dperm::Plan p = dperm::PlanRelease(o, dperm::LossKind::kLogistic, n, 50);
  EXPECT_EQ(p.sum_grid, dperm::SumGrid(p.L));
  EXPECT_DOUBLE_EQ(p.sum_slack, double(n) * std::sqrt(double(p.dim)) * p.sum_grid);
  EXPECT_GT(p.sum_inflation, 0);
  const double base = p.sensitivity - p.rounding_inflation;  // the exact-arithmetic bound
  EXPECT_NEAR(p.sum_inflation, base * p.sum_slack / p.L, 1e-12 * p.sum_inflation);
  EXPECT_LT(p.sum_inflation, 1e-6 * base);  // n sqrt(dim) 2^-45 at n = 10^6
  o.algorithm = dperm::Algorithm::kDpGd;
  o.delta = 1e-6;
  dperm::Plan g = dperm::PlanRelease(o, dperm::LossKind::kLogistic, n, 50);
  EXPECT_DOUBLE_EQ(g.sum_inflation, 2 * g.sum_slack / double(g.batch_size));
  EXPECT_NEAR(g.sensitivity - g.rounding_inflation, 2 * g.L / double(g.batch_size),
              1e-12 * g.sensitivity);
}

}  // namespace
