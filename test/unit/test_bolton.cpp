// Unit tests of Bolton (bolt-on output perturbation of permutation SGD, Wu et
// al., SIGMOD 2017): the plan's numbers recomputed from the derivation at the
// top of src/core/algorithms/bolton.cpp and from the paper's bounds; the sensitivity
// recomputed by brute force over every batch position and checked
// empirically on neighbouring datasets; convergence without noise; the noise
// actually added; errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "dperm/accounting/analytic_gaussian.hpp"
#include "dperm/algorithms/bolton.hpp"
#include "dperm/accounting/budget.hpp"
#include "dperm/algorithms/mechanism.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"
#include "dperm/accounting/rdp.hpp"
#include "dperm/rows/rows.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"
#include "dperm/planning/release_curve.hpp"
#include "synthetic_problems.hpp"
#include "../../bench/lib/reference_solvers.hpp"
#include "test_helpers.hpp"

using dperm::testing::Constants;
using dperm::testing::ConstantsFor;
using dperm::testing::SyntheticRows;

using dperm::testing::NewtonMinimiser;
using dperm::testing::Noiseless;
using dperm::testing::TrainSeeded;

namespace {

using dperm::Accountant;
using dperm::Algorithm;
using dperm::LossKind;
using dperm::NoiseKind;
using dperm::Options;
using dperm::Plan;
using dperm::PlanRelease;
using dperm::SecureRng;

Options BoOpts(double epsilon, double delta, double l2,
               Accountant accountant = Accountant::kTight) {
  Options o = dperm::testing::Opts(epsilon, delta, l2, true, accountant);
  o.algorithm = Algorithm::kBolton;
  return o;
}

// The sensitivity of the loop by brute force: run the recursion
// delta_t = (1 - mu a_t) delta_{t-1} + [row in batch t] 2 a_t L / |B_t| for
// the differing row at every batch position p = 1..m (batch sizes from the
// balanced split), with a_t = min(eta0, 1/(mu t)) or eta0, and take the
// largest delta_T. Independent of the closed form in bolton.cpp.
double BruteForceSensitivity(double L, double mu, double eta0, int64_t n, int64_t b,
                             int64_t passes) {
  const int64_t m = n / b;
  double worst = 0;
  for (int64_t p = 0; p < m; p++) {
    const int64_t size = n / m + (p < n % m ? 1 : 0);  // larger batches first
    double delta = 0;
    int64_t t = 0;
    for (int64_t k = 0; k < passes; k++) {
      for (int64_t j = 0; j < m; j++) {
        t++;
        double a = mu > 0 ? std::min(eta0, 1 / (mu * double(t))) : eta0;
        delta = (1 - mu * a) * delta + (j == p ? 2 * a * L / double(size) : 0.0);
      }
    }
    worst = std::max(worst, delta);
  }
  return worst;
}

// Defaults, recomputed: b = 50, m = floor(n/50) balanced batches, k = 10
// passes (10 n dim <= 2e9 here), T = k m; strongly convex: radius L/mu, step
// 1/(beta + mu), sensitivity = the brute-force recursion <= 2L/(mu m b_min);
// 'paper' 2 (L + mu radius)/(mu n). Convex: no radius, step
// min(1/beta, (D^2 b^3 / (8 k^3 n beta c L^2))^(1/3)) with D = 1 and c the
// noise's E||z||^2 per unit sensitivity, sensitivity 2 k L eta / b_min;
// 'paper' 2 k L eta / b. Noise: analytic Gaussian (tight), max(classic
// sqrt(2 ln(1.25/delta)) Delta/eps, analytic) (paper), Delta/eps vector
// noise for delta = 0.
TEST(BoltonPlan, DefaultsFollowDerivation) {
  struct Case {
    LossKind loss;
    int64_t n;
    int d;
    double eps, delta, l2;
  };
  Case cases[] = {{LossKind::kLogistic, 45211, 42, 1.0, 1e-6, 0.0},
                  {LossKind::kLogistic, 45211, 42, 0.1, 1e-6, 0.001},
                  {LossKind::kHuber, 6497, 12, 0.5, 0.0, 0.1},
                  {LossKind::kHuber, 17379, 53, 2.0, 1e-5, 0.0},
                  {LossKind::kSoftmax, 3000, 20, 1.0, 1e-5, 0.01}};
  for (const Case& c : cases) {
    for (Accountant acc : {Accountant::kTight, Accountant::kPaper}) {
      Options o = BoOpts(c.eps, c.delta, c.l2, acc);
      if (c.loss == LossKind::kSoftmax) o.classes = 4;
      Plan p = PlanRelease(o, c.loss, c.n, c.d);
      SCOPED_TRACE("n=" + std::to_string(c.n) + " l2=" + std::to_string(c.l2) +
                   " paper=" + std::to_string(acc == Accountant::kPaper));
      Constants k = ConstantsFor(o, c.loss);
      const int dim = (c.d + 1) * (c.loss == LossKind::kSoftmax ? 4 : 1);
      const int64_t b = 50, m = c.n / b, b_min = c.n / m, passes = 10;
      EXPECT_EQ(p.batch_size, b);
      EXPECT_EQ(p.passes, passes);
      EXPECT_EQ(p.iterations, passes * m);
      EXPECT_EQ(p.sampling, dperm::Sampling::kPermutation);
      EXPECT_EQ(p.noisy_steps, 0);
      // Noise per unit of sensitivity, as the plan's noise will be.
      double unit = c.delta > 0 ? dperm::AnalyticGaussianSigma(c.eps, c.delta, 1.0) : 0;
      if (c.delta > 0 && acc == Accountant::kPaper)
        unit = std::max(unit, std::sqrt(2 * std::log(1.25 / c.delta)) / c.eps);
      double tight, paper;
      if (c.l2 > 0) {
        EXPECT_DOUBLE_EQ(p.radius, k.L / c.l2);
        EXPECT_DOUBLE_EQ(p.step_size, 1 / (k.beta + c.l2));
        EXPECT_DOUBLE_EQ(p.max_step_size, 2 / (k.beta + 2 * c.l2));
        tight = BruteForceSensitivity(k.L, c.l2, p.step_size, c.n, b, passes);
        EXPECT_LE(tight, 2 * k.L / (c.l2 * m * b_min) * (1 + 1e-12));
        paper = 2 * (k.L + c.l2 * p.radius) / (c.l2 * c.n);
      } else {
        EXPECT_EQ(p.radius, 0);
        double cc = c.delta > 0 ? dim * unit * unit : double(dim) * (dim + 1) / (c.eps * c.eps);
        double eta3 =
            1.0 * b * b * b / (8.0 * passes * passes * passes * c.n * k.beta * cc * k.L * k.L);
        EXPECT_NEAR(p.step_size, std::min(1 / k.beta, std::cbrt(eta3)), 1e-12 * p.step_size);
        EXPECT_DOUBLE_EQ(p.max_step_size, 2 / k.beta);
        tight = 2.0 * passes * k.L * p.step_size / double(b_min);
        paper = 2.0 * passes * k.L * p.step_size / double(b);
      }
      double want = acc == Accountant::kPaper ? std::max(tight, paper) : tight;
      EXPECT_NEAR((p.sensitivity - p.rounding_inflation), want, 1e-9 * want);
      if (acc == Accountant::kPaper) {
        EXPECT_GE(paper, tight);  // here the paper is the looser
      }
      if (c.delta > 0) {
        EXPECT_EQ(p.noise, NoiseKind::kGaussian);
        // Discrete Gaussian calibrated by RDP (CKS20 Thm 14): at least the
        // continuous law's analytic sigma.
        EXPECT_GE(p.noise_scale, unit * p.sensitivity * (1 - 1e-9));
      } else {
        EXPECT_EQ(p.noise, NoiseKind::kLaplace);
        EXPECT_NEAR(p.noise_scale, std::sqrt(double(p.dim)) * p.sensitivity / c.eps,
                    1e-12 * p.noise_scale);
      }
    }
  }
}

// The closed form (BoltonSensitivity) equals the brute-force maximum over
// batch positions, for convex and strongly convex steps, caps below and
// above the switch to 1/(mu t), batch sizes that divide n and that do not;
// and it is at most 2 L / (mu m b_min) (= the paper's 2 L/(mu n) when b
// divides n).
TEST(BoltonPlan, ClosedFormMatchesBruteForce) {
  struct Case {
    double mu, eta0;
    int64_t n, b, passes;
  };
  Case cases[] = {{0.0, 0.3, 100, 10, 3}, {0.0, 1.0, 101, 7, 1},  {0.1, 1.0, 100, 10, 5},
                  {0.1, 1.0, 97, 5, 2},   {0.01, 1.5, 120, 1, 3}, {1e-4, 2.0, 80, 4, 6},
                  {0.5, 0.2, 60, 3, 4},   {2.0, 0.4, 50, 50, 20}};
  const double L = 1.3;
  for (const Case& c : cases) {
    const int64_t m = dperm::BoltonBatches(c.n, c.b), b_min = c.n / m;
    double closed = dperm::BoltonSensitivity(L, c.mu, c.eta0, c.passes, m, b_min);
    double brute = BruteForceSensitivity(L, c.mu, c.eta0, c.n, c.b, c.passes);
    SCOPED_TRACE("mu=" + std::to_string(c.mu) + " n=" + std::to_string(c.n) +
                 " b=" + std::to_string(c.b));
    EXPECT_NEAR(closed, brute, 1e-12 * brute);
    if (c.mu > 0) {
      EXPECT_LE(closed, 2 * L / (c.mu * double(m * b_min)) * (1 + 1e-12));
    }
  }
}

// Batches: m = floor(n/b), contiguous, covering 0..n exactly once, each of
// floor(n/m) or ceil(n/m) >= b rows, the larger ones first (so the last
// batch, the worst position, is a smallest).
TEST(BoltonPlan, BalancedBatches) {
  for (int64_t n : {1, 7, 50, 97, 1000, 45211}) {
    for (int64_t b : {1, 3, 7, 50}) {
      if (b > n) continue;
      int64_t m = dperm::BoltonBatches(n, b);
      EXPECT_EQ(m, n / b);
      EXPECT_EQ(dperm::BoltonBatchStart(n, m, 0), 0);
      EXPECT_EQ(dperm::BoltonBatchStart(n, m, m), n);
      for (int64_t j = 0; j < m; j++) {
        int64_t size = dperm::BoltonBatchStart(n, m, j + 1) - dperm::BoltonBatchStart(n, m, j);
        EXPECT_GE(size, b);
        EXPECT_GE(size, n / m);
        EXPECT_LE(size, n / m + 1);
        EXPECT_EQ(size, n / m + (j < n % m ? 1 : 0));
      }
    }
  }
}

// Options as given: iterations = passes, batch_size, step_size, radius; the
// paper's strongly convex bound with a small radius falls below the provable
// one when b does not divide n, and the paper plan then keeps the provable
// bound and says so.
TEST(BoltonPlan, GivenOptionsAndPaperBelowProvable) {
  Options o = BoOpts(1, 1e-6, 0.1);
  o.iterations = 3;
  o.batch_size = 7;
  o.step_size = 0.5;
  o.radius = 2;
  Plan p = PlanRelease(o, LossKind::kHuber, 100, 4);
  EXPECT_EQ(p.passes, 3);
  EXPECT_EQ(p.batch_size, 7);
  EXPECT_EQ(p.iterations, 3 * 14);
  EXPECT_EQ(p.step_size, 0.5);
  EXPECT_EQ(p.radius, 2);
  double L = std::sqrt(2.0);
  EXPECT_NEAR((p.sensitivity - p.rounding_inflation), BruteForceSensitivity(L, 0.1, 0.5, 100, 7, 3),
              1e-9);
  // 100 rows in batches of 7: m = 14, b_min = 7, m b_min = 98 < 100.
  Options q = BoOpts(1, 1e-6, 0.1, Accountant::kPaper);
  q.batch_size = 7;
  q.radius = 1e-9;  // paper bound ~ 2 L/(mu n)
  q.iterations = 1000;
  Plan pp = PlanRelease(q, LossKind::kHuber, 100, 4);
  double paper = 2 * (L + 0.1 * 1e-9) / (0.1 * 100);
  EXPECT_GT(pp.sensitivity, paper);
  EXPECT_NEAR(pp.sensitivity - pp.rounding_inflation,
              dperm::BoltonSensitivity(L, 0.1, pp.step_size, 1000, 14, 7), 1e-12);
  EXPECT_NE(pp.note.find("provable"), std::string::npos) << pp.note;
}

// Privacy accounting: the Gaussian releases are (epsilon, delta)-DP by the
// exact (analytic) accountant, exactly at epsilon for the tight plans; the
// ledger's RDP curve is alpha Delta^2 / (2 sigma^2) and, RDP being lossy for
// one Gaussian, converts to at least the exact epsilon. Pure plans: the
// vector noise's scale is Delta/epsilon.
TEST(BoltonPlan, AccountingConsistent) {
  for (double l2 : {0.0, 0.05}) {
    for (Accountant acc : {Accountant::kTight, Accountant::kPaper}) {
      for (double eps : {0.2, 1.0, 5.0}) {
        Plan p = PlanRelease(BoOpts(eps, 1e-6, l2, acc), LossKind::kLogistic, 2000, 5);
        ASSERT_EQ(p.noise, NoiseKind::kGaussian);
        double exact = dperm::GaussianEpsilon(p.noise_scale, 1e-6, p.sensitivity);
        SCOPED_TRACE("l2=" + std::to_string(l2) + " eps=" + std::to_string(eps));
        EXPECT_LE(exact, eps * (1 + 1e-9));
        const std::vector<double>& orders = dperm::LedgerOrders();
        std::vector<double> curve = dperm::ReleaseRdpCurve(p);
        if (acc == Accountant::kTight) {  // calibrated by RDP: exactly epsilon
          EXPECT_NEAR(dperm::RdpToEpsilon(orders, curve, 1e-6), eps, 1e-6 * eps);
        }
        double r = p.sensitivity / p.noise_scale;
        for (size_t i = 0; i < orders.size(); i++)
          EXPECT_NEAR(curve[i], orders[i] * r * r / 2, 1e-12 * curve[i]);
        EXPECT_GE(dperm::RdpToEpsilon(orders, curve, 1e-6), exact * (1 - 1e-9));
        Plan pure = PlanRelease(BoOpts(eps, 0, l2, acc), LossKind::kLogistic, 2000, 5);
        EXPECT_EQ(pure.noise, NoiseKind::kLaplace);
        EXPECT_NEAR(pure.noise_scale, std::sqrt(double(pure.dim)) * pure.sensitivity / eps,
                    1e-12 * pure.noise_scale);
      }
    }
  }
}

// Errors: l1, ls_sigma, batch_size > n, step above the bound of the
// analysis (2/beta convex, 2/(beta + 2 mu) strongly convex), softmax without
// classes.
TEST(BoltonPlan, Errors) {
  auto expect_invalid = [](const Options& o, LossKind loss, const std::string& word) {
    dperm::testing::ExpectInvalid(dperm::testing::Planning(o, loss, 100, 4), word);
  };
  Options o = BoOpts(1, 1e-6, 0.1);
  o.l1 = 0.5;
  expect_invalid(o, LossKind::kLogistic, "l1");
  o = BoOpts(1, 1e-6, 0.1);
  o.ls_sigma = 1;
  expect_invalid(o, LossKind::kLogistic, "ls_sigma");
  o = BoOpts(1, 1e-6, 0.1);
  o.batch_size = 101;
  expect_invalid(o, LossKind::kLogistic, "batch_size");
  o.batch_size = 100;
  EXPECT_NO_THROW(PlanRelease(o, LossKind::kLogistic, 100, 4));
  // Logistic beta = 0.5: 2/(beta + 2 mu) = 2/0.7; convex 2/beta = 4.
  o = BoOpts(1, 1e-6, 0.1);
  o.step_size = 2 / 0.7 * 1.001;
  expect_invalid(o, LossKind::kLogistic, "step_size");
  o = BoOpts(1, 1e-6, 0);
  o.step_size = 4.01;
  expect_invalid(o, LossKind::kLogistic, "step_size");
  o.step_size = 4;
  EXPECT_NO_THROW(PlanRelease(o, LossKind::kLogistic, 100, 4));
  expect_invalid(BoOpts(1, 1e-6, 0.1), LossKind::kSoftmax, "classes");
  // Few rows: the default batch is n.
  Plan tiny = PlanRelease(BoOpts(1, 1e-6, 0.1), LossKind::kLogistic, 3, 2);
  EXPECT_EQ(tiny.batch_size, 3);
  EXPECT_EQ(tiny.iterations, tiny.passes);
}

// ||w_T(S) - w_T(S')|| without noise, for S' = S with the row at permuted
// position `pos` (the same permutation in both runs: same seed) replaced.
double NeighbourDistance(const Plan& p, const std::vector<double>& rows, int64_t pos,
                         const std::vector<double>& a, const std::vector<double>& b,
                         uint64_t seed) {
  const int d = p.d;
  SecureRng r = SecureRng::FromSeed(seed);
  int64_t row = dperm::RandomPermutation(r, p.n)[size_t(pos)];  // Train's first draw
  std::vector<double> s = rows, s2 = rows;
  std::copy(a.begin(), a.end(), s.begin() + row * (d + 1));
  std::copy(b.begin(), b.end(), s2.begin() + row * (d + 1));
  return (TrainSeeded(Noiseless(p), s, seed) - TrainSeeded(Noiseless(p), s2, seed)).norm();
}

// Adversarial replacement pairs for binary losses: label flipped, row
// negated, rows on the sphere along +-w with misfit labels, and opposite huge
// Huber targets (gradient difference exactly 2L).
double MaxNeighbourDistance(const Plan& p, const std::vector<double>& rows, uint64_t seed) {
  const int d = p.d;
  Eigen::VectorXd w = TrainSeeded(Noiseless(p), rows, seed);
  Eigen::VectorXd u = w.head(d);
  if (u.norm() == 0) u = Eigen::VectorXd::Unit(d, 0);
  u /= u.norm();
  bool logistic = p.loss == LossKind::kLogistic;
  double big = 1e6;
  auto row = [&](const Eigen::VectorXd& x, double y) {
    std::vector<double> r(x.data(), x.data() + d);
    r.push_back(y);
    return r;
  };
  double worst = 0;
  for (int64_t pos : {int64_t(0), p.n / 2, p.n - 1}) {
    SecureRng r = SecureRng::FromSeed(seed);
    int64_t at = dperm::RandomPermutation(r, p.n)[size_t(pos)];
    std::vector<double> orig(rows.begin() + at * (d + 1), rows.begin() + (at + 1) * (d + 1));
    std::vector<double> flipped = orig, negated = orig;
    flipped[d] = logistic ? -orig[d] : -big;
    for (int j = 0; j < d; j++) negated[j] = -orig[j];
    std::vector<std::pair<std::vector<double>, std::vector<double>>> pairs = {
        {orig, flipped},
        {orig, negated},
        {row(u, logistic ? 1 : big), row(u, logistic ? -1 : -big)},
        {row(u, logistic ? -1 : -big), row(-u, logistic ? -1 : -big)},
        {row(u, logistic ? 1 : big), row(-u, logistic ? -1 : -big)},
    };
    for (const auto& pr : pairs) {
      double dist = NeighbourDistance(p, rows, pos, pr.first, pr.second, seed);
      EXPECT_LE(dist, (p.sensitivity - p.rounding_inflation) * (1 + 1e-9))
          << "bound violated at position " << pos;
      worst = std::max(worst, dist);
    }
  }
  return worst;
}

// Empirical sensitivity: neighbouring datasets (same permutation, one row
// replaced adversarially at the first, middle and last batch position) stay
// within plan.sensitivity, and the bound is not vacuous (worst >= 5% of it).
// Convex and strongly convex, b = 1 and b = 4 (with n = 42 not a multiple of
// 4), k = 1 and k = 3, with and without a projection, logistic and Huber,
// tight and paper.
TEST(BoltonSensitivity, NeighboursWithinBound) {
  const int n = 42, d = 3;
  for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber}) {
    std::vector<double> rows = SyntheticRows(loss, n, d, 31, 3, true);
    for (double l2 : {0.0, 0.1}) {
      for (int64_t b : {1, 4}) {
        for (int64_t k : {1, 3}) {
          for (double radius : {0.0, 0.7}) {
            for (Accountant acc : {Accountant::kTight, Accountant::kPaper}) {
              Options o = BoOpts(1.0, 1e-5, l2, acc);
              o.batch_size = b;
              o.iterations = k;
              o.radius = radius;
              if (l2 == 0) o.step_size = 0.5;  // the default is tiny for so few rows
              Plan p = PlanRelease(o, loss, n, d);
              std::string name = std::string(loss == LossKind::kLogistic ? "logistic" : "huber") +
                                 " l2=" + std::to_string(l2) + " b=" + std::to_string(b) +
                                 " k=" + std::to_string(k) + " radius=" + std::to_string(radius) +
                                 (acc == Accountant::kPaper ? " paper" : " tight");
              SCOPED_TRACE(name);
              double worst = MaxNeighbourDistance(p, rows, 5);
              EXPECT_GE(worst, 0.05 * (p.sensitivity - p.rounding_inflation));
              if (radius == 0 && acc == Accountant::kTight && loss == LossKind::kHuber)
                std::cout << "[ info ] " << name
                          << ": worst distance / bound = " << worst / p.sensitivity << "\n";
            }
          }
        }
      }
    }
  }
}

