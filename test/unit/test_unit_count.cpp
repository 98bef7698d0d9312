// The count's share of a release's epsilon (unit_count.hpp): the rule
// against its formula, its floor and cap, the exact split, that it shrinks
// with the estimate, and the precision it promises, by the discrete
// Laplace's own scale (BoundedSumsNoise, what ReleaseUnitCount draws).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "dperm/model/evaluate.hpp"
#include "dperm/options/options.hpp"
#include "dperm/planning/unit_count.hpp"
#include "dperm/util/errors.hpp"

namespace dperm::testing {
namespace {

TEST(UnitCount, NoEstimateKeepsATenth) {
  // Up to the exact split's rounding of the model's part (an ulp of epsilon).
  for (double e : {0.01, 0.3, 1.0, 3.0, 10.0})
    EXPECT_NEAR(UnitCountEpsilon(e, 0), e / 10, 1e-15 * e);
}

TEST(UnitCount, FollowsTheFormulaBetweenFloorAndCap) {
  const double c = 100 * std::sqrt(2.0);
  for (double e : {0.1, 1.0, 8.0})
    for (int64_t n : {int64_t(1), int64_t(100), int64_t(1000), int64_t(5000), int64_t(20000),
                      int64_t(1000000), int64_t(1) << 40}) {
      const double want = std::min(e / 10, std::max(e / 100, c / double(n)));
      EXPECT_NEAR(UnitCountEpsilon(e, n), want, 1e-15 * e) << e << " " << n;
      EXPECT_LE(UnitCountEpsilon(e, n), e / 10 * (1 + 1e-15));
      EXPECT_GE(UnitCountEpsilon(e, n), e / 100 * (1 - 1e-15));
    }
  // At epsilon = 1: the cap up to N = 1414, C / N between, the floor from
  // N = 14142 on.
  EXPECT_NEAR(UnitCountEpsilon(1, 1000), 0.1, 1e-15);
  EXPECT_NEAR(UnitCountEpsilon(1, 5000), c / 5000, 1e-15);
  EXPECT_NEAR(UnitCountEpsilon(1, 20000), 0.01, 1e-15);
}

TEST(UnitCount, ShrinksWithTheEstimate) {
  double last = UnitCountEpsilon(1, 0);
  for (int64_t n = 1; n < (int64_t(1) << 30); n *= 3) {
    const double e = UnitCountEpsilon(1, n);
    EXPECT_LE(e, last) << n;
    last = e;
  }
  EXPECT_LT(UnitCountEpsilon(1, 100000), UnitCountEpsilon(1, 0) / 5);
}

TEST(UnitCount, SplitIsExact) {
  for (double e : {0.037, 0.5, 1.0, 2.7, 9.99})
    for (int64_t n : {int64_t(0), int64_t(17), int64_t(3000), int64_t(123456789)}) {
      const double count = UnitCountEpsilon(e, n);
      const double model = e - count;
      // The two parts add up to epsilon exactly (the charge sums them), and
      // the count is the rule's share itself where that already holds (0.1
      // of 1 shows as 0.1).
      EXPECT_EQ(model + count, e) << e << " " << n;
    }
}

TEST(UnitCount, ATenthOfOneIsShownAsATenth) { EXPECT_EQ(UnitCountEpsilon(1.0, 0), 0.1); }

TEST(UnitCount, NothingForNoEpsilon) {
  EXPECT_EQ(UnitCountEpsilon(0, 100), 0);
  EXPECT_EQ(UnitCountEpsilon(-1, 100), 0);
  EXPECT_EQ(UnitCountEpsilon(std::nan(""), 100), 0);
}

// The promise behind C: between floor and cap, the count's relative
// standard deviation at the estimate is at most 1 % of a unit's Delta_1,
// measured on the discrete Laplace ReleaseUnitCount draws (scale b =
// Delta_1 / epsilon_c: sd = sqrt(2) b; Delta_1 = 1 + the grid, which
// BoundedSumsNoise raises to 1/4 at the smallest epsilon_c here), so at
// most 1.25 % in all: "a percent or so".
TEST(UnitCount, CountIsWithinAPercentAtTheEstimate) {
  int below_cap = 0;
  for (double e : {0.3, 1.0, 3.0})
    for (int64_t n : {int64_t(2000), int64_t(10000), int64_t(100000), int64_t(10000000)}) {
      const double count = UnitCountEpsilon(e, n);
      if (count >= e / 10 * (1 - 1e-12)) continue;  // capped: C / N above a tenth
      below_cap++;
      const NoisySums noise = BoundedSumsNoise(1, count, 0x1p-40);
      const double sd = std::sqrt(2.0) * noise.scale;
      const double delta1 = noise.scale * count;
      EXPECT_LE(delta1, 1.25 + 1e-9);
      EXPECT_LE(sd / double(n), 0.01 * delta1 * (1 + 1e-12)) << e << " " << n;
      EXPECT_LE(sd / double(n), 0.0125 * (1 + 1e-12)) << e << " " << n;
    }
  EXPECT_GE(below_cap, 8);
}

TEST(UnitCount, OptionParses) {
  OptionEntry entries[2];
  entries[0].key = "epsilon";
  entries[0].kind = OptionEntry::Kind::kNumber;
  entries[0].number = 1;
  entries[1].key = "units_estimate";
  entries[1].kind = OptionEntry::Kind::kNumber;
  entries[1].number = 5000;
  EXPECT_EQ(ParseOptions(entries, 2).units_estimate, 5000);
  entries[1].number = 0;
  EXPECT_THROW(ParseOptions(entries, 2), Error);
  entries[1].number = 1.5;
  EXPECT_THROW(ParseOptions(entries, 2), Error);
}

TEST(UnitCount, RuleText) {
  EXPECT_STREQ(UnitCountRule(0), "epsilon / 10 (no units_estimate)");
  EXPECT_NE(std::string(UnitCountRule(5000)).find("units_estimate"), std::string::npos);
}

}  // namespace
}  // namespace dperm::testing
