// Unit tests for the Gaussian mechanism's δ(ε) curve and its calibration
// (analytic_gaussian.hpp), against ../shared/accounting/analytic_gaussian.csv.
#include "dperm/accounting/analytic_gaussian.hpp"

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

using Row = testing::CsvRow;
using testing::ExpectInvalid;
using testing::ReadAccountingCsv;

// README.md tolerances: sigma relative 1e-6, sigma_classic relative 1e-12.
TEST(AnalyticGaussianSigma, MatchesEveryReferenceRow) {
  DPERM_SKIP_WITHOUT_SHARED("accounting");
  const std::vector<Row> rows = ReadAccountingCsv("analytic_gaussian.csv");
  ASSERT_FALSE(rows.empty()) << "no rows in analytic_gaussian.csv";
  double max_rel = 0.0;
  for (const Row& row : rows) {
    const double eps = row.at("epsilon"), delta = row.at("delta");
    const double sens = row.at("sensitivity"), target = row.at("sigma");
    const double sigma = AnalyticGaussianSigma(eps, delta, sens);
    const double rel = std::fabs(sigma - target) / target;
    max_rel = std::max(max_rel, rel);
    EXPECT_LE(rel, 1e-6) << "eps " << eps << " delta " << delta;
    EXPECT_LE(GaussianDelta(sigma, eps, sens), delta);
    EXPECT_GT(GaussianDelta(sigma * (1 - 1e-6), eps, sens), delta);
    const double classic = row.at("sigma_classic");
    EXPECT_NEAR(ClassicGaussianSigma(eps, delta, sens), classic, 1e-12 * classic);
  }
  std::cout << "[ info ] " << rows.size() << " rows, max relative error " << max_rel << "\n";
  RecordProperty("max_relative_error", std::to_string(max_rel));
}

// Values of the exact formula computed with mpmath at 80 digits.
TEST(GaussianDelta, MatchesHighPrecisionValues) {
  struct Case {
    double sigma, eps, delta;
  };
  const Case cases[] = {
      {1.0, 0.0, 0.38292492254802620728},  // 2Φ(1/2) − 1
      {1.0, 1.0, 0.1269367375066439458},
      {0.5, 20.0, 2.0160288013060390096e-20},
      {30.0, 1.0, 8.9675631000110644749e-201},
      {0.0227, 1e3, 0.24318715197151264944},
      {0.000022362812310894160633, 1e9, 1e-5},
      // Tiny Δ/σ, where R(u) − R(v) would cancel: the integral path.
      {1e5, 0.0, 3.9894228039977041844e-6},
      {1e5, 1e-8, 3.9844248186310640338e-6},
      {5.6e8, 4.8e-8, 1.2465724119158711917e-169},
      {38021.98146874745005, 1e-6, 1e-5},
  };
  // 1e-9 allows for the conditioning at ε = 1e9 (d log δ / d log σ ≈ 1e5);
  // elsewhere the agreement is ~1e-13.
  for (const Case& c : cases)
    EXPECT_NEAR(GaussianDelta(c.sigma, c.eps, 1.0), c.delta, 1e-9 * c.delta)
        << "sigma " << c.sigma << " eps " << c.eps;
  // Far below double range the value underflows to 0, never NaN or negative.
  EXPECT_EQ(GaussianDelta(1e-4, 1e9, 1.0), 0.0);
  EXPECT_EQ(GaussianDelta(37.0, 2.0, 1.0), 0.0);
}

// Roots computed with mpmath (80 digits) in regimes outside the CSV.
TEST(AnalyticGaussianSigma, ExtremeRegimesMatchHighPrecisionRoots) {
  struct Case {
    double eps, delta, sigma;
  };
  const Case cases[] = {
      {1e9, 1e-5, 0.000022362812310894160633}, {1e9, 1e-300, 0.000022379210984389525986},
      {1e3, 1e-5, 0.024581783351654279457},    {1e3, 1e-300, 0.04753766013224315527},
      {0.01, 1e-300, 3672.7201034055684521},   {1e-6, 1e-5, 38021.98146874745005},
      {0.05, 0.999, 0.15162787165812010547},
  };
  for (const Case& c : cases) {
    const double sigma = AnalyticGaussianSigma(c.eps, c.delta);
    EXPECT_NEAR(sigma, c.sigma, 1e-9 * c.sigma) << "eps " << c.eps << " delta " << c.delta;
    EXPECT_LE(GaussianDelta(sigma, c.eps, 1.0), c.delta);
  }
}