// The same for softmax, with the replaced row's class and features changed.
TEST(BoltonSensitivity, SoftmaxNeighboursWithinBound) {
  const int n = 40, d = 3, K = 3;
  std::vector<double> rows = SyntheticRows(LossKind::kSoftmax, n, d, 8, K);
  for (double l2 : {0.0, 0.2}) {
    for (int64_t b : {1, 5}) {
      Options o = BoOpts(1.0, 1e-5, l2);
      o.classes = K;
      o.batch_size = b;
      o.iterations = 2;
      if (l2 == 0) o.step_size = 0.5;
      Plan p = PlanRelease(o, LossKind::kSoftmax, n, d);
      double worst = 0;
      for (int64_t pos : {int64_t(0), int64_t(n - 1)}) {
        for (int y = 1; y < K; y++) {
          std::vector<double> a = {0.6, 0.0, -0.8, 0.0}, c = {-0.6, 0.0, 0.8, double(y)};
          double dist = NeighbourDistance(p, rows, pos, a, c, 9);
          EXPECT_LE(dist, (p.sensitivity - p.rounding_inflation) * (1 + 1e-9))
              << "l2=" << l2 << " b=" << b;
          worst = std::max(worst, dist);
        }
      }
      EXPECT_GE(worst, 0.05 * (p.sensitivity - p.rounding_inflation)) << "l2=" << l2 << " b=" << b;
    }
  }
}

