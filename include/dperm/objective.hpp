// The empirical risk every mechanism minimises, whatever the model:
// F(w) = 1/n sum_i f_i(w) + l2/2 ||w||^2. Binary linear models (logistic,
// Huber) and the multinomial softmax model implement it; mechanisms only see
// this interface (full gradients for GD, row gradients for mini-batch SGD).
#pragma once
#include "dperm/core.hpp"

#include <Eigen/Dense>
#include <cstdint>

namespace dperm {

class Objective {
 public:
  explicit Objective(double l2) : l2_(l2) {}
  virtual ~Objective() = default;
  // Model coordinates (the length of w) and rows.
  virtual int dim() const = 0;
  virtual Eigen::Index n() const = 0;
  double l2() const { return l2_; }

  // 1/n sum_i f_i(w), without the regulariser.
  virtual double LossValue(const Eigen::VectorXd& w) const = 0;
  // 1/n sum_i grad f_i(w), without the regulariser.
  virtual Eigen::VectorXd LossGradient(const Eigen::VectorXd& w) const = 0;
  // Adds sum_{k < m} grad f_{rows[k]}(w) to `sum` (not averaged, no
  // regulariser): the mini-batch gradient of stochastic methods.
  virtual void AddRowGradients(const Eigen::VectorXd& w, const int64_t* rows,
                               int64_t m, Eigen::VectorXd& sum) const = 0;
  // 1/n sum_i Hessian f_i(w): dim x dim, for tests and exact solvers.
  virtual Eigen::MatrixXd LossHessian(const Eigen::VectorXd& w) const = 0;

  double Value(const Eigen::VectorXd& w) const {
    return LossValue(w) + 0.5 * l2_ * w.squaredNorm();
  }
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
};

}  // namespace dperm
