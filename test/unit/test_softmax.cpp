// Unit tests of the softmax (multinomial logistic) objective and the public
// constants the privacy analysis takes from it (plan_steps.hpp): the
// gradient and Hessian against finite differences of the value, the
// per-row bounds ||grad f_i|| <= L = sqrt(2) R and lambda_max(Hess f_i) <=
// beta = R^2/2 on random rows and weights (and that both are attained in
// the limit, so the constants are not loose), noiseless output_gd training
// reaching the Newton optimum, and the `classes` option rules.
#include <gtest/gtest.h>

// GCC 12 reports a false maybe-uninitialized inside Eigen's self-adjoint
// eigensolver (Eigen/src/Core/products/SelfadjointMatrixVector.h).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"
#include "dperm/rows/rows.hpp"
#include "dperm/losses/softmax.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"
#include "test_helpers.hpp"
#include "../../bench/lib/reference_solvers.hpp"

using dperm::testing::NewtonMinimiser;

namespace {

using dperm::LossKind;
using dperm::Options;
using dperm::Plan;
using dperm::PlanRelease;
using dperm::SoftmaxObjective;

using dperm::testing::Opts;

Options SoftmaxOpts(int classes, double l2, bool fit_intercept, double feature_bound = 1) {
  Options o = Opts(1.0, 1e-6, l2, fit_intercept);
  o.classes = classes;
  o.feature_bound = feature_bound;
  return o;
}

// n rows of stride d + 1: features clipped to `bound` (raw scale `scale`),
// then a class index drawn from a softmax model with K random class centres.
std::vector<double> SyntheticRows(int n, int d, int classes, double bound, double scale,
                                  uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> unif(0, 1);
  std::vector<double> truth(size_t(classes) * (d + 1));
  for (double& v : truth) v = 2 * normal(gen);
  std::vector<double> rows(size_t(n) * (d + 1)), raw(d), p(classes);
  for (int i = 0; i < n; i++) {
    for (double& v : raw) v = scale * normal(gen);
    double* r = &rows[size_t(i) * (d + 1)];
    dperm::ClipRow(raw.data(), d, bound, r);
    for (int k = 0; k < classes; k++) {
      const double* t = &truth[size_t(k) * (d + 1)];
      p[k] = t[d];
      for (int j = 0; j < d; j++) p[k] += t[j] * r[j];
    }
    dperm::SoftmaxInPlace(p.data(), classes);
    double u = unif(gen), acc = 0;
    int y = classes - 1;
    for (int k = 0; k < classes; k++) {
      acc += p[k];
      if (u < acc) {
        y = k;
        break;
      }
    }
    r[d] = y;
  }
  return rows;
}

// The objective over rows in place, as MakeObjective views them.
SoftmaxObjective View(const std::vector<double>& rows, int n, int d, int classes,
                      bool fit_intercept, double l2) {
  dperm::FeatureMap x(rows.data(), n, d, Eigen::OuterStride<>(d + 1));
  dperm::LabelMap y(rows.data() + d, n, Eigen::InnerStride<>(d + 1));
  return SoftmaxObjective(x, y, classes, fit_intercept, l2);
}

Eigen::VectorXd RandomVector(std::mt19937_64& gen, int dim, double scale) {
  std::normal_distribution<double> normal(0, scale);
  Eigen::VectorXd w(dim);
  for (int i = 0; i < dim; i++) w(i) = normal(gen);
  return w;
}

// Central differences of Value give the gradient, central differences of
// Gradient give the Hessian, for K = 2, 3, 5 with and without intercept and
// l2 > 0. Step h = 1e-5: truncation error ~h^2 |f'''| ~ 1e-10, rounding
// ~eps |f| / h ~ 1e-11, so 1e-7 (relative to the entry scale) is loose
// enough never to flake and tight enough to catch a wrong factor or sign.
TEST(SoftmaxObjective, GradientAndHessianMatchFiniteDifferences) {
  std::mt19937_64 gen(11);
  const int n = 40, d = 3;
  const double h = 1e-5;
  for (int classes : {2, 3, 5}) {
    for (bool fit_intercept : {true, false}) {
      std::vector<double> rows = SyntheticRows(n, d, classes, 1.0, 0.8, 7 + classes);
      SoftmaxObjective f = View(rows, n, d, classes, fit_intercept, 0.05);
      ASSERT_EQ(f.dim(), classes * (d + (fit_intercept ? 1 : 0)));
      SCOPED_TRACE("K=" + std::to_string(classes) + " intercept=" + std::to_string(fit_intercept));
      for (int trial = 0; trial < 3; trial++) {
        Eigen::VectorXd w = RandomVector(gen, f.dim(), 1.5);
        Eigen::VectorXd g = f.Gradient(w);
        Eigen::MatrixXd hess = f.Hessian(w);
        Eigen::VectorXd fd_g(f.dim());
        Eigen::MatrixXd fd_h(f.dim(), f.dim());
        for (int i = 0; i < f.dim(); i++) {
          Eigen::VectorXd e = Eigen::VectorXd::Zero(f.dim());
          e(i) = h;
          fd_g(i) = (f.Value(w + e) - f.Value(w - e)) / (2 * h);
          fd_h.col(i) = (f.Gradient(w + e) - f.Gradient(w - e)) / (2 * h);
        }
        EXPECT_LT((g - fd_g).lpNorm<Eigen::Infinity>(), 1e-7 * (1 + g.lpNorm<Eigen::Infinity>()));
        EXPECT_LT((hess - fd_h).lpNorm<Eigen::Infinity>(),
                  1e-7 * (1 + hess.lpNorm<Eigen::Infinity>()));
        // Symmetric, and the regulariser is on the diagonal.
        EXPECT_LT((hess - hess.transpose()).lpNorm<Eigen::Infinity>(), 1e-15);
        EXPECT_NEAR((hess - f.LossHessian(w)).trace(), 0.05 * f.dim(), 1e-12);
        // The mini-batch gradient over all rows is n times the loss gradient.
        std::vector<int64_t> all(n);
        for (int i = 0; i < n; i++) all[i] = i;
        Eigen::VectorXd sum = Eigen::VectorXd::Zero(f.dim());
        f.AddRowGradients(w, all.data(), n, sum);
        EXPECT_LT((sum / n - f.LossGradient(w)).lpNorm<Eigen::Infinity>(), 1e-14);
      }
    }
  }
}

// One row's loss, on the largest rows clipping allows: its gradient norm
// never exceeds L = sqrt(2) R and its Hessian's largest eigenvalue never
// exceeds beta = R^2/2, with R = sqrt(feature_bound^2 + fit_intercept)
// recomputed here, over random rows, classes and weights of every scale
// (small weights put p near uniform, large ones near a vertex). The plan's
// L and beta are these constants.
TEST(SoftmaxObjective, RowGradientAndHessianWithinPlanConstants) {
  std::mt19937_64 gen(5);
  std::normal_distribution<double> normal(0, 1);
  const int d = 4;
  double max_grad_ratio = 0, max_hess_ratio = 0;
  for (int classes : {2, 3, 7}) {
    for (bool fit_intercept : {true, false}) {
      for (double bound : {0.5, 1.0, 3.0}) {
        Plan p = PlanRelease(SoftmaxOpts(classes, 0.1, fit_intercept, bound), LossKind::kSoftmax,
                             100, d);
        const double R = std::sqrt(bound * bound + (fit_intercept ? 1 : 0));
        ASSERT_NEAR(p.R, R, 1e-15);
        ASSERT_NEAR(p.L, std::sqrt(2.0) * R, 1e-14);
        ASSERT_NEAR(p.beta, R * R / 2, 1e-14);
        ASSERT_EQ(p.dim, classes * (d + (fit_intercept ? 1 : 0)));
        for (int trial = 0; trial < 60; trial++) {
          // A row on the sphere of radius `bound` (the worst case of clipping).
          std::vector<double> raw(d), row(d + 1);
          for (double& v : raw) v = normal(gen);
          double norm = 0;
          for (double v : raw) norm += v * v;
          for (int j = 0; j < d; j++) row[j] = raw[j] * bound / std::sqrt(norm);
          row[d] = trial % classes;
          SoftmaxObjective f = View(row, 1, d, classes, fit_intercept, 0);
          double scale = std::pow(10.0, -2 + 4 * (trial % 5) / 4.0);  // 0.01 .. 100
          Eigen::VectorXd w = RandomVector(gen, f.dim(), scale);
          double grad = f.LossGradient(w).norm();
          Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(f.LossHessian(w));
          double top = eig.eigenvalues().maxCoeff();
          EXPECT_LE(grad, p.L * (1 + 1e-12));
          EXPECT_LE(top, p.beta * (1 + 1e-12));
          EXPECT_GE(eig.eigenvalues().minCoeff(), -1e-12);  // convex
          max_grad_ratio = std::max(max_grad_ratio, grad / p.L);
          max_hess_ratio = std::max(max_hess_ratio, top / p.beta);
        }
      }
    }
  }
  // Random draws come close to both bounds (large weights put p near a
  // vertex other than e_y; small ones with K = 2 put p near (1/2, 1/2)).
  EXPECT_GT(max_grad_ratio, 0.99);
  EXPECT_GT(max_hess_ratio, 0.99);
}

// The constants are attained: with the row's class scored -s and one other
// class +s, ||grad|| -> sqrt(2) R as s grows; with two classes tied and the
// rest at -s, lambda_max -> R^2/2 (p = (1/2, 1/2, 0, ...)).
TEST(SoftmaxObjective, PlanConstantsAreTight) {
  const int d = 2, classes = 4;
  std::vector<double> row = {0.6, 0.8, 0.0};  // ||x|| = 1, class 0
  SoftmaxObjective f = View(row, 1, d, classes, true, 0);
  const double R = std::sqrt(2.0), L = std::sqrt(2.0) * R, beta = R * R / 2;
  const int c = d + 1;
  // Scores are <w_k, (x, 1)>: put them in the intercepts.
  Eigen::VectorXd w = Eigen::VectorXd::Zero(classes * c);
  w(0 * c + d) = -30;
  w(1 * c + d) = 30;
  w(2 * c + d) = -30;
  w(3 * c + d) = -30;
  EXPECT_NEAR(f.LossGradient(w).norm() / L, 1.0, 1e-12);
  w.setZero();
  w(2 * c + d) = -60;
  w(3 * c + d) = -60;
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(f.LossHessian(w));
  EXPECT_NEAR(eig.eigenvalues().maxCoeff() / beta, 1.0, 1e-12);
}

// output_gd trains softmax through the Objective interface: with the noise
// turned off and T = 3000 steps of 2/(beta + 2 mu) (contraction 1 - eta mu
// = 0.83 per step at mu = 0.1, so the error is ~0.83^3000 ||w_hat||, far
// below rounding), it reaches the Newton minimiser to 1e-8.
TEST(SoftmaxTrain, NoiselessOutputGdReachesOptimum) {
  const int n = 300, d = 3, classes = 3;
  for (bool fit_intercept : {true, false}) {
    std::vector<double> rows = SyntheticRows(n, d, classes, 1.0, 0.8, 31);
    Plan p = PlanRelease(SoftmaxOpts(classes, 0.1, fit_intercept), LossKind::kSoftmax, n, d);
    p.iterations = 3000;
    p.noise_scale = 0;
    std::unique_ptr<dperm::Objective> f = dperm::MakeObjective(p, rows.data());
    ASSERT_EQ(f->dim(), p.dim);
    Eigen::VectorXd w_hat = NewtonMinimiser(*f);
    ASSERT_LT(f->Gradient(w_hat).norm(), 1e-12);
    dperm::SecureRng rng = dperm::SecureRng::FromSeed(1);
    std::vector<double> w = dperm::TrainModel(p, rows.data(), rng);
    ASSERT_EQ(int(w.size()), p.dim);
    Eigen::Map<const Eigen::VectorXd> wv(w.data(), p.dim);
    EXPECT_LT((wv - w_hat).lpNorm<Eigen::Infinity>(), 1e-8) << "intercept=" << fit_intercept;
    EXPECT_GT(w_hat.norm(), 0.1);
  }
}

// `classes` is required for softmax (K >= 2) and refused for the binary
// losses, both by the plan and by the check the aggregates run first.
TEST(SoftmaxOptions, ClassesRequiredForSoftmaxOnly) {
  Options o = Opts(1.0, 0, 0.1);
  EXPECT_THROW(dperm::CheckOptionsForLoss(o, LossKind::kSoftmax), dperm::Error);
  EXPECT_THROW(PlanRelease(o, LossKind::kSoftmax, 100, 3), dperm::Error);
  dperm::testing::ExpectInvalid([&] { dperm::CheckOptionsForLoss(o, LossKind::kSoftmax); },
                                "classes");
  o.classes = 3;
  EXPECT_NO_THROW(dperm::CheckOptionsForLoss(o, LossKind::kSoftmax));
  Plan p = PlanRelease(o, LossKind::kSoftmax, 100, 3);
  EXPECT_EQ(p.classes, 3);
  EXPECT_EQ(p.dim, 12);
  EXPECT_THROW(dperm::CheckOptionsForLoss(o, LossKind::kLogistic), dperm::Error);
  EXPECT_THROW(dperm::CheckOptionsForLoss(o, LossKind::kHuber), dperm::Error);
  EXPECT_THROW(PlanRelease(o, LossKind::kLogistic, 100, 3), dperm::Error);
  o.classes = 0;
  EXPECT_NO_THROW(dperm::CheckOptionsForLoss(o, LossKind::kLogistic));
}

}  // namespace