// The tight bound is attained: Huber targets far from every margin make the
// common part's Hessian l2 I (a contraction by exactly 1 - a_t l2, or the
// identity when l2 = 0), the replaced row's gradient difference is exactly
// 2L in a fixed direction, and with the row in the last batch (all batches
// of b rows) ||w_T - w'_T|| equals the planned sensitivity. The projection
// never acts (||w_t|| <= L/l2 by induction).
TEST(BoltonSensitivity, TightBoundAttained) {
  const int n = 40, d = 3;
  for (double l2 : {0.0, 0.15}) {
    for (int64_t b : {1, 4}) {
      std::vector<double> rows = SyntheticRows(LossKind::kHuber, n, d, 4, 3, true);
      for (int i = 0; i < n; i++) rows[size_t(i) * (d + 1) + d] = i % 3 ? 1e6 : -1e6;
      Options o = BoOpts(1.0, 1e-5, l2);
      o.batch_size = b;
      o.iterations = 3;
      if (l2 == 0) o.step_size = 0.3;
      Plan p = PlanRelease(o, LossKind::kHuber, n, d);
      std::vector<double> a = {0.6, 0.0, -0.8, 1e6}, c = {0.6, 0.0, -0.8, -1e6};  // ||x|| = 1
      double dist = NeighbourDistance(p, rows, n - 1, a, c, 12);
      EXPECT_NEAR(dist, (p.sensitivity - p.rounding_inflation),
                  1e-9 * (p.sensitivity - p.rounding_inflation))
          << "l2=" << l2 << " b=" << b;
    }
  }
}

