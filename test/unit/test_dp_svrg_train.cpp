// Training tests of DP-SVRG and DP-SVRG++ (test_dp_svrg.cpp has the plans and
// the accounting): convergence with the noise off to an independent
// l1-regularised optimum, and the noise actually added.
// GCC 12 reports a false "may be used uninitialized" inside Eigen's
// self-adjoint and triangular matrix-vector kernels instantiated here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "dperm/accounting/budget.hpp"
#include "dperm/planning/explain.hpp"
#include "dperm/algorithms/mechanism.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/accounting/pld_wor.hpp"
#include "dperm/accounting/rdp.hpp"
#include "dperm/accounting/rdp_wor.hpp"
#include "dperm/algorithms/svrg_common.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"
#include "dperm/planning/release_curve.hpp"
#include "erm_reference.hpp"
#include "svrg_support.hpp"
#include "test_helpers.hpp"

namespace {

using dperm::Accountant;
using dperm::Algorithm;
using dperm::Error;
using dperm::LossKind;
using dperm::Options;
using dperm::Plan;
using dperm::PlanRelease;
using dperm::SecureRng;
using dperm::SvrgSteps;
using dperm::testing::ErmRows;
using dperm::testing::ExpectInvalid;
using dperm::testing::FistaMinimiser;
using dperm::testing::SubgradientResidual;
using dperm::testing::ToVector;
using namespace dperm::testing::svrg;

// max_j |dF/dw_j| at w = 0 (without l2, which vanishes there): every l1
// above it makes 0 the minimiser.
double LargestGradientAtZero(LossKind loss, const std::vector<double>& rows, int n, int d) {
  Plan p = PlanRelease(SvrgOpts(Algorithm::kDpSvrgPp, 1, 1e-5, 0, 0, loss), loss, n, d);
  auto f = dperm::MakeObjective(p, rows.data());
  return f->LossGradient(Eigen::VectorXd::Zero(p.dim)).lpNorm<Eigen::Infinity>();
}

Eigen::VectorXd TrainNoiseless(Plan p, const std::vector<double>& rows) {
  p.noise_scale = 0;
  SecureRng rng = SecureRng::FromSeed(3);
  return ToVector(dperm::TrainModel(p, rows.data(), rng));
}

// With the noise off DP-SVRG is proximal SVRG and converges linearly to the
// minimiser of F + l2/2 ||.||^2 + l1 ||.||_1. Compared with FISTA
// (erm_reference.hpp) through the subgradient residual: F^r is
// l2-strongly convex, so ||w - w*|| <= residual(w)/l2 for any w and
// ||w - w_ref|| <= (residual(w) + residual(w_ref))/l2, a bound computed from
// the two outputs, not assumed. 30 epochs bring the residual below 1e-8.
// A large l1 zeroes coordinates: the output has exactly the reference's
// zeros.
TEST(DpSvrgTrain, NoiselessMatchesL1Reference) {
  for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber, LossKind::kSoftmax}) {
    const int n = 200, d = 5;
    const double l2 = 0.1;
    std::vector<double> rows = ErmRows(loss, n, d, 17);
    // A small l1, and a large one: half of max_j |dF/dw_j (0)|, above which
    // 0 is the minimiser, zeroes some coordinates but not all.
    const double large = 0.5 * LargestGradientAtZero(loss, rows, n, d);
    for (double l1 : {0.005, large}) {
      SCOPED_TRACE(std::string(Name(loss)) + " l1=" + std::to_string(l1));
      Options o = SvrgOpts(Algorithm::kDpSvrg, 1, 1e-5, l2, l1, loss);
      o.iterations = 30;
      Plan p = PlanRelease(o, loss, n, d);
      auto f = dperm::MakeObjective(p, rows.data());
      Eigen::VectorXd ref = FistaMinimiser(*f, ConstantsOf(loss).beta + l2);
      double r_ref = SubgradientResidual(*f, ref);
      ASSERT_LT(r_ref, 1e-11);
      Eigen::VectorXd w = TrainNoiseless(p, rows);
      double r = SubgradientResidual(*f, w);
      EXPECT_LT(r, 1e-8);
      EXPECT_LE((w - ref).norm(), (r + r_ref) / l2 + 1e-12);
      int zeros = 0;
      for (int j = 0; j < p.dim; j++) {
        EXPECT_EQ(w(j) == 0, ref(j) == 0)
            << "coordinate " << j << " w=" << w.transpose() << " ref=" << ref.transpose();
        zeros += ref(j) == 0;
      }
      if (l1 == large) {
        EXPECT_GE(zeros, 1) << ref.transpose();
        EXPECT_LT(zeros, p.dim) << ref.transpose();
      }
    }
  }
}

