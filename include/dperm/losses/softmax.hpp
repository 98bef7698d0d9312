// Multinomial logistic regression (softmax cross-entropy) over rows viewed in
// place: rows of stride d + 1 whose last slot holds the class index
// 0 .. K-1 as a double. w holds K blocks of d + fit_intercept coordinates
// (class k's feature weights, then its intercept), class after class.
// F(w) = 1/n sum_i [log sum_k exp(s_ik) - s_{i,y_i}] + l2/2 ||w||^2 with
// s_ik = <w_k, x_i> + b_k. L = sqrt(2) R and beta = R^2/2 (its LossSpec, softmax.cpp).
#pragma once
#include "dperm/util/errors.hpp"
#include "dperm/losses/loss.hpp"
#include "dperm/losses/objective.hpp"

#include <vector>

namespace dperm {

class SoftmaxObjective final : public Objective {
 public:
  SoftmaxObjective(FeatureMap x, LabelMap y, int classes, bool fit_intercept, double l2,
                   double l1 = 0);
  int dim() const override { return classes_ * per_class(); }
  Eigen::Index n() const override { return x_.rows(); }
  double LossValue(const Eigen::VectorXd& w) const override;
  Eigen::VectorXd LossGradient(const Eigen::VectorXd& w) const override;
  void AddRowGradients(const Eigen::VectorXd& w, const int64_t* rows, int64_t m,
                       Eigen::VectorXd& sum) const override;
  void PrefetchRows(const int64_t* rows, int64_t m) const override {
    PrefetchFeatureRows(x_, y_, rows, m);
  }
  Eigen::MatrixXd LossHessian(const Eigen::VectorXd& w) const override;
  // Adds b0_k to every score of class k (the private offset, offset.hpp);
  // K values. The bounds L and beta hold for every shift.
  void SetOffset(const std::vector<double>& b0);

 private:
  int per_class() const { return static_cast<int>(x_.cols()) + (fit_intercept_ ? 1 : 0); }
  // Scores s_ik of rows start .. start + rows - 1 (rows x K), into s.
  void BlockScores(const Eigen::VectorXd& w, Eigen::Index start, Eigen::Index rows,
                   RowMatrix& s) const;
  // p_ik - [y_i = k] of the same rows: each row's gradient factor.
  void PlusLabelledScores(const Eigen::VectorXd& w, Eigen::Index start, Eigen::Index rows,
                          RowMatrix& p) const;
  // Adds the rounded gradient contributions of rows begin .. end - 1 to sum.
  void ExactGradientRows(const Eigen::VectorXd& w, Eigen::Index begin, Eigen::Index end,
                         ExactSum& sum) const;
  // Rows per block of a full pass that reads each row `passes` times.
  Eigen::Index BlockRows(int passes) const;
  FeatureMap x_;
  LabelMap y_;
  int classes_;
  bool fit_intercept_;
  Eigen::VectorXd offset_;  // K score shifts; empty: none
};

// Class probabilities softmax(s) of one score vector, without overflow.
void SoftmaxInPlace(double* scores, int classes);

}  // namespace dperm
