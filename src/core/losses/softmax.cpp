// Multinomial logistic regression objective.
#include "dperm/losses/softmax.hpp"

#include "dperm/losses/loss_spec.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "dperm/util/interrupt.hpp"
#include "dperm/rows/exact_sum.hpp"
#include "dperm/rows/row_kernels.hpp"
#include "dperm/rows/row_parts.hpp"

namespace dperm {
namespace {

using ClassMatrix = Eigen::Map<const RowMatrix>;  // K x per_class view of w

int Label(double y) { return static_cast<int>(y); }

// The intercept offset (offset.hpp): S = the class histogram (K counts; a
// label outside 0 .. K-1 counts for the nearest class, NaN for class 0);
// q_k = clamp(S_k, 0, n) + 1/2 and b0_k = log q_k - mean_j log q_j, so
// |b0_k| <= log(2n + 1). The offset shifts the scores and changes neither L
// nor beta.
class ClassHistogram final : public OffsetStatistic {
 public:
  const char* Text() const override {
    return "class histogram; b0_k = log(S_k + 1/2) - mean_j log(S_j + 1/2)";
  }
  bool Histogram() const override { return true; }
  bool Counts() const override { return true; }
  double Bound(const LossParams&, int64_t n) const override {
    return std::log(2.0 * double(n) + 1);
  }
  double Row(const LossParams& p, double y, int* sum) const noexcept override {
    // Clamped as a double first: int(y) of a huge y is undefined.
    *sum = std::isnan(y) ? 0 : int(std::clamp(y, 0.0, double(p.classes - 1)));
    return 1.0;
  }
  std::vector<double> FromSums(const LossParams&, const std::vector<double>& s,
                               int64_t n) const override {
    std::vector<double> b0(s.size());
    double mean = 0;
    for (size_t k = 0; k < s.size(); k++) {
      b0[k] = std::log(std::clamp(s[k], 0.0, double(n)) + 0.5);
      mean += b0[k];
    }
    mean /= double(s.size());
    for (double& b : b0) b -= mean;
    return b0;
  }
};

// l2 => 'auto''s score: 1 when the top class (the first on ties) is the
// label, else 0.
class CorrectClass final : public ValidationScore {
 public:
  const char* Text() const override { return "correct predictions (higher is better)"; }
  double Bound(const LossParams&) const override { return 1; }
  bool Counts() const override { return true; }
  bool LowerIsBetter() const override { return false; }
  double Row(const LossParams& p, const double* s, double y) const noexcept override {
    int best = 0;
    for (int k = 1; k < p.classes; k++)
      if (s[k] > s[best]) best = k;
    return double(best) == y ? 1 : 0;
  }
};

class SoftmaxSpec final : public LossSpec {
 public:
  LossKind kind() const override { return LossKind::kSoftmax; }
  LossConstants Constants(const LossParams& p, double R) const override {
    LossConstants c;
    // Softmax cross-entropy of W (K x dim): grad = (p - e_y) x^T, whose
    // Frobenius norm is ||p - e_y|| ||x|| <= sqrt(2) R (||p - e_y||^2 =
    // (1 - p_y)^2 + sum_{k != y} p_k^2 <= 2 (1 - p_y)^2 <= 2); the Hessian is
    // (diag(p) - p p^T) (x) x x^T, and diag(p) - p p^T has eigenvalues <= 1/2
    // (Bohning 1992), so beta = R^2/2. The offset b0 shifts the scores and
    // changes neither bound.
    c.L = std::sqrt(2.0) * R;
    c.beta = R * R / 2;
    // Every class has probability 1/K at w = 0: F(0) = ln K.
    c.zero_model_bound = std::log(double(p.classes));
    // Two probability vectors differ by at most sqrt(2) in norm.
    c.gradient_range = std::sqrt(2.0) * R;
    return c;
  }
  // Not a margin loss: no margin loss, no margin curvature (a row's Hessian
  // has rank up to K-1), so SmoothCurvature and LabelFreeCurvature stay false.
  std::unique_ptr<Loss> MakeMarginLoss(const LossParams&) const override { return nullptr; }
  double RowKernel(const LossParams& p, double* s, double label,
                   bool with_loss) const noexcept override {
    // F_i = log sum_k exp(s_k) - s_y, gradient (p - e_y) (x) [x, 1], as
    // SoftmaxObjective::LossValue and LossGradient compute it.
    const int y = Label(label);
    double value = 0;
    if (with_loss) {
      double top = s[0];
      for (int k = 1; k < p.classes; k++) top = std::max(top, s[k]);
      double sum = 0;
      for (int k = 0; k < p.classes; k++) sum += std::exp(s[k] - top);
      value = top + std::log(sum) - s[y];
    }
    SoftmaxInPlace(s, p.classes);
    s[y] -= 1;
    return value;
  }
  const OffsetStatistic* Offset() const override {
    static const ClassHistogram offset;
    return &offset;
  }
  const ValidationScore* Score() const override {
    static const CorrectClass score;
    return &score;
  }
};

}  // namespace

template <>
const LossSpec& LossSpecOf<LossKind::kSoftmax>() {
  static const SoftmaxSpec spec;
  return spec;
}

void SoftmaxInPlace(double* s, int classes) {
  double top = s[0];
  for (int k = 1; k < classes; k++) top = std::max(top, s[k]);
  double sum = 0;
  for (int k = 0; k < classes; k++) {
    s[k] = std::exp(s[k] - top);
    sum += s[k];
  }
  for (int k = 0; k < classes; k++) s[k] /= sum;
}

SoftmaxObjective::SoftmaxObjective(FeatureMap x, LabelMap y, int classes, bool fit_intercept,
                                   double l2, double l1)
    : Objective(l2, l1), x_(x), y_(y), classes_(classes), fit_intercept_(fit_intercept) {}

void SoftmaxObjective::BlockScores(const Eigen::VectorXd& w, Eigen::Index start, Eigen::Index rows,
                                   RowMatrix& s) const {
  // Each class's scores in row_kernels.hpp's order, as the streaming pass
  // computes them (the same bits), then the offset.
  const double* x = x_.data() + start * x_.outerStride();
  s.resize(rows, classes_);
  Eigen::VectorXd m(rows);
  for (int k = 0; k < classes_; k++) {
    RowMargins(x, x_.outerStride(), rows, int(x_.cols()), w.data() + k * per_class(),
               fit_intercept_, m.data());
    s.col(k) = m;
  }
  if (offset_.size() > 0) s.rowwise() += offset_.transpose();
}

Eigen::Index SoftmaxObjective::BlockRows(int passes) const {
  return FullPassBlockRows(Eigen::Index(passes) * classes_ * per_class());
}

void SoftmaxObjective::SetOffset(const std::vector<double>& b0) {
  if (int(b0.size()) != classes_)
    throw Error(ErrorKind::kInternal, "SoftmaxObjective::SetOffset: one shift per class");
  offset_ = Eigen::Map<const Eigen::VectorXd>(b0.data(), classes_);
}

double SoftmaxObjective::LossValue(const Eigen::VectorXd& w) const {
  const Eigen::Index n = x_.rows(), block = BlockRows(1);
  RowMatrix s;
  double sum = 0;
  for (Eigen::Index start = 0; start < n; start += block) {
    const Eigen::Index rows = std::min(block, n - start);
    BlockScores(w, start, rows, s);
    for (Eigen::Index i = 0; i < rows; i++) {
      double top = s.row(i).maxCoeff();
      double lse = top + std::log((s.row(i).array() - top).exp().sum());
      sum += lse - s(i, Label(y_(start + i)));
    }
    CountWork(uint64_t(rows) * uint64_t(classes_) * uint64_t(per_class()));
  }
  return sum / static_cast<double>(n);
}

void SoftmaxObjective::ExactGradientRows(const Eigen::VectorXd& w, Eigen::Index begin,
                                         Eigen::Index end, ExactSum& sum) const {
  const Eigen::Index d = x_.cols(), block = BlockRows(2);
  const Eigen::Index stride = x_.outerStride();
  RowMatrix p;
  for (Eigen::Index start = begin; start < end; start += block) {
    const Eigen::Index rows = std::min(block, end - start);
    PlusLabelledScores(w, start, rows, p);
    for (Eigen::Index i = 0; i < rows; i++)
      for (int k = 0; k < classes_; k++)
        sum.AddScaled(k * per_class(), p(i, k), x_.data() + (start + i) * stride, int(d),
                      fit_intercept_);
    CountWork(2 * uint64_t(rows) * uint64_t(classes_) * uint64_t(per_class()));
  }
}

void SoftmaxObjective::PlusLabelledScores(const Eigen::VectorXd& w, Eigen::Index start,
                                          Eigen::Index rows, RowMatrix& p) const {
  BlockScores(w, start, rows, p);
  for (Eigen::Index i = 0; i < rows; i++) {
    SoftmaxInPlace(p.row(i).data(), classes_);
    p(i, Label(y_(start + i))) -= 1;  // p - e_y
  }
}

Eigen::VectorXd SoftmaxObjective::LossGradient(const Eigen::VectorXd& w) const {
  const Eigen::Index d = x_.cols(), n = x_.rows();
  Eigen::VectorXd grad = Eigen::VectorXd::Zero(dim());
  if (sum_grid() > 0) {
    // Each row's (p - e_y)_k [x, 1] is rounded to the grid and summed
    // exactly (exact_sum.hpp), class block after class block; the same
    // bits however many parts (row_parts.hpp) the rows are split into.
    ExactSum sum(dim(), sum_grid());
    SumRowParts(n, 2 * uint64_t(classes_) * uint64_t(per_class()), sum,
                [&](int64_t begin, int64_t end, ExactSum& part) {
                  ExactGradientRows(w, begin, end, part);
                });
    for (int j = 0; j < dim(); j++) grad(j) = sum.Value(j);
  } else {
    // Row-major so that each row's scores are contiguous for SoftmaxInPlace;
    // one block of rows at a time, so memory stays O(block K), not O(n K).
    Eigen::Map<RowMatrix> g(grad.data(), classes_, per_class());
    const Eigen::Index block = BlockRows(2);
    RowMatrix p;
    for (Eigen::Index start = 0; start < n; start += block) {
      const Eigen::Index rows = std::min(block, n - start);
      PlusLabelledScores(w, start, rows, p);
      g.leftCols(d).noalias() += p.transpose() * x_.middleRows(start, rows);
      if (fit_intercept_) g.col(d) += p.colwise().sum().transpose();
      CountWork(2 * uint64_t(rows) * uint64_t(classes_) * uint64_t(per_class()));
    }
  }
  grad /= static_cast<double>(n);
  return grad;
}

void SoftmaxObjective::AddRowGradients(const Eigen::VectorXd& w, const int64_t* rows, int64_t m,
                                       Eigen::VectorXd& sum) const {
  const Eigen::Index d = x_.cols();
  ClassMatrix wm(w.data(), classes_, per_class());
  Eigen::Map<RowMatrix> g(sum.data(), classes_, per_class());
  Eigen::VectorXd p(classes_);
  const bool exact = sum_grid() > 0;
  ExactSum batch(exact ? dim() : 0, exact ? sum_grid() : 1.0);
  const Eigen::Index stride = x_.outerStride();
  for (int64_t k = 0; k < m; k++) {
    const Eigen::Index i = rows[k];
    p.noalias() = wm.leftCols(d) * x_.row(i).transpose();
    if (fit_intercept_) p += wm.col(d);
    if (offset_.size() > 0) p += offset_;
    SoftmaxInPlace(p.data(), classes_);
    p(Label(y_(i))) -= 1;
    if (exact) {  // rounded to the grid, summed exactly (exact_sum.hpp)
      for (int c = 0; c < classes_; c++)
        batch.AddScaled(c * per_class(), p(c), x_.data() + i * stride, int(d), fit_intercept_);
      continue;
    }
    g.leftCols(d).noalias() += p * x_.row(i);
    if (fit_intercept_) g.col(d) += p;
    CountWork(2 * uint64_t(classes_) * uint64_t(per_class()));
  }
  if (exact)
    for (int j = 0; j < dim(); j++) sum(j) += batch.Value(j);
}

Eigen::MatrixXd SoftmaxObjective::LossHessian(const Eigen::VectorXd& w) const {
  const Eigen::Index d = x_.cols();
  const int c = per_class();
  RowMatrix p;
  BlockScores(w, 0, n(), p);
  Eigen::MatrixXd h = Eigen::MatrixXd::Zero(dim(), dim());
  Eigen::VectorXd z(c);
  for (Eigen::Index i = 0; i < p.rows(); i++) {
    CountWork(uint64_t(dim()) * uint64_t(dim()));
    SoftmaxInPlace(p.row(i).data(), classes_);
    z.head(d) = x_.row(i).transpose();
    if (fit_intercept_) z(d) = 1;
    Eigen::MatrixXd zz = z * z.transpose();
    // (diag(p) - p p^T) (x) z z^T, class-major blocks.
    for (int k = 0; k < classes_; k++)
      for (int l = 0; l < classes_; l++) {
        double a = (k == l ? p(i, k) : 0.0) - p(i, k) * p(i, l);
        h.block(k * c, l * c, c, c) += a * zz;
      }
  }
  h /= static_cast<double>(n());
  return h;
}

}  // namespace dperm
