// Unit tests of dp_newton (dp_newton.cpp): the pass's sensitivity against
// every pair (and attained), the curvature sums against their definition,
// the plan against its formulas (noise, ledger curve, passes), the noise's
// scale statistically, noiseless Newton steps converging to the minimiser,
// utility against dp_gd's default on a large synthetic problem, and what it
// refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "dperm/accounting/analytic_gaussian.hpp"
#include "dperm/accounting/budget.hpp"
#include "dperm/algorithms/dp_newton.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/algorithms/ssp.hpp"
#include "dperm/losses/loss.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"
#include "dperm/planning/release_curve.hpp"
#include "../../bench/lib/synthetic_logistic.hpp"
#include "erm_reference.hpp"
#include "test_helpers.hpp"

namespace {

using dperm::Algorithm;
using dperm::LossKind;
using dperm::Options;
using dperm::Plan;
using dperm::SecureRng;

Options NewtonOpts(double epsilon, double delta, bool fit_intercept = true, double l2 = 0) {
  Options o = dperm::testing::Opts(epsilon, delta, l2, fit_intercept);
  o.algorithm = Algorithm::kDpNewton;
  o.has_algorithm = true;
  return o;
}

// The pass's packed sums of rows at w by their definition, in plain
// floating point: (gamma f'(m, y) t, f''(m) times the upper triangle of
// t t^T, off-diagonal x sqrt 2).
Eigen::VectorXd DirectSums(const std::vector<double>& rows, int d, bool intercept, double gamma,
                           const Eigen::VectorXd& w) {
  const int dim = d + (intercept ? 1 : 0);
  const int n = int(rows.size()) / (d + 1);
  Eigen::VectorXd v = Eigen::VectorXd::Zero(dim + dim * (dim + 1) / 2);
  dperm::LogisticLoss loss;
  for (int i = 0; i < n; i++) {
    Eigen::VectorXd t(dim);
    for (int j = 0; j < d; j++) t(j) = rows[size_t(i) * (d + 1) + j];
    if (intercept) t(d) = 1;
    const double y = rows[size_t(i) * (d + 1) + d], m = w.dot(t);
    v.head(dim) += gamma * loss.Derivative(m, y) * t;
    const double c = loss.Curvature(m, y);
    int at = dim;
    for (int j = 0; j < dim; j++)
      for (int k = j; k < dim; k++) v(at++) += (j == k ? 1.0 : std::sqrt(2.0)) * c * t(j) * t(k);
  }
  return v;
}

// The sums CurvatureSums computes for rows at w, on the plan's grid.
Eigen::VectorXd Sums(const Plan& p, const std::vector<double>& rows, const Eigen::VectorXd& w) {
  Plan one = p;
  one.n = int64_t(rows.size()) / (p.d + 1);
  auto objective = dperm::MakeObjective(one, rows.data());
  return objective->CurvatureSums(w, p.mechanism_fields.Get(dperm::kMomentWeight),
                                  p.mechanism_fields.Get(dperm::kMomentSumGrid));
}

// The bound over a grid of every pair's quantities: p, p' = |f'| |t| in
// [0, L] (either sign of f' f'), x, x' = f'' |t|^2 in [0, beta], s = cos in
// [-1, 1]; ||Delta v||^2 = gamma^2 (p^2 + p'^2 - 2 p p' s) + x^2 + x'^2 -
// 2 x x' s^2. The largest value found reaches the bound (it is attained).
TEST(DpNewton, PassSensitivityBoundHoldsAndIsAttained) {
  const double L = std::sqrt(2.0), beta = 0.5;  // logistic with an intercept: R = sqrt 2
  for (double gamma : {0.1, 0.53, 1.0, 3.0}) {
    const double bound = dperm::NewtonPassSensitivity(gamma, L, beta);
    double largest = 0;
    for (double p = 0; p <= L + 1e-12; p += L / 4)
      for (double pp = -L; pp <= L + 1e-12; pp += L / 4)
        for (double x = 0; x <= beta + 1e-12; x += beta / 4)
          for (double xp = 0; xp <= beta + 1e-12; xp += beta / 4)
            for (double s = -1; s <= 1 + 1e-12; s += 1.0 / 256) {
              const double v2 = gamma * gamma * (p * p + pp * pp - 2 * p * pp * s) + x * x +
                                xp * xp - 2 * x * xp * s * s;
              EXPECT_LE(std::sqrt(v2), bound * (1 + 1e-12));
              largest = std::max(largest, std::sqrt(v2));
            }
    EXPECT_GT(largest, 0.999 * bound) << gamma;
    // Never above the two parts' separate maxima.
    EXPECT_LE(bound, std::sqrt(4 * gamma * gamma * L * L + 2 * beta * beta) * (1 + 1e-12));
  }
}

TEST(DpNewton, CurvatureSumsMatchTheirDefinition) {
  for (bool intercept : {true, false}) {
    const int d = 4;
    std::vector<double> rows = dperm::testing::ErmRows(LossKind::kLogistic, 200, d, 11);
    Plan p = dperm::PlanRelease(NewtonOpts(1, 1e-6, intercept), LossKind::kLogistic, 200, d);
    Eigen::VectorXd w(p.dim);
    for (int j = 0; j < p.dim; j++) w(j) = 0.7 * std::sin(1.0 + j);
    Eigen::VectorXd got = Sums(p, rows, w);
    Eigen::VectorXd want =
        DirectSums(rows, d, intercept, p.mechanism_fields.Get(dperm::kMomentWeight), w);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(got.size(), p.dim + p.dim * (p.dim + 1) / 2);
    EXPECT_LE((got - want).norm(), 1e-9 * want.norm()) << intercept;
  }
}

// Every replaced row moves one pass's sums by at most the sensitivity
// before rounding, at several models w: random rows, and the opposite pair
// t' = -t of norm R with one label at w = 0, whose gradient sums differ by
// gamma |f'(0)| 2R = gamma R and whose Hessian sums are equal.
TEST(DpNewton, EveryReplacedRowIsWithinTheSensitivity) {
  const int d = 3;
  Plan p = dperm::PlanRelease(NewtonOpts(1, 1e-6, false), LossKind::kLogistic, 2, d);
  const double gamma = p.mechanism_fields.Get(dperm::kMomentWeight);
  const double bound = dperm::NewtonPassSensitivity(gamma, p.L, p.beta);
  const double R = p.R;
  std::mt19937_64 gen(5);
  std::normal_distribution<double> normal(0, 1);
  auto row = [&](Eigen::Vector3d x, double y) { return std::vector<double>{x(0), x(1), x(2), y}; };
  auto random_point = [&]() {
    Eigen::Vector3d x(normal(gen), normal(gen), normal(gen));
    return Eigen::Vector3d(x * (R / x.norm()) * std::min(1.0, 0.5 + std::abs(normal(gen)) / 3));
  };
  double largest = 0;
  for (int trial = 0; trial < 300; trial++) {
    Eigen::VectorXd w = Eigen::VectorXd::Zero(p.dim);
    if (trial % 3) w = 2 * Eigen::Vector3d(normal(gen), normal(gen), normal(gen));
    const Eigen::VectorXd a = Sums(p, row(random_point(), trial % 2 ? 1 : -1), w);
    const Eigen::VectorXd b = Sums(p, row(random_point(), trial % 5 ? 1 : -1), w);
    EXPECT_LE((a - b).norm(), bound * (1 + 1e-9));
    largest = std::max(largest, (a - b).norm());
  }
  const Eigen::Vector3d e1(R, 0, 0);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(p.dim);
  const double opposite = (Sums(p, row(e1, 1), zero) - Sums(p, row(-e1, 1), zero)).norm();
  // gamma |f'(0)| (2R) = gamma R; the Hessians are equal: the gradient part alone.
  EXPECT_NEAR(opposite, gamma * R, 1e-9);
  EXPECT_LE(std::max(largest, opposite), bound);
  EXPECT_GT(std::max(largest, opposite), 0.3 * bound);
}

TEST(DpNewton, PlanIsTheFormulas) {
  const int64_t n = 10000;
  Plan p = dperm::PlanRelease(NewtonOpts(1, 1e-6), LossKind::kLogistic, n, 5);
  EXPECT_EQ(p.algorithm, Algorithm::kDpNewton);
  EXPECT_EQ(p.iterations, dperm::kNewtonPasses);
  EXPECT_EQ(p.iterations, 6);
  // R = sqrt 2, L = R, beta = R^2/4; gamma = (beta/L) sqrt(0.9/0.2).
  const double gamma = p.mechanism_fields.Get(dperm::kMomentWeight);
  EXPECT_NEAR(gamma, (0.5 / std::sqrt(2.0)) * std::sqrt(4.5), 1e-12);
  // With this weight u* = 1/sqrt 2 and Delta^2 = 4 gamma^2 L^2 + beta^2.
  const double exact = std::sqrt(4 * gamma * gamma * 2 + 0.25);
  EXPECT_NEAR(dperm::NewtonPassSensitivity(gamma, p.L, p.beta), exact, 1e-12);
  EXPECT_GE(p.sensitivity, exact);
  EXPECT_LE(p.sensitivity, exact * (1 + 1.0 / 512));
  EXPECT_NEAR(p.sensitivity - exact, p.rounding_inflation, 1e-12 * exact);
  // The schedule: pass k's sigma is sqrt(2)^(K - 1 - k) times the last's
  // (noise_scale), and the passes together are a Gaussian of ratio
  // mu = sqrt(sum_k (Delta_k/sigma_k)^2) = 1/(the analytic sigma per unit),
  // up to the dyadic rounding (2^-20) and the grids' (2^-9): here with
  // Delta_k ~ the plan's sensitivity, sum_k 2^-(K-1-k) = 2 - 2^-5.
  const double mu = p.sensitivity / p.noise_scale * std::sqrt(2 - std::pow(2.0, -5));
  EXPECT_NEAR(mu * dperm::AnalyticGaussianSigma(1, 1e-6, 1), 1.0, 2e-3);
  EXPECT_LE(mu * dperm::AnalyticGaussianSigma(1, 1e-6, 1), 1.0 + 1e-12);
  EXPECT_DOUBLE_EQ(dperm::NewtonNoiseRatio(5, 6), 1.0);
  EXPECT_NEAR(dperm::NewtonNoiseRatio(0, 6), std::pow(2.0, 2.5), 1e-12);
  // The ledger: the Gaussian's RDP alpha mu^2/2.
  const auto& orders = dperm::LedgerOrders();
  const auto curve = dperm::ReleaseRdpCurve(p);
  ASSERT_EQ(curve.size(), orders.size());
  for (size_t i = 0; i < orders.size(); i++)
    EXPECT_NEAR(curve[i], orders[i] * mu * mu / 2, 2e-3 * curve[i]);
  // The last pass's ridge sqrt(dim) sigma / n; the passes read every row.
  EXPECT_NEAR(p.mechanism_fields.Get(dperm::kNewtonRidge), std::sqrt(6.0) * p.noise_scale / n,
              1e-15);
  EXPECT_EQ(p.gradient_evaluations, 6 * n);
  // `iterations` sets the passes; the last pass keeps about the same share
  // (1/2 of mu^2 against 1/2 - 2^-K), so its sigma hardly moves.
  Options o = NewtonOpts(1, 1e-6);
  o.iterations = 20;
  Plan twenty = dperm::PlanRelease(o, LossKind::kLogistic, n, 5);
  EXPECT_EQ(twenty.iterations, 20);
  EXPECT_NEAR(twenty.noise_scale / p.noise_scale,
              std::sqrt((2 - std::pow(2.0, -19)) / (2 - std::pow(2.0, -5))), 1e-3);
}

// The release's noise: mean the exact sums, per-coordinate variance
// sigma_k^2, for the last pass (noise_scale) and the first (sqrt(2)^(K-1)
// times it).
TEST(DpNewton, NoiseHasThePlannedScale) {
  const int d = 2;
  std::vector<double> rows = dperm::testing::ErmRows(LossKind::kLogistic, 100, d, 3);
  Plan p = dperm::PlanRelease(NewtonOpts(1, 1e-6), LossKind::kLogistic, 100, d);
  auto objective = dperm::MakeObjective(p, rows.data());
  const Eigen::VectorXd w = Eigen::VectorXd::Constant(p.dim, 0.3);
  const Eigen::VectorXd exact =
      objective->CurvatureSums(w, p.mechanism_fields.Get(dperm::kMomentWeight),
                               p.mechanism_fields.Get(dperm::kMomentSumGrid));
  SecureRng rng = SecureRng::FromSeed(78);
  const int runs = 4000, m = int(exact.size());
  for (int64_t pass : {p.iterations - 1, int64_t(0)}) {
    Eigen::MatrixXd z(m, runs);
    for (int r = 0; r < runs; r++)
      z.col(r) = dperm::ReleaseCurvatureSums(p, *objective, w, pass, rng) - exact;
    const double sigma = p.noise_scale * std::pow(std::sqrt(2.0), double(p.iterations - 1 - pass));
    for (int j = 0; j < m; j++) {
      EXPECT_LT(std::abs(z.row(j).mean()), 5 * sigma / std::sqrt(double(runs))) << j;
      // sd of the sample variance of a normal: sigma^2 sqrt(2/runs) = 2.2%.
      EXPECT_NEAR(z.row(j).squaredNorm() / runs / (sigma * sigma), 1.0, 0.12) << pass << " " << j;
    }
  }
}

// Without noise and ridge the passes are Newton's method on F, which
// converges quadratically: 8 passes reach the minimiser of the
// l2-regularised logistic risk (FISTA's, to 1e-12) to 1e-8.
TEST(DpNewton, NoiselessPassesReachTheMinimiser) {
  const int d = 4, n = 2000;
  std::vector<double> rows = dperm::testing::ErmRows(LossKind::kLogistic, n, d, 21);
  Options o = NewtonOpts(1, 1e-6, true, 1e-2);
  o.iterations = 8;
  Plan p = dperm::PlanRelease(o, LossKind::kLogistic, n, d);
  p.noise_scale = 0;
  p.mechanism_fields.Set(dperm::kNewtonRidge, 0);
  SecureRng rng = SecureRng::FromSeed(1);
  std::vector<double> got = dperm::TrainModel(p, rows.data(), rng);
  auto objective = dperm::MakeObjective(p, rows.data());
  Eigen::VectorXd want = dperm::testing::FistaMinimiser(*objective, p.beta + p.mu);
  Eigen::Map<Eigen::VectorXd> w(got.data(), p.dim);
  EXPECT_LE((w - want).norm(), 1e-8 * std::max(1.0, want.norm()));
}

// Utility where it is meant to be used (n epsilon / d^2 large): on
// bench/scripts/algorithms/dp_gd_schedule.cpp's synthetic problem at 10^5 x 8, epsilon = 1,
// its excess empirical risk, mean of three seeds, is at most dp_gd's
// default (100 accelerated passes) in 6 passes; likewise on ErmRows (rows
// on the unit sphere with larger margins), where equal noise in every pass
// was 7x dp_gd's (docs/scale.md). Measured over 10 seeds at 10^5 x 8:
// 1.8e-5 against 2.9e-5 (bench/scripts/algorithms/few_pass.cpp, SEEDS=10).
TEST(DpNewton, AtMostDpGdDefaultAtLargeNEpsilon) {
  struct Problem {
    const char* name;
    int n, d;
    std::vector<double> rows;
  };
  std::vector<Problem> problems;
  problems.push_back(
      {"synthetic 10^5 x 8", 100000, 8, dperm::testing::SyntheticLogistic(100000, 8)});
  problems.push_back({"ErmRows 2 10^5 x 6", 200000, 6,
                      dperm::testing::ErmRows(LossKind::kLogistic, 200000, 6, 31)});
  for (const Problem& pr : problems) {
    Plan newton = dperm::PlanRelease(NewtonOpts(1, 1e-6), LossKind::kLogistic, pr.n, pr.d);
    Options g = NewtonOpts(1, 1e-6);
    g.algorithm = Algorithm::kDpGd;
    Plan gd = dperm::PlanRelease(g, LossKind::kLogistic, pr.n, pr.d);
    auto objective = dperm::MakeObjective(newton, pr.rows.data());
    const Eigen::VectorXd best =
        dperm::testing::FistaMinimiser(*objective, newton.beta, 1e-10, 20000);
    const double floor = objective->Value(best);
    double newton_excess = 0, gd_excess = 0;
    for (uint64_t seed : {1, 2, 3}) {
      SecureRng a = SecureRng::FromSeed(seed), b = SecureRng::FromSeed(seed);
      std::vector<double> wn = dperm::TrainModel(newton, pr.rows.data(), a);
      std::vector<double> wg = dperm::TrainModel(gd, pr.rows.data(), b);
      newton_excess += objective->Value(Eigen::Map<Eigen::VectorXd>(wn.data(), newton.dim)) - floor;
      gd_excess += objective->Value(Eigen::Map<Eigen::VectorXd>(wg.data(), gd.dim)) - floor;
    }
    std::printf(
        "[ info ] %s: excess risk, mean of 3: dp_newton %.3g (6 passes), dp_gd default %.3g (100)\n",
        pr.name, newton_excess / 3, gd_excess / 3);
    EXPECT_LE(newton_excess, gd_excess) << pr.name;
  }
}

TEST(DpNewton, RefusesWhatItCannotTrain) {
  Options o = NewtonOpts(1, 1e-6);
  dperm::testing::ExpectInvalid([&] { dperm::PlanRelease(o, LossKind::kHuber, 100, 3); }, "huber");
  Options s = o;
  s.classes = 3;
  dperm::testing::ExpectInvalid([&] { dperm::PlanRelease(s, LossKind::kSoftmax, 100, 3); },
                                "softmax");
  dperm::testing::ExpectInvalid(
      [&] { dperm::PlanRelease(NewtonOpts(1, 0), LossKind::kLogistic, 100, 3); },
      "needs delta > 0");
  Options l1 = o;
  l1.l1 = 0.1;
  dperm::testing::ExpectInvalid([&] { dperm::PlanRelease(l1, LossKind::kLogistic, 100, 3); }, "l1");
  dperm::testing::ExpectInvalid([&] { dperm::PlanRelease(o, LossKind::kLogistic, 100, 600); },
                                "at most 512 model coordinates");
  // It streams: each pass one curvature pass (test_pass.cpp checks the
  // streamed model equals the in-memory one).
  EXPECT_TRUE(dperm::SpecFor(Algorithm::kDpNewton).streams);
}

}  // namespace
