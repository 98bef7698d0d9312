// Unit tests for the RDP accountant (rdp.hpp, rdp_poisson.hpp) against
// $DPERM_SHARED/accounting/rdp_subsampled_gaussian.csv and rdp_to_eps.csv
// (tolerances from that folder's README.md), plus properties.
#include "dperm/accounting/rdp.hpp"
#include "dperm/accounting/rdp_poisson.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "reference_csv.hpp"
#include "test_helpers.hpp"

namespace dperm {
namespace {

using testing::CsvRow;
using testing::ExpectInvalid;
using testing::ReadAccountingCsv;

constexpr double kInf = std::numeric_limits<double>::infinity();

// README: pass if |x − rdp| ≤ max(1e-6·rdp, 1e-13·steps) on every row.
TEST(RdpPoissonSubsampledGaussian, MatchesEveryReferenceRow) {
  DPERM_SKIP_WITHOUT_SHARED("accounting");
  const std::vector<CsvRow> rows = ReadAccountingCsv("rdp_subsampled_gaussian.csv");
  ASSERT_FALSE(rows.empty());
  double worst = 0.0, worst_frac = 0.0;
  for (const CsvRow& row : rows) {
    const double q = row.at("q"), sigma = row.at("noise_multiplier");
    const double steps = row.at("steps"), order = row.at("order");
    const double target = row.at("rdp");
    const double x = steps * RdpPoissonSubsampledGaussian(q, sigma, order);
    EXPECT_LE(std::fabs(x - target), std::max(1e-6 * target, 1e-13 * steps))
        << "q " << q << " sigma " << sigma << " steps " << steps << " order " << order << ": " << x
        << " vs " << target;
    const double rel = std::fabs(x - target) / target;
    worst = std::max(worst, rel);
    if (order != std::floor(order)) worst_frac = std::max(worst_frac, rel);
  }
  std::cout << "[ info ] rdp_subsampled_gaussian.csv: " << rows.size()
            << " rows, worst relative error " << worst << " (fractional orders " << worst_frac
            << ")\n";
  RecordProperty("max_relative_error", std::to_string(worst));
  // Far inside the README tolerance: quadrature and the exact sum are
  // accurate to ~1e-13, the series is only used when it is.
  EXPECT_LE(worst, 1e-9);
}

// README: epsilon_improved and epsilon_classic within 1e-4 relative, best
// orders exact; our own RDP on the 24 standard orders is the input.
TEST(RdpToEpsilon, MatchesEveryReferenceRow) {
  DPERM_SKIP_WITHOUT_SHARED("accounting");
  const std::vector<CsvRow> rows = ReadAccountingCsv("rdp_to_eps.csv");
  ASSERT_FALSE(rows.empty());
  const std::vector<double> orders = StandardOrders();
  double worst_improved = 0.0, worst_classic = 0.0;
  for (const CsvRow& row : rows) {
    const double q = row.at("q"), sigma = row.at("noise_multiplier");
    const auto steps = static_cast<std::int64_t>(row.at("steps"));
    const double delta = row.at("delta");
    const std::vector<double> curve = RdpPoissonSubsampledGaussianCurve(q, sigma, steps, orders);
    int best = -1, best_classic = -1;
    const double eps = RdpToEpsilon(orders, curve, delta, &best);
    const double classic = RdpToEpsilonClassic(orders, curve, delta, &best_classic);
    const double want = row.at("epsilon_improved");
    const double want_classic = row.at("epsilon_classic");
    const std::string where = "q " + std::to_string(q) + " sigma " + std::to_string(sigma) +
                              " steps " + std::to_string(steps) + " delta " + std::to_string(delta);
    const double rel = std::fabs(eps - want) / want;
    const double rel_classic = std::fabs(classic - want_classic) / want_classic;
    worst_improved = std::max(worst_improved, rel);
    worst_classic = std::max(worst_classic, rel_classic);
    EXPECT_LE(rel, 1e-4) << where;
    EXPECT_LE(rel_classic, 1e-4) << where;
    ASSERT_GE(best, 0) << where;
    ASSERT_GE(best_classic, 0) << where;
    EXPECT_EQ(orders[best], row.at("best_order_improved")) << where;
    EXPECT_EQ(orders[best_classic], row.at("best_order_classic")) << where;
    double best_order = 0.0;
    EXPECT_EQ(EpsilonPoissonSubsampledGaussianRdp(q, sigma, steps, delta, &best_order), eps);
    EXPECT_EQ(best_order, orders[best]);
  }
  std::cout << "[ info ] rdp_to_eps.csv: " << rows.size() << " rows, worst relative error improved "
            << worst_improved << ", classic " << worst_classic << "\n";
  RecordProperty("max_relative_error_improved", std::to_string(worst_improved));
  RecordProperty("max_relative_error_classic", std::to_string(worst_classic));
}

TEST(StandardOrders, IsTheReadmeGrid) {
  const std::vector<double> orders = StandardOrders();
  const std::vector<double> want = {1.25, 1.5, 1.75, 2,  2.25, 2.5, 3,  3.5, 4,  4.5, 5,   6,
                                    8,    10,  12,   14, 16,   20,  24, 28,  32, 64,  128, 256};
  EXPECT_EQ(orders, want);
}

// Mironov 2017, Prop. 7, and MTZ 2019 at q = 1: bit-for-bit α/(2σ²).
TEST(RdpPoissonSubsampledGaussian, FullBatchIsGaussianExactly) {
  for (double sigma : {0.1, 0.5, 0.8, 1.0, 1.7, 4.0, 1e3}) {
    for (double order : {1.001, 1.1, 1.25, 2.0, 2.5, 7.0, 256.0, 1e4}) {
      const double want = order / (2.0 * sigma * sigma);
      EXPECT_EQ(RdpPoissonSubsampledGaussian(1.0, sigma, order), want);
      EXPECT_EQ(RdpGaussian(sigma, order), want);
    }
  }
  EXPECT_EQ(RdpGaussian(2.0, 3.0), 3.0 / 8.0);
}

TEST(RdpPoissonSubsampledGaussian, ZeroRateIsZero) {
  for (double order : {1.5, 2.0, 32.0})
    EXPECT_EQ(RdpPoissonSubsampledGaussian(0.0, 1.0, order), 0.0);
  EXPECT_EQ(EpsilonPoissonSubsampledGaussianRdp(0.0, 1.0, 100, 1e-5), 0.0);
}

// Fractional orders in corners of the README's discussion (tiny RDP, where
// log-space series lose relative accuracy; slow series; large α), against
// 50-digit mpmath quadrature of A_α split at the modes.
TEST(RdpPoissonSubsampledGaussian, MatchesHighPrecisionFractionalOrders) {
  struct Case {
    double q, sigma, order, rdp;
  };
  const Case cases[] = {
      {0.001, 10.0, 1.25, 6.281306939397342886365094e-9},
      {0.5, 10.0, 1.1, 0.001377060014973601969572241},
      {0.01, 0.5, 10.5, 15.91007505759211299847186},
      {0.1, 2.0, 2.7, 0.003903232375289666590329444},
      {1e-5, 50.0, 1.5, 3.000600074004800138749582e-14},
      {0.3, 0.7, 33.3, 32.73834433258442687106825},
      {0.02, 1.0, 249.5, 120.8222344472663081028909},
  };
  for (const Case& c : cases)
    EXPECT_NEAR(RdpPoissonSubsampledGaussian(c.q, c.sigma, c.order), c.rdp, 1e-10 * c.rdp)
        << "q " << c.q << " sigma " << c.sigma << " order " << c.order;
}

// The three evaluations of log A_α agree where each applies: the exact sum
// and quadrature at integer orders, the series (when it reports itself
// accurate) and quadrature at fractional ones.
TEST(RdpPoissonSubsampledGaussian, SumSeriesAndQuadratureAgree) {
  int series_used = 0;
  for (double q : {1e-7, 1e-3, 0.02, 0.3, 0.7, 0.99, 0.999999}) {
    for (double sigma : {0.1, 0.3, 0.7, 1.0, 2.5, 6.0, 30.0, 300.0, 5000.0}) {
      for (int alpha : {2, 3, 5, 12, 40, 256, 1000}) {
        const double exact = LogAPoissonGaussianInteger(q, sigma, alpha);
        const double quad = LogAPoissonGaussianQuadrature(q, sigma, alpha);
        EXPECT_NEAR(quad, exact, 1e-10 * exact)
            << "q " << q << " sigma " << sigma << " alpha " << alpha;
      }
      for (double alpha : {1.01, 1.3, 2.6, 4.75, 9.9, 33.3, 249.5}) {
        const LogASeries series = LogAPoissonGaussianSeries(q, sigma, alpha);
        if (!series.converged || series.rel_error > 1e-10) continue;
        ++series_used;
        const double quad = LogAPoissonGaussianQuadrature(q, sigma, alpha);
        EXPECT_NEAR(series.log_a, quad, 1e-9 * quad)
            << "q " << q << " sigma " << sigma << " alpha " << alpha;
      }
    }
  }
  EXPECT_GT(series_used, 50);
}

// RDP is non-decreasing in α (van Erven & Harremoës 2014, Thm 3) and, for
// the subsampled Gaussian, increasing in q and decreasing in σ.
TEST(RdpPoissonSubsampledGaussian, MonotoneInOrderRateAndNoise) {
  const std::vector<double> orders = {1.05, 1.1, 1.25, 1.5,  1.9, 2,    2.5, 3,   3.7,
                                      4,    5.5, 8,    10.5, 16,  33.3, 64,  100, 256};
  for (double q : {1e-4, 1e-2, 0.2, 0.9}) {
    for (double sigma : {0.5, 1.0, 3.0, 20.0}) {
      double prev = 0.0;
      for (double order : orders) {
        const double r = RdpPoissonSubsampledGaussian(q, sigma, order);
        EXPECT_GE(r, prev) << "q " << q << " sigma " << sigma << " order " << order;
        EXPECT_LE(r, order / (2.0 * sigma * sigma) * (1 + 1e-12));
        prev = r;
      }
    }
  }
  for (double order : {1.25, 2.5, 8.0}) {
    double prev = 0.0;
    for (double q : {1e-4, 1e-3, 1e-2, 0.1, 0.5, 0.9, 1.0}) {
      const double r = RdpPoissonSubsampledGaussian(q, 1.3, order);
      EXPECT_GT(r, prev) << "q " << q << " order " << order;
      prev = r;
    }
    prev = kInf;
    for (double sigma : {0.4, 0.8, 1.0, 2.0, 5.0, 50.0}) {
      const double r = RdpPoissonSubsampledGaussian(0.05, sigma, order);
      EXPECT_LT(r, prev) << "sigma " << sigma << " order " << order;
      prev = r;
    }
  }
}

// ε(σ) decreases in σ and increases in q and in the number of steps.
TEST(EpsilonPoissonSubsampledGaussianRdp, MonotoneInNoiseRateAndSteps) {
  const double delta = 1e-5;
  for (double q : {0.001, 0.01, 0.1, 1.0}) {
    double prev = kInf;
    for (double sigma : {0.5, 0.7, 1.0, 1.5, 2.0, 4.0, 10.0, 40.0}) {
      const double eps = EpsilonPoissonSubsampledGaussianRdp(q, sigma, 1000, delta);
      EXPECT_LT(eps, prev) << "q " << q << " sigma " << sigma;
      prev = eps;
    }
  }
  double prev = 0.0;
  for (double q : {1e-4, 1e-3, 0.01, 0.05, 0.2, 0.6, 1.0}) {
    const double eps = EpsilonPoissonSubsampledGaussianRdp(q, 1.1, 500, delta);
    EXPECT_GT(eps, prev) << "q " << q;
    prev = eps;
  }
  prev = 0.0;
  for (std::int64_t steps : {1, 2, 10, 100, 1000, 10000, 100000}) {
    const double eps = EpsilonPoissonSubsampledGaussianRdp(0.01, 1.1, steps, delta);
    EXPECT_GT(eps, prev) << "steps " << steps;
    prev = eps;
  }
}

// Balle et al. 2020, Thm 21 improves on Mironov 2017, Prop. 3: the term
// log(1 − 1/α) − log(α)/(α−1) is negative for every α > 1.
TEST(RdpToEpsilon, ImprovedNeverAboveClassic) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> log_rdp(-12.0, 6.0);
  const std::vector<double> orders = StandardOrders();
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<double> rdp;
    for (size_t i = 0; i < orders.size(); ++i) rdp.push_back(std::exp(log_rdp(rng)));
    for (double delta : {0.3, 1e-3, 1e-5, 1e-10, 1e-50}) {
      EXPECT_LE(RdpToEpsilon(orders, rdp, delta), RdpToEpsilonClassic(orders, rdp, delta));
    }
  }
}

