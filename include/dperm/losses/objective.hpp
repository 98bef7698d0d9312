// The empirical risk every mechanism minimises, whatever the model:
// F(w) = 1/n sum_i f_i(w) + l2/2 ||w||^2 + l1 ||w||_1 (both penalties on
// every coordinate, the intercepts included, as the l2 term always was).
// Gradient and Hessian are those of the smooth part (without l1); methods
// with an l1 term take proximal steps (ProxL1). Binary linear models (logistic,
// Huber) and the multinomial softmax model implement it; mechanisms only see
// this interface (full gradients for GD, row gradients for mini-batch SGD).
#pragma once
#include "dperm/util/errors.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <cstdint>

namespace dperm {

class Objective {
 public:
  explicit Objective(double l2, double l1 = 0) : l2_(l2), l1_(l1) {}
  virtual ~Objective() = default;
  // Model coordinates (the length of w) and rows.
  virtual int dim() const = 0;
  virtual Eigen::Index n() const = 0;
  double l2() const { return l2_; }
  double l1() const { return l1_; }
  // The grid of the exact gradient sums (exact_sum.hpp): LossGradient and
  // AddRowGradients round every row's contribution to it and sum in
  // integers. MakeObjective always sets the plan's sum_grid; 0 (objectives
  // built directly, in tests of a loss alone) sums in floating point.
  void SetSumGrid(double grid) { sum_grid_ = grid; }
  double sum_grid() const { return sum_grid_; }

  // 1/n sum_i f_i(w), without the regulariser.
  virtual double LossValue(const Eigen::VectorXd& w) const = 0;
  // 1/n sum_i grad f_i(w), without the regulariser.
  virtual Eigen::VectorXd LossGradient(const Eigen::VectorXd& w) const = 0;
  // Adds sum_{k < m} grad f_{rows[k]}(w) to `sum` (not averaged, no
  // regulariser): the mini-batch gradient of stochastic methods. The batch
  // sum is exact on the grid and added to `sum` with one rounding per
  // coordinate.
  virtual void AddRowGradients(const Eigen::VectorXd& w, const int64_t* rows, int64_t m,
                               Eigen::VectorXd& sum) const = 0;
  // 1/n sum_i Hessian f_i(w): dim x dim, for tests and exact solvers.
  virtual Eigen::MatrixXd LossHessian(const Eigen::VectorXd& w) const = 0;
  // A hint that rows[0..m) will be read soon (AddRowGradients of the next
  // mini-batch): an objective over rows in memory asks the CPU to fetch
  // them, so that a random order does not wait on memory row by row. No
  // effect on any value.
  virtual void PrefetchRows(const int64_t* rows, int64_t m) const {
    (void)rows;
    (void)m;
  }

  // The one-pass sums of sufficient-statistics perturbation (ssp.cpp), at
  // w = 0: over rows with training vector t = (x, 1) (or x without an
  // intercept), the packed vector of packed_row.hpp (gamma f'(0, y) t, then
  // the upper triangle of t t^T), each row's entries rounded to `grid` and
  // summed exactly (exact_sum.hpp).
  // *curvature = f''(0, y), which ssp.cpp requires not to depend on y.
  // Objectives without such rows (softmax, a streaming pass) refuse.
  virtual Eigen::VectorXd MomentSums(double gamma, double grid, double* curvature) const {
    (void)gamma;
    (void)grid;
    (void)curvature;
    throw Error(ErrorKind::kInternal, "MomentSums: this objective has no moment sums");
  }
  // The sums of one private Newton pass (dp_newton.cpp) at w, in
  // packed_row.hpp's layout: gamma f'(m, y) t, then f''(m, y) times the
  // upper triangle of t t^T, m = <w, t>, each row's entries rounded to
  // `grid` and summed exactly; in memory (LinearObjective) or by one
  // curvature pass (PassObjective, streaming.hpp).
  virtual Eigen::VectorXd CurvatureSums(const Eigen::VectorXd& w, double gamma, double grid) const {
    (void)w;
    (void)gamma;
    (void)grid;
    throw Error(ErrorKind::kInternal, "CurvatureSums: this objective has no curvature sums");
  }

  // The full objective, l1 term included.
  double Value(const Eigen::VectorXd& w) const {
    return LossValue(w) + 0.5 * l2_ * w.squaredNorm() + l1_ * w.lpNorm<1>();
  }
  // Gradient of the smooth part: loss plus l2 term.
  Eigen::VectorXd Gradient(const Eigen::VectorXd& w) const {
    Eigen::VectorXd g = LossGradient(w);
    g += l2_ * w;
    return g;
  }
  Eigen::MatrixXd Hessian(const Eigen::VectorXd& w) const {
    Eigen::MatrixXd h = LossHessian(w);
    h.diagonal().array() += l2_;
    return h;
  }

 private:
  double l2_;
  double l1_;
  double sum_grid_ = 0;
};

// The proximal map of t ||.||_1: coordinate-wise soft thresholding,
// w_j <- sign(w_j) max(|w_j| - t, 0).
inline void ProxL1(Eigen::VectorXd& w, double t) {
  if (t <= 0) return;
  for (Eigen::Index j = 0; j < w.size(); j++) {
    double a = std::abs(w(j)) - t;
    w(j) = a > 0 ? std::copysign(a, w(j)) : 0.0;
  }
}

}  // namespace dperm