TEST(AnalyticGaussianSigma, NeverUnsafeAndTightOnAGrid) {
  for (double eps : {1e-8, 1e-3, 0.1, 1.0, 3.0, 30.0, 1e3, 1e6, 1e9}) {
    for (double delta : {0.5, 1e-2, 1e-5, 1e-10, 1e-50, 1e-150, 1e-300}) {
      const double sigma = AnalyticGaussianSigma(eps, delta);
      ASSERT_TRUE(std::isfinite(sigma) && sigma > 0.0);
      EXPECT_LE(GaussianDelta(sigma, eps, 1.0), delta) << "eps " << eps << " delta " << delta;
      EXPECT_GT(GaussianDelta(sigma * (1 - 1e-6), eps, 1.0), delta)
          << "eps " << eps << " delta " << delta;
    }
  }
}

TEST(AnalyticGaussianSigma, DecreasesInEpsilonAndDelta) {
  const double epsilons[] = {0.01, 0.05, 0.1, 0.5, 1, 2, 4, 8, 16, 100, 1e3};
  const double deltas[] = {0.1, 1e-3, 1e-5, 1e-8, 1e-12, 1e-20};
  for (double delta : deltas) {
    double prev = std::numeric_limits<double>::infinity();
    for (double eps : epsilons) {
      const double sigma = AnalyticGaussianSigma(eps, delta);
      EXPECT_LT(sigma, prev) << "eps " << eps << " delta " << delta;
      prev = sigma;
    }
  }
  for (double eps : epsilons) {
    double prev = 0.0;
    for (double delta : deltas) {  // deltas decrease, so sigma increases
      const double sigma = AnalyticGaussianSigma(eps, delta);
      EXPECT_GT(sigma, prev) << "eps " << eps << " delta " << delta;
      prev = sigma;
    }
  }
}

TEST(AnalyticGaussianSigma, LargeEpsilonGivesFiniteTinySigma) {
  for (double eps : {1e3, 1e9}) {
    for (double delta : {1e-5, 1e-300}) {
      double sigma = 0.0;
      EXPECT_NO_THROW(sigma = AnalyticGaussianSigma(eps, delta));
      EXPECT_TRUE(std::isfinite(sigma));
      EXPECT_GT(sigma, 0.0);
      EXPECT_LT(sigma, 0.1);
    }
  }
}

TEST(AnalyticGaussianSigma, ScalesWithSensitivity) {
  const double base = AnalyticGaussianSigma(0.7, 1e-6, 1.0);
  for (double sens : {1e-3, 0.25, 4.0, 1e4}) {
    const double sigma = AnalyticGaussianSigma(0.7, 1e-6, sens);
    EXPECT_NEAR(sigma, sens * base, 1e-12 * sens * base);
    EXPECT_LE(GaussianDelta(sigma, 0.7, sens), 1e-6);
  }
}

// Balle & Wang 2018, Sec. 3: the classical calibration is never tighter
// than the exact one where it applies (ε ≤ 1).
TEST(ClassicGaussianSigma, NotSmallerThanAnalyticForEpsilonAtMostOne) {
  for (double eps : {1e-4, 0.01, 0.1, 0.3, 0.5, 0.9, 1.0}) {
    for (double delta : {0.5, 0.1, 1e-3, 1e-5, 1e-8, 1e-12, 1e-50}) {
      EXPECT_GE(ClassicGaussianSigma(eps, delta, 1.0), AnalyticGaussianSigma(eps, delta, 1.0))
          << "eps " << eps << " delta " << delta;
    }
  }
}

// Every invalid input is a kInvalidParameter error with a message.
TEST(AnalyticGaussianArguments, InvalidArgumentsThrow) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (double eps : {0.0, -1.0, nan, inf}) {
    ExpectInvalid([&] { AnalyticGaussianSigma(eps, 1e-5); });
    ExpectInvalid([&] { ClassicGaussianSigma(eps, 1e-5, 1.0); });
  }
  for (double delta : {0.0, 1.0, -0.1, 1.5, nan, inf}) {
    ExpectInvalid([&] { AnalyticGaussianSigma(1.0, delta); });
    ExpectInvalid([&] { ClassicGaussianSigma(1.0, delta, 1.0); });
  }
  for (double sens : {0.0, -2.0, nan, inf}) {
    ExpectInvalid([&] { AnalyticGaussianSigma(1.0, 1e-5, sens); });
    ExpectInvalid([&] { ClassicGaussianSigma(1.0, 1e-5, sens); });
    ExpectInvalid([&] { GaussianDelta(1.0, 1.0, sens); });
  }
  for (double sigma : {0.0, -1.0, nan, inf}) ExpectInvalid([&] { GaussianDelta(sigma, 1.0, 1.0); });
  for (double eps : {-1.0, nan, inf}) ExpectInvalid([&] { GaussianDelta(1.0, eps, 1.0); });
}

}  // namespace
}  // namespace dperm