TEST(RdpToEpsilon, FormulaSpecialCasesAndTies) {
  const double delta = 1e-5;
  // One order: the two formulas by hand.
  const double a = 3.0, r = 0.7;
  EXPECT_DOUBLE_EQ(RdpToEpsilonClassic({a}, {r}, delta), r - std::log(delta) / (a - 1.0));
  EXPECT_DOUBLE_EQ(RdpToEpsilon({a}, {r}, delta),
                   r + std::log1p(-1.0 / a) - (std::log(delta) + std::log(a)) / (a - 1.0));
  // δ² + expm1(−rdp) > 0: that order gives ε = 0 (dp_accounting).
  int best = -1;
  EXPECT_EQ(RdpToEpsilon({2.0, 4.0}, {1.0, 1e-12}, 0.1, &best), 0.0);
  EXPECT_EQ(best, 1);
  // Clipped at 0 when the formula is negative (large δ, tiny RDP).
  EXPECT_EQ(RdpToEpsilon({64.0}, {1e-3}, 0.01), 0.0);
  // +inf orders and orders ≤ 1.01 are skipped.
  const std::vector<double> orders = {1.005, 2.0, 8.0};
  EXPECT_EQ(RdpToEpsilon(orders, {1e-9, kInf, 0.5}, delta, &best),
            RdpToEpsilon({8.0}, {0.5}, delta));
  EXPECT_EQ(best, 2);
  EXPECT_EQ(RdpToEpsilonClassic({2.0, 8.0}, {kInf, 0.5}, delta, &best),
            RdpToEpsilonClassic({8.0}, {0.5}, delta));
  EXPECT_EQ(best, 1);
  // Nothing usable: +inf and no index.
  EXPECT_EQ(RdpToEpsilon({2.0, 3.0}, {kInf, kInf}, delta, &best), kInf);
  EXPECT_EQ(best, -1);
  EXPECT_EQ(RdpToEpsilonClassic({2.0}, {kInf}, delta, &best), kInf);
  EXPECT_EQ(best, -1);
  // Exact ties go to the first order.
  EXPECT_EQ(RdpToEpsilon({4.0, 4.0}, {0.5, 0.5}, delta, &best), RdpToEpsilon({4.0}, {0.5}, delta));
  EXPECT_EQ(best, 0);
  RdpToEpsilonClassic({4.0, 4.0}, {0.5, 0.5}, delta, &best);
  EXPECT_EQ(best, 0);
}

