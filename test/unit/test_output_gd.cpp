// Unit tests of training with OutputGd (TrainModel): convergence to the
// non-private optimum, the noise actually added, determinism, and the
// sensitivity bound checked empirically on neighbouring datasets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "dperm/losses/loss.hpp"
#include "dperm/algorithms/mechanism.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"
#include "dperm/rows/rows.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"
#include "test_helpers.hpp"
#include "../../bench/lib/reference_solvers.hpp"

using dperm::testing::NewtonMinimiser;
using dperm::testing::Noiseless;
using dperm::testing::ToVector;

namespace {

using dperm::Accountant;
using dperm::LossKind;
using dperm::NoiseKind;
using dperm::Options;
using dperm::Plan;
using dperm::PlanRelease;
using dperm::SecureRng;
using dperm::TrainModel;

using dperm::testing::Opts;

// Rows of stride d + 1 (features, then label) with features clipped to
// norm <= 1: logistic labels +-1 drawn from a logistic model, Huber targets
// linear plus noise with a few outliers.
std::vector<double> SyntheticRows(LossKind loss, int n, int d, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> unif(0, 1);
  std::vector<double> truth(d + 1);
  for (double& v : truth) v = normal(gen);
  std::vector<double> rows(size_t(n) * (d + 1));
  std::vector<double> raw(d);
  for (int i = 0; i < n; i++) {
    for (double& v : raw) v = 0.8 * normal(gen);
    double* r = &rows[size_t(i) * (d + 1)];
    dperm::ClipRow(raw.data(), d, 1.0, r);
    double m = truth[d];
    for (int j = 0; j < d; j++) m += truth[j] * r[j];
    if (loss == LossKind::kLogistic) {
      r[d] = unif(gen) < 1 / (1 + std::exp(-3 * m)) ? 1.0 : -1.0;
    } else {
      r[d] = m + 0.3 * normal(gen) + (i % 10 == 0 ? 5 * normal(gen) : 0.0);
    }
  }
  return rows;
}

// The objective of a plan over rows, as TrainModel builds it.
struct Problem {
  std::unique_ptr<dperm::Objective> objective;
  Problem(const Plan& p, const std::vector<double>& rows)
      : objective(dperm::MakeObjective(p, rows.data())) {}
};

Eigen::VectorXd TrainNoiseless(const Plan& p, const std::vector<double>& rows) {
  SecureRng rng = SecureRng::FromSeed(1);
  return ToVector(TrainModel(Noiseless(p), rows.data(), rng));
}

// With the noise off and T = 2000, TrainModel reaches the minimiser found by
// Newton's method to 1e-8, for logistic (l2 = 0.1, 0.01) and Huber (l2 =
// 0.1, 0.03), with and without intercept.
TEST(OutputGdTrain, NoiselessReachesOptimum) {
  struct Case {
    LossKind loss;
    double l2;
  };
  Case cases[] = {{LossKind::kLogistic, 0.1},
                  {LossKind::kLogistic, 0.01},
                  {LossKind::kHuber, 0.1},
                  {LossKind::kHuber, 0.03}};
  for (const Case& c : cases) {
    for (bool fit_intercept : {true, false}) {
      const int n = 300, d = 4;
      std::vector<double> rows = SyntheticRows(c.loss, n, d, 21);
      Plan p = PlanRelease(Opts(1.0, 1e-5, c.l2, fit_intercept), c.loss, n, d);
      p.iterations = 2000;
      Problem prob(p, rows);
      Eigen::VectorXd w_hat = NewtonMinimiser(*prob.objective);
      // The reference really is the minimiser: its gradient vanishes.
      ASSERT_LT(prob.objective->Gradient(w_hat).norm(), 1e-12);
      Eigen::VectorXd w = TrainNoiseless(p, rows);
      SCOPED_TRACE(std::string(c.loss == LossKind::kLogistic ? "logistic" : "huber") +
                   " l2=" + std::to_string(c.l2) + " intercept=" + std::to_string(fit_intercept));
      ASSERT_EQ(w.size(), d + (fit_intercept ? 1 : 0));
      EXPECT_LT((w - w_hat).lpNorm<Eigen::Infinity>(), 1e-8)
          << "w=" << w.transpose() << " w_hat=" << w_hat.transpose();
      // Not trivially zero.
      EXPECT_GT(w_hat.norm(), 0.1);
    }
  }
}

// With the default (untouched) plan and its real T, the noiseless output is
// already close to the optimum: the optimisation error is below the noise
// level the plan was tuned against.
TEST(OutputGdTrain, DefaultIterationsReachNoiseLevel) {
  const int n = 2000, d = 5;
  std::vector<double> rows = SyntheticRows(LossKind::kLogistic, n, d, 5);
  Plan p = PlanRelease(Opts(1.0, 1e-5, 0.05, true), LossKind::kLogistic, n, d);
  Problem prob(p, rows);
  Eigen::VectorXd w_hat = NewtonMinimiser(*prob.objective);
  Eigen::VectorXd w = TrainNoiseless(p, rows);
  // The plan guarantees c^T ||w_hat|| <= 0.1 sqrt(E||z||^2) (c^2T D^2 <=
  // 1% E||z||^2 with D >= ||w_hat||), and GD contracts by c per step.
  EXPECT_LE((w - w_hat).norm(), 0.1 * std::sqrt(p.expected_noise_sq));
}

// Statistics of z = released w - w_T over many seeds.
struct NoiseStats {
  double mean_sq = 0, mean_norm = 0;
  Eigen::VectorXd mean;
};
NoiseStats MeasureNoise(const Plan& p, const std::vector<double>& rows, int seeds) {
  Eigen::VectorXd w_T = TrainNoiseless(p, rows);
  NoiseStats s;
  s.mean = Eigen::VectorXd::Zero(p.dim);
  for (int seed = 0; seed < seeds; seed++) {
    SecureRng rng = SecureRng::FromSeed(1000 + seed);
    Eigen::VectorXd z = ToVector(TrainModel(p, rows.data(), rng)) - w_T;
    s.mean_sq += z.squaredNorm();
    s.mean_norm += z.norm();
    s.mean += z;
  }
  s.mean_sq /= seeds;
  s.mean_norm /= seeds;
  s.mean /= seeds;
  return s;
}

// The released w differs from w_T by noise of the planned size: over 4000
// seeds the mean of ||z||^2 is expected_noise_sq within 5% (the standard
// error is ~1-1.5%), the mean of z is 0, and for the Laplace-vector noise the
// mean radius is dim * scale (the mean of Gamma(dim, scale)).
TEST(OutputGdTrain, ReleasedNoiseHasPlannedScale) {
  const int n = 400, d = 9, seeds = 4000;
  std::vector<double> rows = SyntheticRows(LossKind::kLogistic, n, d, 8);
  struct Case {
    double delta;
    Accountant accountant;
    NoiseKind noise;
  };
  Case cases[] = {{1e-5, Accountant::kTight, NoiseKind::kGaussian},
                  {0.0, Accountant::kTight, NoiseKind::kLaplace},
                  {1e-5, Accountant::kPaper, NoiseKind::kGaussian}};
  for (const Case& c : cases) {
    Plan p = PlanRelease(Opts(0.5, c.delta, 0.1, true, c.accountant), LossKind::kLogistic, n, d);
    ASSERT_EQ(p.noise, c.noise);
    ASSERT_GT(p.noise_scale, 0);
    NoiseStats s = MeasureNoise(p, rows, seeds);
    SCOPED_TRACE("delta=" + std::to_string(c.delta));
    EXPECT_NEAR(s.mean_sq / p.expected_noise_sq, 1.0, 0.05)
        << "mean ||z||^2 " << s.mean_sq << " planned " << p.expected_noise_sq;
    // Each coordinate of the mean: within 5 standard errors of 0.
    double coord_sd = std::sqrt(p.expected_noise_sq / p.dim);
    EXPECT_LT(s.mean.lpNorm<Eigen::Infinity>(), 5 * coord_sd / std::sqrt(double(seeds)));
    // Every released coordinate lies on the plan's grid (snapping).
    if (c.noise == NoiseKind::kLaplace) {
      // i.i.d. discrete Laplace: E||z||^2 ~= 2 dim scale^2.
      EXPECT_NEAR(s.mean_sq / (2 * p.dim * p.noise_scale * p.noise_scale), 1.0, 0.05);
    } else {
      // Gaussian: E||z||^2 = dim sigma^2 with sigma the planned scale.
      EXPECT_NEAR(s.mean_sq / (p.dim * p.noise_scale * p.noise_scale), 1.0, 0.05);
    }
  }
}

// Same seed, same rows: the same released model; another seed: another one.
TEST(OutputGdTrain, DeterministicForASeed) {
  const int n = 100, d = 3;
  std::vector<double> rows = SyntheticRows(LossKind::kHuber, n, d, 3);
  Plan p = PlanRelease(Opts(1.0, 1e-6, 0.1, true), LossKind::kHuber, n, d);
  SecureRng a = SecureRng::FromSeed(77), b = SecureRng::FromSeed(77), c = SecureRng::FromSeed(78);
  std::vector<double> wa = TrainModel(p, rows.data(), a);
  std::vector<double> wb = TrainModel(p, rows.data(), b);
  std::vector<double> wc = TrainModel(p, rows.data(), c);
  EXPECT_EQ(wa, wb);
  EXPECT_NE(wa, wc);
}

// ||w_T(S) - w_T(S')|| for S, S' equal but for their last row, with the
// plan's T and step and no noise.
double NeighbourDistance(const Plan& p, std::vector<double> s, std::vector<double> s2,
                         const std::vector<double>& last, const std::vector<double>& last2) {
  const int d = p.d;
  std::copy(last.begin(), last.end(), s.end() - (d + 1));
  std::copy(last2.begin(), last2.end(), s2.end() - (d + 1));
  return (TrainNoiseless(p, s) - TrainNoiseless(p, s2)).norm();
}

// Adversarial replacement rows for the last row of a dataset: the label
// flipped, the row negated, and rows on the sphere along +-w_T with the
// label that makes them maximally misfit (logistic) or with opposite huge
// targets (Huber, where the gradient difference is exactly 2L).
double MaxNeighbourDistance(const Plan& p, const std::vector<double>& rows) {
  const int d = p.d;
  std::vector<double> last(rows.end() - (d + 1), rows.end());
  Eigen::VectorXd w = TrainNoiseless(p, rows);
  Eigen::VectorXd u = w.head(d);
  if (u.norm() == 0) u = Eigen::VectorXd::Unit(d, 0);
  u /= u.norm();  // on the sphere: ||u|| = feature_bound = 1
  bool logistic = p.loss == LossKind::kLogistic;
  double big = 1e6;  // a Huber target far outside every margin
  auto row = [&](const Eigen::VectorXd& x, double y) {
    std::vector<double> r(x.data(), x.data() + d);
    r.push_back(y);
    return r;
  };
  std::vector<double> flipped = last, negated = last;
  flipped[d] = logistic ? -last[d] : -big;
  for (int j = 0; j < d; j++) negated[j] = -last[j];
  std::vector<std::pair<std::vector<double>, std::vector<double>>> pairs = {
      {last, flipped},
      {last, negated},
      {row(u, logistic ? 1 : big), row(u, logistic ? -1 : -big)},
      {row(u, logistic ? -1 : -big), row(-u, logistic ? -1 : -big)},
      {row(u, logistic ? 1 : big), row(-u, logistic ? -1 : -big)},
  };
  double worst = 0;
  for (const auto& pr : pairs) {
    double dist = NeighbourDistance(p, rows, rows, pr.first, pr.second);
    EXPECT_LE(dist, (p.sensitivity - p.rounding_inflation) * (1 + 1e-9)) << "bound violated";
    worst = std::max(worst, dist);
  }
  return worst;
}

// Empirical sensitivity: for neighbouring datasets (one row replaced,
// adversarially) the noiseless outputs are within plan.sensitivity, and the
// bound is not vacuous (the worst measured distance exceeds 1% of it). Tight
// strongly convex, tight convex, paper strongly convex and paper convex.
TEST(OutputGdSensitivity, NeighboursWithinBound) {
  struct Case {
    const char* name;
    double l2;
    Accountant accountant;
  };
  Case cases[] = {{"tight l2=0.1", 0.1, Accountant::kTight},
                  {"tight l2=0", 0.0, Accountant::kTight},
                  {"paper l2=0.1", 0.1, Accountant::kPaper},
                  {"paper l2=0", 0.0, Accountant::kPaper}};
  for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber}) {
    for (const Case& c : cases) {
      for (int64_t iterations : {0, 40}) {  // the plan's default T, and T = 40
        const int n = 50, d = 3;
        std::vector<double> rows = SyntheticRows(loss, n, d, 31);
        Options o = Opts(1.0, 1e-5, c.l2, true, c.accountant);
        o.iterations = iterations;
        Plan p = PlanRelease(o, loss, n, d);
        std::string name = std::string(loss == LossKind::kLogistic ? "logistic " : "huber ") +
                           c.name + (iterations ? " (T given)" : " (default T)");
        SCOPED_TRACE(name);
        double worst = MaxNeighbourDistance(p, rows);
        EXPECT_GT(worst, 0.01 * (p.sensitivity - p.rounding_inflation));
        std::cout << "[ info ] " << name << ": T=" << p.iterations << " step=" << p.step_size
                  << " worst distance / bound = " << worst / p.sensitivity << "\n";
      }
    }
  }
}

