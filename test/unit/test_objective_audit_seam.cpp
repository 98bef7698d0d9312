// The white-box audit seam of objective perturbation (AuditSite::
// kObjectiveLinear, include/dperm/algorithms/audit_seam.hpp; the canary's
// assumptions: objective_perturbation.cpp, THE AUDIT CANARY):
//  * with the null seam (every production plan) objective and
//    objective_approx release bit for bit what their Train computed before
//    the seam existed, written out here from the public pieces (b first,
//    then the solver, then the output noise), and so does a seam whose
//    oracle adds nothing;
//  * the canary of the audit harness (WhiteBoxNeighbours) is a linear row
//    loss s L <e_1, w>: it shifts P's value by <a, w>/n and its gradient by
//    a/n and leaves its Hessian alone, and on inert rows it moves the
//    released minimiser to the closed form -(b + k s L e_1)/(n mu_P) of the
//    quadratic P, within the solver's certified distance.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "../../bench/lib/audit_harness.hpp"
#include "dperm/algorithms/audit_seam.hpp"
#include "dperm/algorithms/objective_approx.hpp"
#include "dperm/algorithms/objective_perturbation.hpp"
#include "dperm/noise/exact_normal.hpp"
#include "dperm/noise/noise.hpp"
#include "dperm/plan/plan_noise.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"
#include "dperm/rows/rows.hpp"