// DP-SVRG++ with the noise off and l2 = 0 (not strongly convex) converges to
// the minimiser of F + l1 ||.||_1. The data make F locally strongly convex
// with modulus lambda = the smallest eigenvalue of the loss Hessian at the
// reference, so near it ||w - w*|| <= residual(w)/lambda to first order; the
// test allows twice that. The objective gap is checked as well. A large l1
// gives exactly the reference's zeros.
TEST(DpSvrgPpTrain, NoiselessMatchesL1Reference) {
  for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber}) {
    const int n = 200, d = 5;
    std::vector<double> rows = ErmRows(loss, n, d, 23);
    const double large = 0.5 * LargestGradientAtZero(loss, rows, n, d);
    for (double l1 : {0.003, large}) {
      SCOPED_TRACE(std::string(Name(loss)) + " l1=" + std::to_string(l1));
      Options o = SvrgOpts(Algorithm::kDpSvrgPp, 1, 1e-5, 0, l1, loss);
      o.iterations = 15;
      Plan p = PlanRelease(o, loss, n, d);
      // Theorem 4.4's step: the default lowers it for the noise, which is off here.
      p.step_size = p.max_step_size;
      auto f = dperm::MakeObjective(p, rows.data());
      Eigen::VectorXd ref = FistaMinimiser(*f, ConstantsOf(loss).beta);
      double r_ref = SubgradientResidual(*f, ref);
      ASSERT_LT(r_ref, 1e-11);
      double lambda = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(f->LossHessian(ref))
                          .eigenvalues()
                          .minCoeff();
      ASSERT_GT(lambda, 1e-3);
      Eigen::VectorXd w = TrainNoiseless(p, rows);
      double r = SubgradientResidual(*f, w);
      EXPECT_LT(r, 1e-8);
      EXPECT_LT(f->Value(w) - f->Value(ref), 1e-12);
      EXPECT_LE((w - ref).norm(), 2 * (r + r_ref) / lambda + 1e-12);
      int zeros = 0;
      for (int j = 0; j < p.dim; j++) {
        EXPECT_EQ(w(j) == 0, ref(j) == 0) << "coordinate " << j;
        zeros += ref(j) == 0;
      }
      if (l1 == large) {
        EXPECT_GE(zeros, 1) << ref.transpose();
        EXPECT_LT(zeros, p.dim) << ref.transpose();
      }
    }
  }
}

// The noise of an inner step has the planned scale. DP-SVRG with one epoch
// of one step from x~ = 0 releases x_1 = -eta (grad F(0) + u)/(1 + eta l2)
// exactly (the two row gradients cancel at x = x~), so u is recovered; over
// 3000 seeds E||u||^2 = dim sigma^2 within 5% (standard error sqrt(2/(dim
// 3000)) ~ 1%) and each coordinate's mean is within 5 standard errors of 0.
TEST(DpSvrgTrain, NoiseHasPlannedScale) {
  const int n = 300, d = 8, seeds = 3000;
  const double l2 = 0.3;
  std::vector<double> rows = ErmRows(LossKind::kLogistic, n, d, 8);
  Plan p = PlanRelease(SvrgOpts(Algorithm::kDpSvrg, 1, 1e-5, l2), LossKind::kLogistic, n, d);
  ASSERT_GT(p.noise_scale, 0);
  p.iterations = 1;
  p.noisy_steps = dperm::SvrgTotalSteps(1, 1, false);  // m = 1, same sigma
  auto f = dperm::MakeObjective(p, rows.data());
  Eigen::VectorXd g0 = f->LossGradient(Eigen::VectorXd::Zero(p.dim));
  const double eta = p.step_size;
  double mean_sq = 0;
  Eigen::VectorXd mean = Eigen::VectorXd::Zero(p.dim);
  for (int s = 0; s < seeds; s++) {
    SecureRng rng = SecureRng::FromSeed(900 + s);
    Eigen::VectorXd x = ToVector(dperm::TrainModel(p, rows.data(), rng));
    Eigen::VectorXd u = -(1 + eta * l2) * x / eta - g0;
    mean_sq += u.squaredNorm() / seeds;
    mean += u / seeds;
  }
  EXPECT_NEAR(mean_sq / (p.dim * p.noise_scale * p.noise_scale), 1.0, 0.05);
  EXPECT_LT(mean.lpNorm<Eigen::Infinity>(), 5 * p.noise_scale / std::sqrt(double(seeds)));
}

// DP-SVRG++ with one doubling epoch (m_1 = 2 steps) and l2 = 0 outputs
// (x_1 + x_2)/2 = -eta (3/2 grad F(0) + u_1 + u_2/2) - eta/2 [g_i(x_1) -
// g_i(0)]; with eta 1e-4 of the default step the last term is below 1e-4
// of the noise, so z = -out/eta - 3/2 grad F(0) has E||z||^2 = 1.25 dim
// sigma^2 (within 5%).
TEST(DpSvrgPpTrain, NoiseHasPlannedScale) {
  const int n = 300, d = 8, seeds = 3000;
  std::vector<double> rows = ErmRows(LossKind::kHuber, n, d, 9);
  Plan p = PlanRelease(SvrgOpts(Algorithm::kDpSvrgPp, 1, 1e-5, 0), LossKind::kHuber, n, d);
  ASSERT_GT(p.noise_scale, 0);
  p.iterations = 1;
  p.noisy_steps = dperm::SvrgTotalSteps(1, 1, true);
  ASSERT_EQ(p.noisy_steps, 2);
  p.step_size *= 1e-4;
  auto f = dperm::MakeObjective(p, rows.data());
  Eigen::VectorXd g0 = f->LossGradient(Eigen::VectorXd::Zero(p.dim));
  double mean_sq = 0;
  for (int s = 0; s < seeds; s++) {
    SecureRng rng = SecureRng::FromSeed(1900 + s);
    Eigen::VectorXd x = ToVector(dperm::TrainModel(p, rows.data(), rng));
    Eigen::VectorXd z = -x / p.step_size - 1.5 * g0;
    mean_sq += z.squaredNorm() / seeds;
  }
  EXPECT_NEAR(mean_sq / (1.25 * p.dim * p.noise_scale * p.noise_scale), 1.0, 0.05);
}

}  // namespace