// The tight bound is attained: with Huber targets far from every margin the
// common part of the objective has Hessian l2 I, the differing row's
// gradient difference is exactly 2L in a fixed direction, and ||w_T - w'_T||
// equals 2L/(n mu) (1 - (1 - eta mu)^T) (mu > 0) or 2 eta L T / n (mu = 0).
TEST(OutputGdSensitivity, TightBoundAttained) {
  for (double l2 : {0.2, 0.0}) {
    const int n = 30, d = 3;
    std::vector<double> rows = SyntheticRows(LossKind::kHuber, n, d, 4);
    for (int i = 0; i < n; i++) rows[size_t(i) * (d + 1) + d] = i % 3 ? 1e6 : -1e6;
    Options o = Opts(1.0, 1e-5, l2, true);
    o.iterations = 60;
    Plan p = PlanRelease(o, LossKind::kHuber, n, d);
    std::vector<double> a = {0.6, 0.0, -0.8, 1e6}, b = {0.6, 0.0, -0.8, -1e6};  // ||x|| = 1
    double dist = NeighbourDistance(p, rows, rows, a, b);
    double L = std::sqrt(2.0);  // huber_delta 1, R = sqrt(1 + 1)
    double eta = p.step_size;
    double expected =
        l2 > 0 ? 2 * L / (n * l2) * (1 - std::pow(1 - eta * l2, 60.0)) : 2 * eta * L * 60 / n;
    EXPECT_NEAR(dist, expected, 1e-9 * expected) << "l2=" << l2;
    EXPECT_NEAR(dist, (p.sensitivity - p.rounding_inflation), 1e-9 * expected) << "l2=" << l2;
  }
}

}  // namespace