TEST(RdpComposition, SumsCurves) {
  const std::vector<double> a = {0.1, 0.2, kInf}, b = {1.0, 0.0, 2.0};
  const std::vector<double> sum = ComposeRdp({a, b});
  EXPECT_EQ(sum, (std::vector<double>{1.1, 0.2, kInf}));
  EXPECT_EQ(SelfComposeRdp(a, 3), (std::vector<double>{0.1 * 3, 0.2 * 3, kInf}));
  const std::vector<double> orders = StandardOrders();
  const std::vector<double> one = RdpPoissonSubsampledGaussianCurve(0.01, 1.0, 1, orders);
  const std::vector<double> many = RdpPoissonSubsampledGaussianCurve(0.01, 1.0, 250, orders);
  EXPECT_EQ(SelfComposeRdp(one, 250), many);
}

TEST(RdpArguments, InvalidArgumentsThrow) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> orders = {2.0, 4.0}, rdp = {0.1, 0.2};
  for (double sigma : {0.0, -1.0, nan, kInf}) {
    ExpectInvalid([&] { RdpGaussian(sigma, 2.0); }, "sigma/sensitivity must be");
    ExpectInvalid([&] { RdpPoissonSubsampledGaussian(0.1, sigma, 2.0); }, "noise multiplier sigma");
    ExpectInvalid([&] { RdpSampledWithoutReplacementGaussian(0.1, sigma, 2); },
                  "noise multiplier sigma");
    ExpectInvalid([&] { EpsilonPoissonSubsampledGaussianRdp(0.1, sigma, 10, 1e-5); },
                  "noise multiplier sigma");
  }
  for (double q : {-0.1, 1.5, nan, kInf}) {
    ExpectInvalid([&] { RdpPoissonSubsampledGaussian(q, 1.0, 2.0); }, "sampling rate q");
    ExpectInvalid([&] { RdpSampledWithoutReplacementGaussian(q, 1.0, 2.0); },
                  "sampling fraction gamma");
  }
  ExpectInvalid([&] { RdpSampledWithoutReplacementGaussian(0.0, 1.0, 2.0); },
                "sampling fraction gamma");
  for (double order : {1.0, 0.5, -2.0, nan, kInf, 2e5}) {
    ExpectInvalid([&] { RdpPoissonSubsampledGaussian(0.1, 1.0, order); }, "RDP order");
    ExpectInvalid([&] { RdpSampledWithoutReplacementGaussian(0.1, 1.0, order); }, "RDP order");
  }
  for (double order : {1.0, 0.5, nan, kInf}) {
    ExpectInvalid([&] { RdpGaussian(1.0, order); }, "RDP order");
    ExpectInvalid([&] { RdpToEpsilon({order, 4.0}, rdp, 1e-5); }, "RDP order");
    ExpectInvalid([&] { RdpToEpsilonClassic({order, 4.0}, rdp, 1e-5); }, "RDP order");
  }
  for (double delta : {0.0, 1.0, -1e-5, 2.0, nan}) {
    ExpectInvalid([&] { RdpToEpsilon(orders, rdp, delta); }, "delta");
    ExpectInvalid([&] { RdpToEpsilonClassic(orders, rdp, delta); }, "delta");
    ExpectInvalid([&] { EpsilonPoissonSubsampledGaussianRdp(0.1, 1.0, 10, delta); },
                  "delta must be");
  }
  for (double bad : {-1e-9, nan}) {
    ExpectInvalid([&] { RdpToEpsilon(orders, {0.1, bad}, 1e-5); }, "RDP values must be >= 0");
    ExpectInvalid(
        [&] {
          RdpToEpsilonClassic(orders, {bad, 0.1}, 1e-5);
        },
        "RDP values must be >= 0");
    ExpectInvalid([&] { ComposeRdp({{0.1, bad}}); }, "RDP values must be >= 0");
    ExpectInvalid([&] { SelfComposeRdp({bad}, 2); }, "RDP values must be >= 0");
  }
  ExpectInvalid([&] { RdpToEpsilon({2.0}, rdp, 1e-5); }, "differ in length");
  ExpectInvalid([&] { RdpToEpsilonClassic({}, {}, 1e-5); }, "empty");
  ExpectInvalid([&] { ComposeRdp({}); }, "no RDP curves");
  ExpectInvalid([&] { ComposeRdp({{0.1}, {0.1, 0.2}}); }, "differ in length");
  ExpectInvalid([&] { SelfComposeRdp({0.1}, 0); }, "steps must be at least 1");
  for (std::int64_t steps : {0, -3}) {
    ExpectInvalid([&] { EpsilonPoissonSubsampledGaussianRdp(0.1, 1.0, steps, 1e-5); }, "steps");
    ExpectInvalid([&] { RdpPoissonSubsampledGaussianCurve(0.1, 1.0, steps, orders); },
                  "steps must be at least 1");
  }
  ExpectInvalid([&] { RdpPoissonSubsampledGaussianCurve(0.1, 1.0, 1, {}); }, "order list is empty");
}