// Without noise, bolt-on SGD reaches the non-private optimum (Newton's).
// Strongly convex: with a_t = min(eta0, 1/(mu t)) over one permutation the
// iterates converge at rate O(1/T); we check the distance falls with the
// number of passes (by at least 3x from 20 to 200 passes) and is below 2% of
// ||w_hat|| at 200 passes. Convex with the full batch (b = n) and the
// constant step 1/beta, the loop is gradient descent and converges
// linearly: within 1e-6 after 3000 passes.
TEST(BoltonTrain, NoiselessReachesOptimum) {
  const int n = 200, d = 3;
  for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber, LossKind::kSoftmax}) {
    std::vector<double> rows = SyntheticRows(loss, n, d, 21, 3, true);
    SCOPED_TRACE("loss " + std::to_string(int(loss)));
    std::vector<double> dist;
    Eigen::VectorXd w_hat;
    for (int64_t k : {20, 200}) {
      Options o = BoOpts(1, 1e-5, 0.1);
      if (loss == LossKind::kSoftmax) o.classes = 3;
      o.batch_size = 10;
      o.iterations = k;
      Plan p = PlanRelease(o, loss, n, d);
      std::unique_ptr<dperm::Objective> f = dperm::MakeObjective(p, rows.data());
      w_hat = NewtonMinimiser(*f);
      ASSERT_LT(f->Gradient(w_hat).norm(), 1e-10);
      dist.push_back((TrainSeeded(Noiseless(p), rows, 3) - w_hat).norm());
    }
    std::cout << "[ info ] strongly convex: ||w - w_hat|| " << dist[0] << " (20 passes), "
              << dist[1] << " (200 passes), ||w_hat|| " << w_hat.norm() << "\n";
    EXPECT_LT(dist[1], dist[0] / 3);
    EXPECT_LT(dist[1], 0.02 * w_hat.norm());
    // Convex, full batch, step 1/beta: gradient descent.
    if (loss == LossKind::kHuber) {
      Options o = BoOpts(1, 1e-5, 0);
      o.batch_size = n;
      o.iterations = 3000;
      Plan p = PlanRelease(o, loss, n, d);
      p.step_size = 1 / p.beta;
      std::unique_ptr<dperm::Objective> f = dperm::MakeObjective(p, rows.data());
      Eigen::VectorXd w0 = NewtonMinimiser(*f);
      ASSERT_LT(f->Gradient(w0).norm(), 1e-10);
      EXPECT_LT((TrainSeeded(Noiseless(p), rows, 3) - w0).norm(), 1e-6);
    }
  }
}

