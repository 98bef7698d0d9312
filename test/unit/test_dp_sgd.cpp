// Unit tests of dp_sgd (ANSGD, Bassily, Feldman, Talwar & Thakurta 2019,
// Algorithm 1): the plan against Theorem 3.2 / Algorithm 1 recomputed here,
// the accounting, one step against the update formula, the sampling, the
// noise, and convergence with the noise off.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "dperm/accounting/budget.hpp"
#include "dperm/accounting/calibrate.hpp"
#include "dperm/algorithms/laplacian_smoothing.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/accounting/pld_wor.hpp"
#include "dperm/accounting/rdp.hpp"
#include "dperm/plan/plan_noise.hpp"
#include "dperm/planning/release_curve.hpp"
#include "dperm/planning/plan_release.hpp"
#include "noisy_sgd_support.hpp"
#include "test_helpers.hpp"

namespace {

using dperm::Accountant;
using dperm::Algorithm;
using dperm::LossKind;
using dperm::Options;
using dperm::Plan;
using dperm::PlanRelease;
using dperm::testing::ExpectInvalid;
using dperm::testing::Name;
using dperm::testing::NewtonMinimiser;
using dperm::testing::Noiseless;
using dperm::testing::SyntheticRows;
using dperm::testing::TrainSeeded;

Options Opts(LossKind loss, double epsilon, double delta, double l2,
             Accountant accountant = Accountant::kTight) {
  return dperm::testing::SgdOpts(Algorithm::kDpSgd, loss, epsilon, delta, l2, accountant);
}

// L of each loss with feature_bound 1 and an intercept (R = sqrt(2)):
// logistic R, Huber huber_delta R, softmax sqrt(2) R.
double Lipschitz(LossKind loss) { return loss == LossKind::kSoftmax ? 2.0 : std::sqrt(2.0); }

const LossKind kLosses[] = {LossKind::kLogistic, LossKind::kHuber, LossKind::kSoftmax};

// Algorithm 1 and Theorem 3.2, outside the regime where dperm's accountant
// lowers T (n = 50000, epsilon = 1): T = min(n/8, eps^2 n^2 / (32 d
// log(1/delta))), m = max(n sqrt(eps/(4T)), 1) rounded up, M = L/l2 (or 10
// when l2 = 0), eta = M / ((L + l2 M) sqrt(T)); the noise is the calibrated
// sigma, or with accountant 'paper' max(paper sigma, calibrated sigma) with
// paper sigma^2 = 8 T L^2 log(1/delta) / (n^2 eps^2).
TEST(DpSgdPlan, PaperDefaults) {
  const int64_t n = 50000;
  const int d = 10;
  const double eps = 1, delta = 1e-5;
  for (LossKind loss : kLosses) {
    for (double l2 : {0.0, 0.1}) {
      SCOPED_TRACE(std::string(Name(loss)) + " l2=" + std::to_string(l2));
      Plan tight = PlanRelease(Opts(loss, eps, delta, l2), loss, n, d);
      Plan paper = PlanRelease(Opts(loss, eps, delta, l2, Accountant::kPaper), loss, n, d);
      const int dim = (d + 1) * (loss == LossKind::kSoftmax ? 3 : 1);
      const double L = Lipschitz(loss);
      double T = std::ceil(
          std::min(n / 8.0, eps * eps * double(n) * n / (32 * dim * std::log(1 / delta))));
      double m = std::ceil(n * std::sqrt(eps / (4 * T)));
      double M = l2 > 0 ? L / l2 : 10.0;
      double eta = M / ((L + l2 * M) * std::sqrt(T));
      double paper_sigma =
          std::sqrt(8 * T * L * L * std::log(1 / delta) / (double(n) * n * eps * eps));
      for (const Plan* p : {&tight, &paper}) {
        EXPECT_EQ(p->dim, dim);
        EXPECT_DOUBLE_EQ(p->L, L);
        EXPECT_EQ(p->iterations, int64_t(T)) << p->iterations_rule;
        EXPECT_EQ(p->iterations_rule.find("lowered"), std::string::npos);
        EXPECT_EQ(p->noisy_steps, p->iterations);
        EXPECT_EQ(p->batch_size, int64_t(m));
        EXPECT_EQ(p->sampling, dperm::Sampling::kWithoutReplacement);
        EXPECT_DOUBLE_EQ(p->sampling_rate, m / n);
        EXPECT_DOUBLE_EQ(p->radius, M);
        EXPECT_NEAR(p->step_size, eta, 1e-15 * eta);
        EXPECT_DOUBLE_EQ(p->sensitivity - p->rounding_inflation,
                         2 * L / m);  // a replaced row: 2L/m
        // sigma before the rounding term, in units of C = L/m.
        EXPECT_NEAR(p->noise_multiplier, dperm::testing::ExpectSnappedNoise(*p) * m / L,
                    1e-12 * p->noise_multiplier);
        EXPECT_EQ(p->mechanism_fields.Get(dperm::kLsSigma), 0);
        EXPECT_GT(p->noise_scale, 0);
      }
      const double paper_unrounded = dperm::testing::ExpectSnappedNoise(paper);
      const double want = std::max(paper_sigma, dperm::testing::ExpectSnappedNoise(tight));
      EXPECT_NEAR(paper_unrounded, want, 4e-6 * want);  // DyadicNoiseScale: < 2^-19 up
      if (paper_sigma < tight.noise_scale) {
        EXPECT_NE(paper.note.find("calibrated sigma is used"), std::string::npos) << paper.note;
      }
      // epsilon = 1 <= 1 but delta = 1e-5 > 1/n^2: the paper's assumption fails.
      EXPECT_NE(paper.note.find("delta <= 1/n^2"), std::string::npos) << paper.note;
      EXPECT_EQ(tight.note.find("delta <= 1/n^2"), std::string::npos) << tight.note;
    }
  }
}

// The paper's sigma is used when it is larger than the calibrated one. With
// the full batch (m = n) the calibrated sigma is that of T composed
// Gaussian mechanisms of sensitivity 2L/n, about sqrt(8 T log(1/delta))
// L / (n epsilon) -- line 1's value -- and the improved RDP conversion puts
// it a little below.
TEST(DpSgdPlan, PaperSigmaUsedWhenLarger) {
  Options o = Opts(LossKind::kLogistic, 0.5, 1e-8, 0.1, Accountant::kPaper);
  o.batch_size = 1000;
  o.iterations = 100;
  const int64_t n = 1000;
  Plan p = PlanRelease(o, LossKind::kLogistic, n, 3);
  Options t = o;
  t.accountant = Accountant::kTight;
  Plan tight = PlanRelease(t, LossKind::kLogistic, n, 3);
  double L = std::sqrt(2.0);
  double paper_sigma = L * std::sqrt(8 * 100 * std::log(1e8)) / (n * 0.5);
  ASSERT_GT(paper_sigma, tight.noise_scale);
  // The paper's sigma, at the rounded sensitivity (snapping).
  EXPECT_NEAR(dperm::testing::ExpectSnappedNoise(p), paper_sigma,
              4e-6 * paper_sigma);  // dyadic sigma
  EXPECT_GT(p.noise_scale, paper_sigma);
  EXPECT_NE(p.noise_rule.find("Algorithm 1, line 1"), std::string::npos);
}

// iterations, batch_size, step_size and radius override the defaults; the
// batch follows a given T when it is not given itself.
TEST(DpSgdPlan, OptionsOverride) {
  const int64_t n = 20000;
  Options o = Opts(LossKind::kHuber, 1, 1e-6, 0);
  o.iterations = 300;
  Plan p = PlanRelease(o, LossKind::kHuber, n, 5);
  EXPECT_EQ(p.iterations, 300);
  EXPECT_EQ(p.iterations_rule, "given");
  EXPECT_EQ(p.batch_size, int64_t(std::ceil(n * std::sqrt(1 / (4.0 * 300)))));
  o.batch_size = 77;
  o.step_size = 0.123;
  o.radius = 2.5;
  p = PlanRelease(o, LossKind::kHuber, n, 5);
  EXPECT_EQ(p.batch_size, 77);
  EXPECT_DOUBLE_EQ(p.step_size, 0.123);
  EXPECT_DOUBLE_EQ(p.radius, 2.5);
  EXPECT_DOUBLE_EQ(p.norm_bound, 2.5);
  EXPECT_DOUBLE_EQ(p.sampling_rate, 77.0 / n);
  // A batch of all rows is the full batch.
  o.batch_size = n;
  p = PlanRelease(o, LossKind::kHuber, n, 5);
  EXPECT_EQ(p.sampling, dperm::Sampling::kFullBatch);
}

// Lemma 3.3's bound at the plan's step size.
double Lemma33(const Plan& p) {
  double G = p.L + p.mu * p.radius, eta = p.step_size, T = double(p.iterations);
  return p.radius * p.radius / (2 * eta * T) + eta * G * G / 2 +
         eta * p.noise_scale * p.noise_scale * p.dim;
}

// Before the PLD calibration the accountant (WBK Thm 9) had a floor in sigma that
// forced T down at small epsilon (sigma > 10x line 1's at Theorem 3.2's T).
// With the rounded exact Gaussian and the pair's PLD there is no floor: at
// Theorem 3.2's T the multiplier is within 1.25x of the attainable lower
// bound. The default T is the one minimising Lemma 3.3's bound among the
// candidates, Theorem 3.2's T included. At epsilon = 1 the same shape keeps
// Theorem 3.2's T.
TEST(DpSgdPlan, NoAccountantFloorAtSmallEpsilon) {
  const int64_t n = 45211;
  const int d = 42;
  Plan p = PlanRelease(Opts(LossKind::kLogistic, 0.1, 1e-3, 0), LossKind::kLogistic, n, d);
  double t_paper = std::ceil(std::min(n / 8.0, 0.01 * double(n) * n / (32 * 43 * std::log(1e3))));
  ASSERT_LE(p.iterations, int64_t(t_paper));
  Options at_paper = Opts(LossKind::kLogistic, 0.1, 1e-3, 0);
  at_paper.iterations = int64_t(t_paper);
  Plan q = PlanRelease(at_paper, LossKind::kLogistic, n, d);
  const double lb = dperm::LowerBoundWorGaussianSigma(q.sampling_rate, q.noisy_steps, 0.1, 1e-3);
  const std::vector<double>& orders = dperm::LedgerOrders();
  const double thm9 = dperm::CalibrateNoiseMultiplier(
      [&](double z) {
        std::vector<double> c(orders.size());
        for (size_t i = 0; i < orders.size(); i++)
          c[i] = double(q.noisy_steps) *
                 dperm::RdpSampledWithoutReplacementGaussian(q.sampling_rate, z, orders[i]);
        return dperm::RdpToEpsilon(orders, c, 1e-3);
      },
      0.1);
  std::printf("T = %lld: sigma/C %.4f, Thm 9 %.4f, lower bound %.4f\n", (long long)q.noisy_steps,
              q.noise_multiplier, thm9, lb);
  EXPECT_GE(q.noise_multiplier, lb);
  // At epsilon = 0.1 the symmetric pair costs more than at the paper
  // settings (6.34 against a lower bound of 3.39 here), but far less than
  // Thm 9's floor.
  EXPECT_LE(q.noise_multiplier, 2 * lb);
  EXPECT_LT(q.noise_multiplier, 0.5 * thm9);
  EXPECT_LE(Lemma33(p), Lemma33(q) * (1 + 1e-12));
  // The plan still follows Algorithm 1 for its own T.
  EXPECT_EQ(p.batch_size, int64_t(std::ceil(n * std::sqrt(0.1 / (4.0 * p.iterations)))));
  Plan big = PlanRelease(Opts(LossKind::kLogistic, 1, 1e-3, 0), LossKind::kLogistic, n, d);
  EXPECT_EQ(big.iterations, int64_t(std::ceil(n / 8.0)));
}

// The release's RDP curve converts to at most the requested epsilon, and a
// calibrated (tight) plan uses nearly all of it.
TEST(DpSgdAccounting, EpsilonWithinBudget) {
  for (LossKind loss : kLosses) {
    for (double eps : {0.1, 1.0, 4.0}) {
      for (Accountant acc : {Accountant::kTight, Accountant::kPaper}) {
        const double delta = 1e-6;
        Plan p = PlanRelease(Opts(loss, eps, delta, 0.01, acc), loss, 30000, 8);
        // Recomputed for the PLD calibration: the pair's PLD at the
        // plan's multiplier; the ledger's curve converts at most 15% above.
        double spent = dperm::testing::PlanStepsEpsilon(p);
        SCOPED_TRACE(std::string(Name(loss)) + " eps=" + std::to_string(eps));
        EXPECT_LE(spent, eps * (1 + 1e-9));
        EXPECT_LE(dperm::RdpToEpsilon(dperm::LedgerOrders(), dperm::ReleaseRdpCurve(p), delta),
                  1.15 * eps);
        if (p.noise_rule.find("Zhu, Dong") != std::string::npos) {
          EXPECT_GE(spent, 0.99 * eps);
        }
      }
    }
  }
}

// The Euclidean projection onto the ball of the plan's radius.
Eigen::VectorXd Project(Eigen::VectorXd w, double radius) {
  double norm = w.norm();
  if (norm > radius) w *= radius / norm;
  return w;
}

// One step is Algorithm 1's line 6 from w_0 = 0: with the full batch and the
// noise drawn from a generator with the training seed, w_1 = Proj(-eta
// (grad L(0) + z)), z_j = sigma * (j-th Gaussian); two noiseless steps give
// (w_1 + w_2)/2 with w_2 = Proj(w_1 - eta (grad L(w_1) + l2 w_1)). The small
// radius makes the projection act.
TEST(DpSgdTrain, StepsMatchAlgorithm1) {
  for (LossKind loss : kLosses) {
    SCOPED_TRACE(Name(loss));
    const int n = 20, d = 3;
    std::vector<double> rows = SyntheticRows(loss, n, d, 3);
    Options o = Opts(loss, 1, 1e-5, 0.3);
    o.iterations = 1;
    o.batch_size = n;
    o.step_size = 0.7;
    o.radius = 0.2;
    Plan p = PlanRelease(o, loss, n, d);
    ASSERT_GT(p.noise_scale, 0);
    auto f = dperm::MakeObjective(p, rows.data());
    Eigen::VectorXd zero = Eigen::VectorXd::Zero(p.dim);
    dperm::SecureRng rng = dperm::SecureRng::FromSeed(41);
    Eigen::VectorXd noisy = f->LossGradient(zero);  // the batch mean, snapped
    dperm::AddPlannedNoise(p, rng, noisy.data());
    Eigen::VectorXd step = -0.7 * noisy;
    ASSERT_GT(step.norm(), 0.2);  // the projection acts
    Eigen::VectorXd w1 = Project(step, 0.2);
    EXPECT_LT((TrainSeeded(p, rows, 41) - w1).norm(), 1e-13);

    o.iterations = 2;
    Plan p2 = Noiseless(PlanRelease(o, loss, n, d));
    Eigen::VectorXd v1 = Project(-0.7 * f->LossGradient(zero), 0.2);
    Eigen::VectorXd v2 = Project(v1 - 0.7 * (f->LossGradient(v1) + 0.3 * v1), 0.2);
    EXPECT_LT((TrainSeeded(p2, rows, 5) - (v1 + v2) / 2).norm(), 1e-13);
  }
}

// Records the rows each step reads (the objective of a 2-coordinate model).
class RecordingObjective final : public dperm::Objective {
 public:
  explicit RecordingObjective(Eigen::Index n) : Objective(0), n_(n) {}
  int dim() const override { return 2; }
  Eigen::Index n() const override { return n_; }
  double LossValue(const Eigen::VectorXd&) const override { return 0; }
  Eigen::VectorXd LossGradient(const Eigen::VectorXd&) const override {
    return Eigen::VectorXd::Zero(2);
  }
  void AddRowGradients(const Eigen::VectorXd&, const int64_t* rows, int64_t m,
                       Eigen::VectorXd&) const override {
    batches.emplace_back(rows, rows + m);
  }
  Eigen::MatrixXd LossHessian(const Eigen::VectorXd&) const override {
    return Eigen::MatrixXd::Zero(2, 2);
  }
  mutable std::vector<std::vector<int64_t>> batches;