// --- Sampling without replacement (Wang, Balle & Kasiviswanathan 2019) ---

// γ = 1 is the unsampled Gaussian at replace-one sensitivity 2.
TEST(RdpSampledWithoutReplacementGaussian, FullBatchIsGaussianAtSensitivity2) {
  for (double sigma : {0.3, 1.0, 2.5, 10.0}) {
    for (double order : {1.2, 2.0, 3.5, 10.0, 256.0}) {
      EXPECT_DOUBLE_EQ(RdpSampledWithoutReplacementGaussian(1.0, sigma, order),
                       RdpGaussian(sigma / 2.0, order));
    }
  }
}

// Non-decreasing in γ everywhere, and in α for σ ≤ 10, α ≤ 300 (where the
// Thm 9 sum is dominated by its e^{(j−1)ε(j)} terms); never above the
// unsampled value.
TEST(RdpSampledWithoutReplacementGaussian, MonotoneInRateAndOrder) {
  for (double sigma : {0.3, 0.5, 1.0, 2.0, 4.0, 10.0}) {
    for (double gamma : {1e-4, 1e-3, 0.01, 0.1, 0.5, 0.99}) {
      double prev = 0.0;
      for (int order = 2; order <= 300; ++order) {
        const double r = RdpSampledWithoutReplacementGaussian(gamma, sigma, order);
        EXPECT_GE(r, prev) << "gamma " << gamma << " sigma " << sigma << " order " << order;
        EXPECT_LE(r, 2.0 * order / (sigma * sigma));
        prev = r;
      }
    }
    for (double order : {2.0, 3.0, 7.5, 32.0, 256.0}) {
      double prev = 0.0;
      for (double gamma = 1e-4; gamma <= 1.0; gamma *= 1.2) {
        const double r = RdpSampledWithoutReplacementGaussian(gamma, sigma, order);
        EXPECT_GE(r, prev) << "gamma " << gamma << " sigma " << sigma << " order " << order;
        prev = r;
      }
      EXPECT_GE(RdpSampledWithoutReplacementGaussian(1.0, sigma, order), prev);
    }
  }
}