// The released w differs from the noiseless w_T (same seed: same
// permutation) by noise of the planned size: over 3000 seeds the mean of
// ||z||^2 is expected_noise_sq within 5% (standard error ~1.5-2%), the mean
// of z is 0, and for the vector noise the mean radius is dim * scale.
TEST(BoltonTrain, ReleasedNoiseHasPlannedScale) {
  const int n = 200, d = 6, seeds = 3000;
  std::vector<double> rows = SyntheticRows(LossKind::kLogistic, n, d, 8, 3, true);
  for (double delta : {1e-5, 0.0}) {
    for (double l2 : {0.0, 0.1}) {
      Options o = BoOpts(0.5, delta, l2);
      o.iterations = 1;
      Plan p = PlanRelease(o, LossKind::kLogistic, n, d);
      ASSERT_GT(p.noise_scale, 0);
      double mean_sq = 0, mean_norm = 0;
      Eigen::VectorXd mean = Eigen::VectorXd::Zero(p.dim);
      for (int s = 0; s < seeds; s++) {
        Eigen::VectorXd z = TrainSeeded(p, rows, 50 + s) - TrainSeeded(Noiseless(p), rows, 50 + s);
        mean_sq += z.squaredNorm();
        mean_norm += z.norm();
        mean += z;
      }
      mean_sq /= seeds;
      mean_norm /= seeds;
      mean /= seeds;
      SCOPED_TRACE("delta=" + std::to_string(delta) + " l2=" + std::to_string(l2));
      EXPECT_NEAR(mean_sq / p.expected_noise_sq, 1.0, 0.05);
      double coord_sd = std::sqrt(p.expected_noise_sq / p.dim);
      EXPECT_LT(mean.lpNorm<Eigen::Infinity>(), 5 * coord_sd / std::sqrt(double(seeds)));
      if (p.noise == NoiseKind::kLaplaceVector) {
        EXPECT_NEAR(mean_norm / (p.dim * p.noise_scale), 1.0, 0.03);
      }
    }
  }
}

// Same seed and rows: the same release; another seed: another one.
TEST(BoltonTrain, DeterministicForASeed) {
  std::vector<double> rows = SyntheticRows(LossKind::kHuber, 100, 3, 3, 3, true);
  Plan p = PlanRelease(BoOpts(1.0, 1e-6, 0.1), LossKind::kHuber, 100, 3);
  EXPECT_EQ(TrainSeeded(p, rows, 77), TrainSeeded(p, rows, 77));
  EXPECT_NE(TrainSeeded(p, rows, 77), TrainSeeded(p, rows, 78));
}

}  // namespace