namespace {

using dperm::Algorithm;
using dperm::LossKind;
using dperm::Plan;
using dperm::SecureRng;

const double kEpsilon = 1, kDelta = 1e-5;

// The white-box case of the audit table (AlgorithmCase, then WhiteBoxCase).
dperm::audit::Case SeamCase(Algorithm a, double delta = kDelta) {
  return dperm::audit::WhiteBoxCase(
      dperm::audit::AlgorithmCase(a, LossKind::kLogistic, kEpsilon, delta));
}

// Logistic rows with features of norm <= 1 and labels +-1, no row inert.
std::vector<double> RealRows(int n, int d, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> rows(size_t(n) * (d + 1));
  for (int i = 0; i < n; i++) {
    double* r = &rows[size_t(i) * (d + 1)];
    double norm = 0;
    for (int j = 0; j < d; j++) {
      r[j] = normal(gen);
      norm += r[j] * r[j];
    }
    for (int j = 0; j < d; j++) r[j] *= 0.9 / std::max(std::sqrt(norm), 0.9);
    r[d] = r[0] - 0.5 * r[1] + 0.3 * normal(gen) > 0 ? 1.0 : -1.0;
  }
  return rows;
}

std::vector<double> Release(const Plan& plan, const std::vector<double>& rows, uint64_t seed,
                            const dperm::AuditSeam* seam = nullptr) {
  Plan p = plan;
  p.audit_seam = seam;
  SecureRng rng = SecureRng::FromSeed(seed);
  return dperm::TrainModel(p, rows.data(), rng);
}

// What ObjectivePerturbation::Train and ObjectiveApprox::Train computed
// before the seam, from their public pieces, on the same rng: b, the
// solver (objective: ITEM from 0, or from -b/(n mu_P) at delta = 0;
// objective_approx: K SVRG epochs, certified), the planned output noise.
std::vector<double> ReleaseWithoutSeam(const Plan& plan, const std::vector<double>& rows,
                                       uint64_t seed) {
  SecureRng rng = SecureRng::FromSeed(seed);
  std::unique_ptr<dperm::Objective> f = dperm::MakeObjective(plan, rows.data());
  const double scale = plan.mechanism_fields.Get(dperm::kObjectiveNoise);
  const double lambda = plan.mechanism_fields.Get(dperm::kObjectiveLambda);
  const bool pure = !(plan.options.delta > 0);
  Eigen::VectorXd b = pure ? dperm::GammaNormNoise(rng, plan.dim, scale)
                           : dperm::ObjectiveNoise(rng, plan.dim, scale);
  Eigen::VectorXd w;
  if (plan.algorithm == Algorithm::kObjectiveApprox) {
    dperm::PerturbedObjective p(*f, lambda, b);
    dperm::SvrgResult s = dperm::SvrgFixedEpochs(
        p, plan.beta, plan.mechanism_fields.Get(dperm::kSolverTolerance), plan.iterations, rng);
    EXPECT_TRUE(s.certified);
    w = s.w;
  } else {
    Eigen::VectorXd start = Eigen::VectorXd::Zero(plan.dim);
    if (pure) start = -b / (double(plan.n) * dperm::PerturbedStrongConvexity(plan));
    dperm::PerturbedObjective p(*f, lambda, b);
    w = dperm::MinimisePerturbed(p, plan.beta + p.strong_convexity(), plan.iterations, start);
  }
  dperm::AddPlannedNoise(plan, rng, w.data());
  return std::vector<double>(w.data(), w.data() + w.size());
}

TEST(ObjectiveAuditSeam, NullSeamReleasesBitForBitAsBefore) {
  dperm::AuditSeam idle;
  int64_t calls = 0;
  idle.oracle = [&](dperm::AuditSite site, const int64_t*, int64_t, double*, int) {
    EXPECT_EQ(site, dperm::AuditSite::kObjectiveLinear);
    calls++;
  };
  for (Algorithm a : {Algorithm::kObjective, Algorithm::kObjectiveApprox})
    for (double delta : {kDelta, 0.0}) {
      if (a == Algorithm::kObjectiveApprox && delta == 0) continue;  // refused
      for (double l2 : {0.1, 1.0}) {
        dperm::audit::Case c = SeamCase(a, delta);
        c.options.l2 = l2;
        const Plan plan = dperm::PlanRelease(c.options, c.loss, c.n, c.d);
        ASSERT_EQ(plan.audit_seam, nullptr);  // PlanRelease makes no seam
        const std::vector<double> rows = RealRows(c.n, c.d, 5);
        for (uint64_t seed : {1, 2, 3}) {
          const std::vector<double> w = Release(plan, rows, seed);
          EXPECT_EQ(w, ReleaseWithoutSeam(plan, rows, seed))
              << c.name << " delta " << delta << " l2 " << l2;
          calls = 0;
          EXPECT_EQ(w, Release(plan, rows, seed, &idle)) << c.name;
          EXPECT_EQ(calls, 1) << c.name;  // once per release
        }
      }
    }
}

// The harness's canary is a linear row loss: P with it is P without it plus
// <a, w>/n, a = k s L e_1 -- value, gradient and Hessian (0) alike -- and
// ||a|| / k = L, the Lipschitz bound the proofs assume, attained.
TEST(ObjectiveAuditSeam, CanaryIsALinearRowLossOfNormL) {
  dperm::audit::Case c = SeamCase(Algorithm::kObjective);
  const Plan plan = dperm::PlanRelease(c.options, c.loss, c.n, c.d);
  const std::vector<double> rows = RealRows(c.n, c.d, 8);
  std::unique_ptr<dperm::Objective> f = dperm::MakeObjective(plan, rows.data());
  const double lambda = plan.mechanism_fields.Get(dperm::kObjectiveLambda);
  std::mt19937_64 gen(3);
  std::normal_distribution<double> normal(0, 1);
  for (int64_t k : {1, 5}) {
    const dperm::audit::Neighbours pair = dperm::audit::WhiteBoxNeighbours(plan, k);
    EXPECT_DOUBLE_EQ(pair.oracle_shift, 2 * double(k) * plan.L);
    for (int side = 0; side < 2; side++) {
      Eigen::VectorXd b(plan.dim), w(plan.dim);
      for (int j = 0; j < plan.dim; j++) {
        b(j) = normal(gen);
        w(j) = 3 * normal(gen);
      }
      Eigen::VectorXd with = b;
      (side == 0 ? pair.seam_d : pair.seam_dp)
          ->oracle(dperm::AuditSite::kObjectiveLinear, nullptr, plan.n, with.data(), plan.dim);
      const Eigen::VectorXd a = with - b;
      Eigen::VectorXd expect = Eigen::VectorXd::Zero(plan.dim);
      expect(0) = (side == 0 ? 1.0 : -1.0) * double(k) * plan.L;
      EXPECT_EQ(a, expect);
      EXPECT_LE(a.norm() / double(k), plan.L);
      // Other sites are left alone.
      Eigen::VectorXd untouched = b;
      pair.seam_d->oracle(dperm::AuditSite::kSspMoments, nullptr, plan.n, untouched.data(),
                          plan.dim);
      EXPECT_EQ(untouched, b);
      const dperm::PerturbedObjective p(*f, lambda, b), q(*f, lambda, with);
      const double n = double(plan.n);
      EXPECT_NEAR(q.Value(w) - p.Value(w), a.dot(w) / n, 1e-12 * (1 + std::abs(p.Value(w))));
      EXPECT_LT((q.Gradient(w) - p.Gradient(w) - a / n).norm(), 1e-14 * (1 + a.norm()));
      EXPECT_EQ(q.Hessian(w), p.Hessian(w));
    }
  }
}

// On the audit's inert rows (features 0, no intercept: every real row's
// loss is constant) P = const + (mu_P/2) ||w||^2 + <b + a, w>/n, whose
// minimiser is -(b + a)/(n mu_P). With the output noise off, the release
// with either side's canary (k = 1 and a unit of 5) is that point within
// the solver's certified distance solver_tolerance/mu_P, for b drawn as
// Train draws it; the canary moves it by k L/(n mu_P) along -s e_1, far
// beyond that distance (objective: 10^8 times it; objective_approx, whose
// certificate is L/(80 n), 80 times).
TEST(ObjectiveAuditSeam, CanaryMovesTheMinimiserToTheClosedForm) {
  for (Algorithm a : {Algorithm::kObjective, Algorithm::kObjectiveApprox})
    for (double delta : {kDelta, 0.0}) {
      if (a == Algorithm::kObjectiveApprox && delta == 0) continue;
      const dperm::audit::Case c = SeamCase(a, delta);
      Plan plan = dperm::PlanRelease(c.options, c.loss, c.n, c.d);
      plan.noise_scale = 0;  // the output noise off (AddPlannedNoise leaves w as it is)
      const double n_mu = double(plan.n) * dperm::PerturbedStrongConvexity(plan);
      const double reach = plan.mechanism_fields.Get(dperm::kSolverTolerance) /
                               dperm::PerturbedStrongConvexity(plan) * (1 + 1e-6) +
                           1e-13;
      const double scale = plan.mechanism_fields.Get(dperm::kObjectiveNoise);
      for (int64_t k : {1, 5}) {
        const dperm::audit::Neighbours pair = dperm::audit::WhiteBoxNeighbours(plan, k);
        for (uint64_t seed : {11, 12, 13}) {
          SecureRng rng = SecureRng::FromSeed(seed);  // Train draws b first
          const Eigen::VectorXd b = delta > 0 ? dperm::ObjectiveNoise(rng, plan.dim, scale)
                                              : dperm::GammaNormNoise(rng, plan.dim, scale);
          const std::vector<double> w0 = Release(plan, pair.rows_d, seed);
          for (int side = 0; side < 2; side++) {
            const double s = side == 0 ? 1.0 : -1.0;
            const std::vector<double> w =
                Release(plan, side == 0 ? pair.rows_d : pair.rows_dp, seed,
                        (side == 0 ? pair.seam_d : pair.seam_dp).get());
            for (int j = 0; j < plan.dim; j++) {
              const double closed = -(b(j) + (j == 0 ? s * double(k) * plan.L : 0.0)) / n_mu;
              EXPECT_NEAR(w[size_t(j)], closed, reach)
                  << c.name << " k " << k << " coordinate " << j;
              const double moved = j == 0 ? -s * double(k) * plan.L / n_mu : 0.0;
              EXPECT_NEAR(w[size_t(j)] - w0[size_t(j)], moved, 2 * reach) << c.name << " k " << k;
            }
          }
          EXPECT_GT(double(k) * plan.L / n_mu, 50 * reach) << c.name;  // not vacuous
        }
      }
    }
}

// The exact pair epsilon the harness reports for this canary is the
// Gaussian mechanism's at ratio (k 2L/(n mu_P)) / sd(w), which is the
// plan's kappa = 2L/sigma_1 times k when the output noise is negligible:
// below the claimed epsilon as planned (the plan's curve also pays a
// Jacobian term and a Rayleigh tail the linear canary cannot use), above
// it at noise / 2.
TEST(ObjectiveAuditSeam, PairEpsilonIsTheGaussianOfTheCanaryShift) {
  for (Algorithm a : {Algorithm::kObjective, Algorithm::kObjectiveApprox}) {
    const dperm::audit::Case c = SeamCase(a);
    Plan plan = dperm::PlanRelease(c.options, c.loss, c.n, c.d);
    const dperm::audit::Neighbours pair = dperm::audit::WhiteBoxNeighbours(plan, 1);
    const double honest = dperm::audit::WhiteBoxEpsilon(plan, pair, kDelta);
    const double kappa = 2 * plan.L / plan.mechanism_fields.Get(dperm::kObjectiveNoise);
    EXPECT_LE(honest, dperm::GaussianEpsilon(1.0, kDelta, kappa) * (1 + 1e-9)) << c.name;
    EXPECT_GT(honest, 0.95 * dperm::GaussianEpsilon(1.0, kDelta, kappa)) << c.name;
    EXPECT_LT(honest, kEpsilon) << c.name;
    dperm::audit::DivideNoise(plan, 2);
    EXPECT_GT(dperm::audit::WhiteBoxEpsilon(plan, pair, kDelta), 1.5 * kEpsilon) << c.name;
  }
}

}  // namespace