// Fractional α use the bound at ⌈α⌉, and α < 2 the bound at 2 (each capped
// by the unsampled value at α itself).
TEST(RdpSampledWithoutReplacementGaussian, FractionalOrdersUseNextInteger) {
  for (double sigma : {0.8, 3.0}) {
    for (double gamma : {0.001, 0.05}) {
      auto f = [&](double order) {
        return RdpSampledWithoutReplacementGaussian(gamma, sigma, order);
      };
      auto cap = [&](double order) { return 2.0 * order / (sigma * sigma); };
      EXPECT_EQ(f(1.25), std::min(f(2.0), cap(1.25)));
      EXPECT_EQ(f(1.9), std::min(f(2.0), cap(1.9)));
      EXPECT_EQ(f(2.5), std::min(f(3.0), cap(2.5)));
      EXPECT_EQ(f(10.01), std::min(f(11.0), cap(10.01)));
    }
  }
}

// For small γ the bound is O(γ²α/σ²): its leading term is
// γ²C(α,2)·4(e^{4/σ²}−1)/(α−1) = 2γ²α(e^{4/σ²}−1), far below 2α/σ².
TEST(RdpSampledWithoutReplacementGaussian, SmallRateIsQuadratic) {
  for (double sigma : {4.0, 10.0, 30.0}) {
    for (double order : {2.0, 3.0, 8.0, 32.0}) {
      const double gamma = 1e-8;
      const double lead = 2.0 * gamma * gamma * order * std::expm1(4.0 / (sigma * sigma));
      const double r = RdpSampledWithoutReplacementGaussian(gamma, sigma, order);
      EXPECT_NEAR(r, lead, 1e-3 * lead) << "sigma " << sigma << " order " << order;
      EXPECT_LE(r, 1e-9 * 2.0 * order / (sigma * sigma));
    }
    for (double gamma : {1e-4, 1e-3}) {
      for (double order : {2.0, 4.0, 8.0}) {
        const double r = RdpSampledWithoutReplacementGaussian(gamma, sigma, order);
        EXPECT_LE(r, 10.0 * gamma * gamma * order / (sigma * sigma))
            << "gamma " << gamma << " sigma " << sigma << " order " << order;
      }
    }
  }
}

// WBK 2019, Thm 9 at α = 2 by hand: log(1 + γ² min{4(e^{ε(2)}−1), 2e^{ε(2)}})
// with ε(2) = 4/σ²; both branches of the min occur.
TEST(RdpSampledWithoutReplacementGaussian, OrderTwoByHand) {
  for (double sigma : {0.5, 1.0, 1.5, 3.0}) {
    const double gamma = 0.02, e2 = 4.0 / (sigma * sigma);
    const double want =
        std::log1p(gamma * gamma * std::min(4.0 * std::expm1(e2), 2.0 * std::exp(e2)));
    EXPECT_NEAR(RdpSampledWithoutReplacementGaussian(gamma, sigma, 2.0), want, 1e-13 * want)
        << "sigma " << sigma;
  }
}

}  // namespace
}  // namespace dperm
