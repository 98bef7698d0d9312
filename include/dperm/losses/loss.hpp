// Losses of linear models and the public constants the privacy analysis uses.
#pragma once
#include "dperm/util/errors.hpp"
#include "dperm/losses/objective.hpp"
#include "dperm/options/options.hpp"

#include <Eigen/Dense>

#include <memory>

namespace dperm {

class ExactSum;

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
// Features viewed in place: rows of stride d + 1, the label in the last slot.
using FeatureMap = Eigen::Map<const RowMatrix, 0, Eigen::OuterStride<>>;
using LabelMap = Eigen::Map<const Eigen::VectorXd, 0, Eigen::InnerStride<>>;

// A per-row loss f(m, y) of the margin m = <w, x> (+ b) and the label y.
class Loss {
 public:
  virtual ~Loss() = default;
  virtual LossKind kind() const = 0;
  virtual double Value(double margin, double y) const = 0;
  virtual double Derivative(double margin, double y) const = 0;  // df/dm
  // out[i] = Derivative(m[i], y[i y_stride]) for i < count, in place when
  // out == m (a full pass's block of rows in one call).
  virtual void Derivatives(const double* m, const double* y, Eigen::Index y_stride,
                           Eigen::Index count, double* out) const;
  virtual double Curvature(double margin, double y) const = 0;  // d2f/dm2
  // Bounds on |df/dm| and d2f/dm2 over all margins and labels.
  virtual double MaxDerivative() const = 0;
  virtual double MaxCurvature() const = 0;
  // L and beta of w -> f(<w, x>, y) for every row with ||x|| <= R: since
  // grad = f'(m) x and Hessian = f''(m) x x^T, L = R max|f'| and
  // beta = R^2 max f'' (docs/design.md section 3: from public options only); each loss's
  // LossSpec (loss_spec.hpp) returns them as the plan's constants.
  double Lipschitz(double R) const { return R * MaxDerivative(); }
  double Smoothness(double R) const { return R * R * MaxCurvature(); }
};

// Logistic loss log(1 + exp(-y m)) for y in {-1, +1}: |f'| <= 1, f'' <= 1/4,
// so L = R and beta = R^2/4 (logistic.cpp).
class LogisticLoss final : public Loss {
 public:
  LossKind kind() const override { return LossKind::kLogistic; }
  double Value(double margin, double y) const override;
  double Derivative(double margin, double y) const override;
  void Derivatives(const double* m, const double* y, Eigen::Index y_stride, Eigen::Index count,
                   double* out) const override;
  double Curvature(double margin, double y) const override;
  double MaxDerivative() const override { return 1.0; }
  double MaxCurvature() const override { return 0.25; }
};

// Huber loss h_delta(m - y): |h'| <= delta, h'' <= 1, so L = delta R and
// beta = R^2 (huber.cpp).
class HuberLoss final : public Loss {
 public:
  explicit HuberLoss(double delta) : delta_(delta) {}
  LossKind kind() const override { return LossKind::kHuber; }
  double Value(double margin, double y) const override;
  double Derivative(double margin, double y) const override;
  double Curvature(double margin, double y) const override;
  double MaxDerivative() const override { return delta_; }
  double MaxCurvature() const override { return 1.0; }

 private:
  double delta_;
};

// The margin loss of a binary model (LossSpec::MakeMarginLoss), from its
// options; throws for a multi-class loss.
std::unique_ptr<Loss> MakeLoss(LossKind kind, const Options& options);

// The full-batch passes of the objectives (LossValue, LossGradient) run
// over blocks of rows of about this many multiply-adds: one interrupt probe
// per block (interrupt.hpp), and a block's margins or scores are the only
// temporaries that grow with the rows.
constexpr int64_t kFullPassBlockWork = int64_t(1) << 18;
// Rows per block when a row costs `work_per_row` multiply-adds (at least 1).
Eigen::Index FullPassBlockRows(Eigen::Index work_per_row);
// A full gradient pass reads each row twice (its margin, then its rounded
// contribution), so it walks a block in tiles of rows that fit in the
// first-level data cache (32 KiB a core on the CPUs dperm is measured on;
// half of it for the rows): the second read hits the cache, not memory.
// Tiling changes no value (exact sums). A multiple of 4 rows, at least 4:
// the kernels' width (a tile's leftover rows take the scalar path).
constexpr int64_t kFullPassTileBytes = int64_t(1) << 14;
// Rows per tile for rows `stride` doubles apart.
Eigen::Index FullPassTileRows(Eigen::Index stride);

// Objective::PrefetchRows over rows viewed in place: a prefetch of every
// cache line of rows[0..m) of x and of their labels in y.
void PrefetchFeatureRows(const FeatureMap& x, const LabelMap& y, const int64_t* rows, int64_t m);

// Regularised empirical risk of a binary linear model over rows viewed in
// place: F(w) = 1/n sum_i f(<w, x_i> + b, y_i) + l2/2 ||w||^2, where w holds
// the d feature weights followed by the intercept b when fit_intercept. The
// l2 term covers the intercept too: it is a constant feature column, and the
// strongly convex analysis needs every coordinate regularised.
class LinearObjective : public Objective {
 public:
  LinearObjective(const Loss& loss, FeatureMap x, LabelMap y, bool fit_intercept, double l2,
                  double l1 = 0);
  int dim() const override { return static_cast<int>(x_.cols()) + (fit_intercept_ ? 1 : 0); }
  Eigen::Index n() const override { return x_.rows(); }
  double LossValue(const Eigen::VectorXd& w) const override;
  Eigen::VectorXd LossGradient(const Eigen::VectorXd& w) const override;
  void AddRowGradients(const Eigen::VectorXd& w, const int64_t* rows, int64_t m,
                       Eigen::VectorXd& sum) const override;
  void PrefetchRows(const int64_t* rows, int64_t m) const override;
  Eigen::MatrixXd LossHessian(const Eigen::VectorXd& w) const override;
  Eigen::VectorXd MomentSums(double gamma, double grid, double* curvature) const override;
  Eigen::VectorXd CurvatureSums(const Eigen::VectorXd& w, double gamma, double grid) const override;

 private:
  // The packed sums of both: at w (margins <w, t>, curvature weights f'')
  // or, for w = nullptr, at margin 0 with weight 1.
  Eigen::VectorXd PackedSums(const Eigen::VectorXd* w, double gamma, double grid) const;
  // Margins <w, x_i> (+ b) of rows start .. start + rows - 1, into m.
  void BlockMargins(const Eigen::VectorXd& w, Eigen::Index start, Eigen::Index rows,
                    Eigen::VectorXd& m) const;
  // Adds the rounded gradient contributions of rows begin .. end - 1 to sum.
  void ExactGradientRows(const Eigen::VectorXd& w, Eigen::Index begin, Eigen::Index end,
                         ExactSum& sum) const;
  const Loss& loss_;
  FeatureMap x_;
  LabelMap y_;
  bool fit_intercept_;
};

}  // namespace dperm
