// Unit tests for noise calibration (calibrate.hpp) against
// $DPERM_SHARED/accounting/noise_calibration.csv, plus safety properties.
#include "dperm/accounting/calibrate.hpp"

#include "dperm/accounting/rdp.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "reference_csv.hpp"
#include "test_helpers.hpp"

namespace dperm {
namespace {

using testing::CsvRow;
using testing::ExpectInvalid;
using testing::ReadAccountingCsv;

// README: noise_multiplier within 1e-4 relative, best_order exact.
TEST(CalibratePoissonSubsampledGaussianRdp, MatchesEveryReferenceRow) {
  DPERM_SKIP_WITHOUT_SHARED("accounting");
  const std::vector<CsvRow> rows = ReadAccountingCsv("noise_calibration.csv");
  ASSERT_FALSE(rows.empty());
  double worst = 0.0;
  for (const CsvRow& row : rows) {
    const double q = row.at("q"), target = row.at("target_epsilon");
    const auto steps = static_cast<std::int64_t>(row.at("steps"));
    const double delta = row.at("delta"), want = row.at("noise_multiplier");
    const std::string where = "q " + std::to_string(q) + " steps " + std::to_string(steps) +
                              " target " + std::to_string(target);
    const double sigma = CalibratePoissonSubsampledGaussianRdp(q, steps, target, delta);
    const double rel = std::fabs(sigma - want) / want;
    worst = std::max(worst, rel);
    EXPECT_LE(rel, 1e-4) << where;
    double best_order = 0.0;
    const double eps = EpsilonPoissonSubsampledGaussianRdp(q, sigma, steps, delta, &best_order);
    EXPECT_LE(eps, target) << where;
    EXPECT_EQ(best_order, row.at("best_order")) << where;
    EXPECT_GT(EpsilonPoissonSubsampledGaussianRdp(q, sigma * (1 - 1e-6), steps, delta), target)
        << where;
  }
  std::cout << "[ info ] noise_calibration.csv: " << rows.size() << " rows, worst relative error "
            << worst << "\n";
  RecordProperty("max_relative_error", std::to_string(worst));
}

// Never undershoots: ε(σ) ≤ target, and σ is minimal to 1e-6 relative.
TEST(CalibratePoissonSubsampledGaussianRdp, SafeAndTightOnASweep) {
  const double delta = 1e-6;
  for (double q : {0.001, 0.03, 0.5, 1.0}) {
    for (std::int64_t steps : {1, 50, 3000}) {
      for (double target : {0.05, 0.4, 1.0, 3.0, 12.0, 60.0}) {
        const std::string where = "q " + std::to_string(q) + " steps " + std::to_string(steps) +
                                  " target " + std::to_string(target);
        const double sigma = CalibratePoissonSubsampledGaussianRdp(q, steps, target, delta);
        ASSERT_TRUE(std::isfinite(sigma) && sigma > 0.0) << where;
        EXPECT_LE(EpsilonPoissonSubsampledGaussianRdp(q, sigma, steps, delta), target) << where;
        EXPECT_GT(EpsilonPoissonSubsampledGaussianRdp(q, sigma * (1 - 1e-6), steps, delta), target)
            << where;
      }
    }
  }
}

// A closed-form ε(σ) = c/σ: the root is c/target, approached from above.
TEST(CalibrateNoiseMultiplier, FindsTheRootOfASmoothCurve) {
  for (double c : {1e-3, 0.7, 5.0, 3e4}) {
    for (double target : {0.01, 1.0, 8.0}) {
      auto eps = [c](double sigma) { return c / sigma; };
      const double root = c / target;
      if (root < 1e-6 || root > 1e6) continue;
      const double sigma = CalibrateNoiseMultiplier(eps, target);
      EXPECT_LE(eps(sigma), target);
      EXPECT_NEAR(sigma, root, 1e-12 * root) << "c " << c << " t " << target;
    }
  }
}

// At a jump of ε(σ) the answer is the jump point, from the safe side.
TEST(CalibrateNoiseMultiplier, StepFunctionGivesSafeSide) {
  auto eps = [](double sigma) { return sigma < 2.5 ? 5.0 : 1.0; };
  const double sigma = CalibrateNoiseMultiplier(eps, 3.0);
  EXPECT_GE(sigma, 2.5);
  EXPECT_NEAR(sigma, 2.5, 1e-12);
}

TEST(CalibrateNoiseMultiplier, UnreachableOrBadTargetsThrow) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // ε never drops to the target (it floors at 10).
  ExpectInvalid([] { CalibrateNoiseMultiplier([](double s) { return 10.0 + 1 / s; }, 5); },
                "is not reached by any noise multiplier");
  // ε already meets the target for any σ: the target does not constrain σ.
  ExpectInvalid([] { CalibrateNoiseMultiplier([](double) { return 0.0; }, 1.0); },
                "is already met at noise multiplier");
  for (double target : {0.0, -1.0, nan, inf})
    ExpectInvalid([&] { CalibrateNoiseMultiplier([](double s) { return 1 / s; }, target); },
                  "target epsilon must be");
  ExpectInvalid([] { CalibratePoissonSubsampledGaussianRdp(0.0, 10, 1, 1e-5); }, "sampling rate q");
  ExpectInvalid([] { CalibratePoissonSubsampledGaussianRdp(1.5, 10, 1, 1e-5); }, "sampling rate q");
  ExpectInvalid([] { CalibratePoissonSubsampledGaussianRdp(0.1, 0, 1, 1e-5); },
                "steps must be at least 1");
  ExpectInvalid([] { CalibratePoissonSubsampledGaussianRdp(0.1, 10, 1, 1.0); }, "delta must be");
  // A NaN from the accountant is a broken invariant, not a user error.
  testing::ExpectError(
      ErrorKind::kInternal, [nan] { CalibrateNoiseMultiplier([nan](double) { return nan; }, 1.0); },
      "epsilon is NaN");
}

}  // namespace
}  // namespace dperm