 private:
  Eigen::Index n_;
};

// Each step reads batch_size distinct rows, and over many steps every row
// is read about T m / n times (each count is Binomial(T, m/n); all 50 within
// 5 standard deviations).
TEST(DpSgdTrain, BatchesAreUniformWithoutReplacement) {
  const int64_t n = 50, m = 10, T = 4000;
  Options o = Opts(LossKind::kLogistic, 1, 1e-5, 0);
  o.iterations = T;
  o.batch_size = m;
  Plan p = PlanRelease(o, LossKind::kLogistic, n, 1);
  ASSERT_EQ(p.dim, 2);
  RecordingObjective f(n);
  dperm::SecureRng rng = dperm::SecureRng::FromSeed(9);
  dperm::MechanismFor(Algorithm::kDpSgd).Train(p, f, rng);
  ASSERT_EQ(int64_t(f.batches.size()), T);
  std::vector<int64_t> count(n, 0);
  for (const auto& b : f.batches) {
    ASSERT_EQ(int64_t(b.size()), m);
    EXPECT_EQ(std::set<int64_t>(b.begin(), b.end()).size(), size_t(m));
    for (int64_t i : b) {
      ASSERT_GE(i, 0);
      ASSERT_LT(i, n);
      count[i]++;
    }
  }
  double q = double(m) / n, mean = T * q, sd = std::sqrt(T * q * (1 - q));
  for (int64_t i = 0; i < n; i++) EXPECT_NEAR(count[i], mean, 5 * sd) << "row " << i;
}

// With the noise off and the full batch, strongly convex (l2 = 0.1): the
// iterates are gradient descent with eta = 1/(beta + l2), a (1 - eta l2)-
// contraction towards w_hat (which lies in the default ball ||w|| <= L/l2,
// and projection onto a ball containing w_hat does not increase the
// distance), so ||w_bar - w_hat|| <= c ||w_hat|| / (T eta l2) with
// c = 1 - eta l2. Convex (Huber, l2 = 0, w_hat inside the default ball):
// F(w_bar) - F(w_hat) <= ||w_hat||^2 / (2 eta T) for eta = 1/beta.
TEST(DpSgdTrain, NoiselessFullBatchReachesOptimum) {
  const int n = 300, d = 4, T = 3000;
  for (LossKind loss : kLosses) {
    SCOPED_TRACE(Name(loss));
    std::vector<double> rows = SyntheticRows(loss, n, d, 21);
    Options o = Opts(loss, 1, 1e-5, 0.1);
    o.iterations = T;
    o.batch_size = n;
    Plan base = PlanRelease(o, loss, n, d);
    o.step_size = 1 / (base.beta + base.mu);
    Plan p = Noiseless(PlanRelease(o, loss, n, d));
    auto f = dperm::MakeObjective(p, rows.data());
    Eigen::VectorXd w_hat = NewtonMinimiser(*f);
    ASSERT_LT(f->Gradient(w_hat).norm(), 1e-10);
    ASSERT_LT(w_hat.norm(), p.radius);
    EXPECT_GT(w_hat.norm(), 0.1);
    double eta = p.step_size, c = 1 - eta * p.mu;
    double tol = c * w_hat.norm() / (T * eta * p.mu);
    EXPECT_LT(tol, 0.01 * w_hat.norm());
    EXPECT_LE((TrainSeeded(p, rows, 1) - w_hat).norm(), tol);
  }
  std::vector<double> rows = SyntheticRows(LossKind::kHuber, n, d, 22);
  Options o = Opts(LossKind::kHuber, 1, 1e-5, 0);
  o.iterations = T;
  o.batch_size = n;
  o.step_size = 1.0 / 2;  // 1/beta, beta = R^2 = 2
  Plan p = Noiseless(PlanRelease(o, LossKind::kHuber, n, d));
  auto f = dperm::MakeObjective(p, rows.data());
  Eigen::VectorXd w_hat = NewtonMinimiser(*f);
  ASSERT_LT(w_hat.norm(), p.radius);
  double excess = f->Value(TrainSeeded(p, rows, 1)) - f->Value(w_hat);
  EXPECT_GE(excess, -1e-12);
  EXPECT_LE(excess, w_hat.squaredNorm() / (2 * 0.5 * T));
}

// With the noise off, mini-batches and the plan's own step eta = M/(G
// sqrt(T)), the average over seeds of F(w_bar) - F(w_hat) is within Lemma
// 3.3's bound with sigma = 0, M^2/(2 eta T) + eta G^2/2 (here about 0.03,
// far below F(0) - F(w_hat), so a broken update would fail).
TEST(DpSgdTrain, NoiselessMiniBatchWithinLemma33) {
  const int n = 2000, d = 5, T = 20000, seeds = 4;
  for (LossKind loss : {LossKind::kLogistic, LossKind::kSoftmax}) {
    SCOPED_TRACE(Name(loss));
    std::vector<double> rows = SyntheticRows(loss, n, d, 7);
    Options o = Opts(loss, 1, 1e-5, 0.1);
    o.iterations = T;
    Plan probe = PlanRelease(o, loss, n, d);
    auto f = dperm::MakeObjective(probe, rows.data());
    Eigen::VectorXd w_hat = NewtonMinimiser(*f);
    o.radius = 1.5 * w_hat.norm();  // a ball that contains w_hat
    Plan p = Noiseless(PlanRelease(o, loss, n, d));
    ASSERT_LT(p.batch_size, n);
    double G = p.L + p.mu * p.radius, eta = p.step_size;
    double bound = p.radius * p.radius / (2 * eta * T) + eta * G * G / 2;
    double gap0 = f->Value(Eigen::VectorXd::Zero(p.dim)) - f->Value(w_hat);
    EXPECT_LT(bound, 0.25 * gap0);
    double excess = 0;
    for (int s = 0; s < seeds; s++)
      excess += f->Value(TrainSeeded(p, rows, 100 + s)) - f->Value(w_hat);
    EXPECT_LE(excess / seeds, bound) << "bound " << bound << " gap at 0 " << gap0;
  }
}

// The noise has the planned scale: with one full-batch step and no
// projection, w_1 - w_1(noiseless) = -eta z; over 3000 seeds the mean of
// ||z||^2 is dim sigma^2 within 5% (standard error about 1.3% at dim 11)
// and each coordinate's mean is within 5 standard errors of 0.
TEST(DpSgdTrain, NoiseHasPlannedScale) {
  const int n = 200, d = 10, seeds = 3000;
  std::vector<double> rows = SyntheticRows(LossKind::kLogistic, n, d, 4);
  Options o = Opts(LossKind::kLogistic, 0.7, 1e-5, 0);
  o.iterations = 1;
  o.batch_size = n;
  o.radius = 1e6;
  o.step_size = 0.5;
  Plan p = PlanRelease(o, LossKind::kLogistic, n, d);
  Eigen::VectorXd w0 = TrainSeeded(Noiseless(p), rows, 1);
  double sum_sq = 0;
  Eigen::VectorXd mean = Eigen::VectorXd::Zero(p.dim);
  for (int s = 0; s < seeds; s++) {
    Eigen::VectorXd z = (TrainSeeded(p, rows, 500 + s) - w0) / -0.5;
    sum_sq += z.squaredNorm();
    mean += z;
  }
  double sigma = p.noise_scale;
  EXPECT_NEAR(sum_sq / seeds / (p.dim * sigma * sigma), 1.0, 0.05);
  EXPECT_LT((mean / seeds).lpNorm<Eigen::Infinity>(), 5 * sigma / std::sqrt(double(seeds)));
}

TEST(DpSgdTrain, DeterministicForASeed) {
  std::vector<double> rows = SyntheticRows(LossKind::kHuber, 500, 3, 3);
  Plan p = PlanRelease(Opts(LossKind::kHuber, 1, 1e-6, 0.1), LossKind::kHuber, 500, 3);
  EXPECT_EQ(TrainSeeded(p, rows, 77), TrainSeeded(p, rows, 77));
  EXPECT_NE(TrainSeeded(p, rows, 77), TrainSeeded(p, rows, 78));
}

TEST(DpSgdPlan, Errors) {
  auto plan = [](const Options& o, LossKind loss) {
    return dperm::testing::Planning(o, loss, 1000, 4);
  };
  Options o = Opts(LossKind::kLogistic, 1, 0, 0);
  ExpectInvalid(plan(o, LossKind::kLogistic), "needs delta > 0");
  o = Opts(LossKind::kLogistic, 1, 1e-6, 0);
  o.l1 = 0.1;
  ExpectInvalid(plan(o, LossKind::kLogistic), "\"l1\" does not apply to algorithm dp_sgd");
  o = Opts(LossKind::kLogistic, 1, 1e-6, 0);
  o.ls_sigma = 1;
  ExpectInvalid(plan(o, LossKind::kLogistic), "\"ls_sigma\" does not apply");
  o.ls_sigma = 0;  // given as 0 is still given
  ExpectInvalid(plan(o, LossKind::kLogistic), "\"ls_sigma\"");
  o = Opts(LossKind::kLogistic, 1, 1e-6, 0);
  o.batch_size = 1001;
  ExpectInvalid(plan(o, LossKind::kLogistic), "batch_size 1001 must be between 1 and n = 1000");
  o = Opts(LossKind::kSoftmax, 1, 1e-6, 0);
  o.classes = 0;
  ExpectInvalid(plan(o, LossKind::kSoftmax), "classes");
  // A valid plan for each loss throws nothing.
  for (LossKind loss : kLosses) EXPECT_NO_THROW(PlanRelease(Opts(loss, 1, 1e-6, 0), loss, 1000, 4));
}

}  // namespace
