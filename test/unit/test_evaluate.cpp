// ReleaseBoundedSums (evaluate.hpp): outputs on the grid, unbiased, with the
// spread of a Laplace of scale m (1 + g) / epsilon per normalised sum.
#include "dperm/model/evaluate.hpp"
#include "dperm/accounting/budget.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace dperm {
namespace {

TEST(ReleaseBoundedSums, ScaleFollowsTheDerivation) {
  SecureRng rng = SecureRng::FromSeed(7);
  NoisySums r = ReleaseBoundedSums({10, 20}, {1, 10}, 0.5, rng);
  ASSERT_EQ(r.values.size(), 2u);
  EXPECT_DOUBLE_EQ(r.l1_sensitivity, 2 * (1 + r.grid));
  EXPECT_DOUBLE_EQ(r.scale, r.l1_sensitivity / 0.5);
  EXPECT_LE(r.grid, 4.0 / 1024);  // at most 2^-10 of the noise scale 2/0.5
  // Normalised values are grid multiples.
  for (int i = 0; i < 2; i++) {
    double u = r.values[i] / (i == 0 ? 1 : 10);
    EXPECT_EQ(u / r.grid, std::round(u / r.grid));
  }
}

// What dperm.explain_query shows of a noisy count is what the release draws
// with: the same grid, Delta_1 and scale, from m, epsilon and slack alone.
TEST(BoundedSumsNoise, MatchesTheRelease) {
  for (double epsilon : {0.05, 0.1, 1.0, 7.0}) {
    SecureRng rng = SecureRng::FromSeed(3);
    const double slack = std::ldexp(1.0, -40);
    NoisySums drawn = ReleaseBoundedSums({42}, {1}, epsilon, rng, slack);
    NoisySums planned = BoundedSumsNoise(1, epsilon, slack);
    EXPECT_TRUE(planned.values.empty());
    EXPECT_EQ(planned.grid, drawn.grid);
    EXPECT_EQ(planned.l1_sensitivity, drawn.l1_sensitivity);
    EXPECT_EQ(planned.scale, drawn.scale);
  }
  EXPECT_THROW(BoundedSumsNoise(1, 0), Error);
}

TEST(ReleaseBoundedSums, UnbiasedWithLaplaceSpread) {
  SecureRng rng = SecureRng::FromSeed(8);
  const int n = 20000;
  double sum = 0, sq = 0, scale = 0;
  for (int i = 0; i < n; i++) {
    NoisySums r = ReleaseBoundedSums({100.0}, {2.0}, 1.0, rng);
    double z = r.values[0] / 2.0 - 50.0;  // normalised noise
    sum += z;
    sq += z * z;
    scale = r.scale;
  }
  // Laplace(b): mean 0, variance 2 b^2 (discrete Laplace on a fine grid: within 1%).
  double var = 2 * scale * scale;
  EXPECT_NEAR(sum / n, 0.0, 5 * std::sqrt(var / n));
  EXPECT_NEAR(sq / n / var, 1.0, 0.05);
}

TEST(ReleaseBoundedSums, RefusesBadBounds) {
  SecureRng rng = SecureRng::FromSeed(9);
  EXPECT_THROW(ReleaseBoundedSums({1}, {0}, 1, rng), Error);
  EXPECT_THROW(ReleaseBoundedSums({1}, {1}, 0, rng), Error);
  EXPECT_THROW(ReleaseBoundedSums({1, 2}, {1}, 1, rng), Error);
}

TEST(PureDpRdpCurve, MinOfEpsilonAndZcdp) {
  std::vector<double> curve = PureDpRdpCurve(0.5);
  ASSERT_EQ(curve.size(), LedgerOrders().size());
  for (size_t i = 0; i < curve.size(); i++)
    EXPECT_DOUBLE_EQ(curve[i], std::min(0.5, LedgerOrders()[i] * 0.125));
}

}  // namespace
}  // namespace dperm
