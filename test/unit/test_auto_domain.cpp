// Private domains (auto_domain.hpp): the public grid, the exponential
// mechanism's quantile on known data, its noise against epsilon, and a spec
// with "bounds": "auto" parsed, refused where it must be, resolved and stated.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dperm/model/auto_domain.hpp"
#include "dperm/model/feature_spec.hpp"
#include "dperm/util/errors.hpp"

namespace {

int GridIndex(double v) {
  const std::vector<double>& g = dperm::AutoBoundsGrid();
  return int(std::find(g.begin(), g.end(), v) - g.begin());
}

TEST(AutoDomain, GridIsPublicSortedAndSymmetric) {
  const std::vector<double>& g = dperm::AutoBoundsGrid();
  ASSERT_EQ(g.size(), 133u);  // 0 and +-{1,2,5} 10^k, k = -6..15
  EXPECT_TRUE(std::is_sorted(g.begin(), g.end()));
  for (size_t i = 0; i < g.size(); i++) EXPECT_EQ(g[i], -g[g.size() - 1 - i]);
  EXPECT_LT(GridIndex(1), int(g.size()));
  EXPECT_LT(GridIndex(-5e15), int(g.size()));
}

TEST(AutoDomain, CountsBelowAndAtOrBelow) {
  dperm::QuantileCounts counts;
  for (double x : std::vector<double>{1.0, 1.0, 2.0, 3.0, NAN}) counts.Add(x);
  EXPECT_EQ(counts.n(), 4);  // NaN skipped
  const std::vector<int64_t> below = counts.Below(), at = counts.AtOrBelow();
  EXPECT_EQ(below[size_t(GridIndex(1))], 0);
  EXPECT_EQ(at[size_t(GridIndex(1))], 2);
  EXPECT_EQ(below[size_t(GridIndex(2))], 2);
  EXPECT_EQ(at[size_t(GridIndex(2))], 3);
  EXPECT_EQ(below[size_t(GridIndex(5))], 4);
}

// 10000 values 0.00, 0.01, ..., 99.99: the 1% quantile is 1 (a candidate,
// #{x < 1} = 100 = q n exactly); the 99% quantile 99 lies between the
// candidates 50 (#{x <= 50} = 5001) and 100 (10000, like every candidate
// above it): the base measure divides by 4 each step past 100, so 100 is
// drawn with probability about 3/4, 100 or 200 about 15/16.
TEST(AutoDomain, QuantilesOfAKnownDistribution) {
  dperm::QuantileCounts counts;
  for (int i = 0; i < 10000; i++) counts.Add(i * 0.01);
  dperm::SecureRng rng = dperm::SecureRng::FromSeed(47);
  int lo_one = 0, hi_near = 0, hi_at_100 = 0;
  const int draws = 400;
  for (int t = 0; t < draws; t++) {
    const dperm::AutoBounds b = dperm::ChooseAutoBounds(counts, 1.0, rng);
    lo_one += b.lo == 1;
    hi_near += b.hi == 100 || b.hi == 200;
    hi_at_100 += b.hi == 100;
    EXPECT_LT(b.lo, b.hi);
    EXPECT_GE(b.hi, 100);  // 50 has utility -4899: weight exp(-1200)
  }
  EXPECT_EQ(lo_one, draws);  // 2 has utility -100 at epsilon 0.5: exp(-25)
  // Binomial(400, 15/16) and (400, 3/4): mean +- 4.5 sd.
  const double p_near = 15.0 / 16, p_100 = 3.0 / 4;
  EXPECT_NEAR(hi_near, draws * p_near, 4.5 * std::sqrt(draws * p_near * (1 - p_near)));
  EXPECT_NEAR(hi_at_100, draws * p_100, 4.5 * std::sqrt(draws * p_100 * (1 - p_100)));
}

// The mechanism's noise against epsilon: the probability of a candidate one
// step from the best is its weight ratio exp(-epsilon |du| / 2) times the
// base measure, measured at two epsilons.
TEST(AutoDomain, NoiseScalesWithEpsilon) {
  // Counts 0 at candidate 0, 10 at candidate 1, 20 at candidate 2: the
  // 10-quantile of n = 20 (q = 0.5) is candidate 1, the others at u = -10.
  const std::vector<int64_t> counts = {0, 10, 20};
  for (double epsilon : {0.1, 0.4}) {
    dperm::SecureRng rng = dperm::SecureRng::FromSeed(7);
    std::vector<int> hits(3, 0);
    const int draws = 20000;
    for (int t = 0; t < draws; t++)
      hits[size_t(dperm::PrivateQuantileIndex(counts, 20, 0.5, epsilon, 0, rng))]++;
    const double off = std::exp(-epsilon * 10 / 2);
    const double p_best = 1 / (1 + 2 * off);
    EXPECT_NEAR(hits[1] / double(draws), p_best, 4.5 * std::sqrt(p_best * (1 - p_best) / draws))
        << "epsilon " << epsilon;
    EXPECT_NEAR(hits[0] / double(draws), off * p_best, 4.5 * std::sqrt(off * p_best / draws));
  }
}

TEST(AutoDomain, SpecParsesResolvesAndStates) {
  dperm::FeatureSpec s = dperm::ParseFeatureSpec(
      R"([{"column": "age", "bounds": "auto"}, {"column": "home", "values": ["own", "rent"]}])");
  ASSERT_EQ(s.dimension(), 3);
  EXPECT_EQ(s.auto_columns(), 1);
  EXPECT_NE(dperm::FeatureSpecJson(s).find(R"("bounds":"auto")"), std::string::npos);
  dperm::ResolveAutoBounds(&s, 0, 10, 100, 0.05);
  EXPECT_EQ(s.auto_columns(), 0);
  const std::string stated = dperm::FeatureSpecJson(s);
  EXPECT_NE(stated.find(R"("bounds":[10,100])"), std::string::npos) << stated;
  EXPECT_NE(stated.find(R"("private_bounds":{"epsilon":0.05)"), std::string::npos) << stated;
  // The stated spec reads back to the same encoding (prediction uses it).
  const dperm::FeatureSpec back = dperm::ParseFeatureSpec(stated);
  EXPECT_EQ(back.columns[0].lo, 10);
  EXPECT_EQ(back.columns[0].hi, 100);
  EXPECT_EQ(back.columns[0].auto_epsilon, 0.05);
  EXPECT_EQ(back.auto_columns(), 0);
}

TEST(AutoDomain, RefusesAutoValuesAndAnAutoLabel) {
  EXPECT_THROW(dperm::ParseFeatureSpec(R"({"c": {"values": "auto"}})"), dperm::Error);
  EXPECT_THROW(dperm::ParseFeatureSpec(
                   R"({"x": {"bounds": [0, 1]}, "y": {"bounds": "auto", "label": true}})"),
               dperm::Error);
  EXPECT_THROW(
      dperm::ParseFeatureSpec(R"({"x": {"bounds": "auto", "private_bounds": {"epsilon": 1}}})"),
      dperm::Error);
}

}  // namespace
