// Reference solvers and synthetic data for the gradient-perturbation tests
// (dp_gd, dp_svrg, dp_svrg_pp): independent of the mechanisms under test.
#pragma once

#include <Eigen/Dense>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "dperm/losses/loss.hpp"
#include "dperm/losses/objective.hpp"
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/rows/rows.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"
#include "../../bench/lib/erm_rows.hpp"
#include "../../bench/lib/reference_solvers.hpp"

namespace dperm::testing {

// The norm of the smallest subgradient of F + l1 ||.||_1 at w (F the smooth
// part, l2 included): coordinate j contributes |g_j + l1 sign(w_j)| when
// w_j != 0 and max(|g_j| - l1, 0) when w_j = 0. Zero exactly at the
// minimiser; for an l2-strongly convex objective ||w - w*|| <= residual/l2.
inline double SubgradientResidual(const Objective& f, const Eigen::VectorXd& w) {
  Eigen::VectorXd g = f.Gradient(w);
  double l1 = f.l1();
  double sq = 0;
  for (Eigen::Index j = 0; j < w.size(); j++) {
    double r = w(j) != 0 ? g(j) + l1 * (w(j) > 0 ? 1 : -1) : std::max(std::abs(g(j)) - l1, 0.0);
    sq += r * r;
  }
  return std::sqrt(sq);
}

// The minimiser of F + l1 ||.||_1 by FISTA (Beck & Teboulle 2009) with the
// gradient restart of O'Donoghue & Candes (2015), step 1/smooth, its own
// soft thresholding; stops when the subgradient residual is below
// `tolerance`.
inline Eigen::VectorXd FistaMinimiser(const Objective& f, double smooth, double tolerance = 1e-12,
                                      int max_iterations = 200000) {
  const double t = 1 / smooth, l1 = f.l1();
  auto prox = [&](Eigen::VectorXd y) {
    for (Eigen::Index j = 0; j < y.size(); j++) {
      double a = std::abs(y(j)) - t * l1;
      y(j) = a > 0 ? (y(j) > 0 ? a : -a) : 0.0;
    }
    return y;
  };
  Eigen::VectorXd x = Eigen::VectorXd::Zero(f.dim()), y = x;
  double theta = 1;
  for (int it = 0; it < max_iterations; it++) {
    Eigen::VectorXd next = prox(y - t * f.Gradient(y));
    if ((y - next).dot(next - x) > 0) theta = 1;  // momentum points uphill: restart
    double theta_next = (1 + std::sqrt(1 + 4 * theta * theta)) / 2;
    y = next + (theta - 1) / theta_next * (next - x);
    x = next;
    theta = theta_next;
    if ((it & 63) == 0 && SubgradientResidual(f, x) < tolerance) break;
  }
  return x;
}

}  // namespace dperm::testing
