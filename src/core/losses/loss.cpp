// The margin loss by kind, and the regularised empirical risk of a binary
// linear model (loss.hpp); each loss is defined in its own file.
#include "dperm/losses/loss.hpp"

#include "dperm/losses/loss_spec.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/util/interrupt.hpp"
#include "dperm/rows/exact_sum.hpp"
#include "dperm/rows/packed_row.hpp"
#include "dperm/rows/row_kernels.hpp"
#include "dperm/rows/row_parts.hpp"

namespace dperm {

LinearObjective::LinearObjective(const Loss& loss, FeatureMap x, LabelMap y, bool fit_intercept,
                                 double l2, double l1)
    : Objective(l2, l1), loss_(loss), x_(x), y_(y), fit_intercept_(fit_intercept) {}

void Loss::Derivatives(const double* m, const double* y, Eigen::Index y_stride, Eigen::Index count,
                       double* out) const {
  for (Eigen::Index i = 0; i < count; i++) out[i] = Derivative(m[i], y[i * y_stride]);
}

Eigen::Index FullPassBlockRows(Eigen::Index work_per_row) {
  return std::max<Eigen::Index>(
      1, Eigen::Index(kFullPassBlockWork) / std::max<Eigen::Index>(work_per_row, 1));
}

Eigen::Index FullPassTileRows(Eigen::Index stride) {
  const Eigen::Index bytes = Eigen::Index(sizeof(double)) * std::max<Eigen::Index>(stride, 1);
  return std::max<Eigen::Index>(4, Eigen::Index(kFullPassTileBytes) / bytes & ~Eigen::Index(3));
}

void LinearObjective::BlockMargins(const Eigen::VectorXd& w, Eigen::Index start, Eigen::Index rows,
                                   Eigen::VectorXd& m) const {
  // The margins in row_kernels.hpp's order: the streaming pass's, bit for bit.
  m.resize(rows);
  RowMargins(x_.data() + start * x_.outerStride(), x_.outerStride(), rows, int(x_.cols()), w.data(),
             fit_intercept_, m.data());
}

double LinearObjective::LossValue(const Eigen::VectorXd& w) const {
  const Eigen::Index d = x_.cols(), n = x_.rows(), block = FullPassBlockRows(d + 1);
  Eigen::VectorXd m;
  double sum = 0;
  for (Eigen::Index start = 0; start < n; start += block) {
    const Eigen::Index rows = std::min(block, n - start);
    BlockMargins(w, start, rows, m);
    for (Eigen::Index i = 0; i < rows; i++) sum += loss_.Value(m(i), y_(start + i));
    CountWork(uint64_t(rows) * uint64_t(d + 1));
  }
  return sum / static_cast<double>(n);
}

void LinearObjective::ExactGradientRows(const Eigen::VectorXd& w, Eigen::Index begin,
                                        Eigen::Index end, ExactSum& sum) const {
  const Eigen::Index d = x_.cols(), block = FullPassBlockRows(2 * (d + 1));
  const double* data = x_.data();
  const Eigen::Index stride = x_.outerStride();
  // Each block in tiles that stay in the first-level cache (kFullPassTileBytes):
  // a tile's rows are read from memory once, for their margins, and the
  // rounding that follows finds them in the cache. Exact sums: the same
  // integers whatever the tiling.
  const Eigen::Index tile = FullPassTileRows(stride);
  Eigen::VectorXd g(std::min(tile, std::max<Eigen::Index>(end - begin, 1)));
  for (Eigen::Index start = begin; start < end; start += block) {
    const Eigen::Index rows = std::min(block, end - start);
    for (Eigen::Index t = start; t < start + rows; t += tile) {
      const Eigen::Index k = std::min(tile, start + rows - t);
      RowMargins(data + t * stride, stride, k, int(d), w.data(), fit_intercept_, g.data());
      loss_.Derivatives(g.data(), y_.data() + t * y_.innerStride(), y_.innerStride(), k, g.data());
      sum.AddScaledRows(0, g.data(), data + t * stride, stride, k, int(d), fit_intercept_);
    }
    CountWork(2 * uint64_t(rows) * uint64_t(d + 1));
  }
}

Eigen::VectorXd LinearObjective::LossGradient(const Eigen::VectorXd& w) const {
  const Eigen::Index d = x_.cols(), n = x_.rows();
  Eigen::VectorXd grad = Eigen::VectorXd::Zero(w.size());
  if (sum_grid() > 0) {
    // Each row's f'(m_i) [x_i, 1] is rounded to the grid and summed exactly
    // (exact_sum.hpp): the sum the sensitivity was derived for, the same
    // bits however many parts (row_parts.hpp) the rows are split into.
    ExactSum sum(dim(), sum_grid());
    SumRowParts(n, 2 * uint64_t(d + 1), sum, [&](int64_t begin, int64_t end, ExactSum& part) {
      ExactGradientRows(w, begin, end, part);
    });
    for (int j = 0; j < dim(); j++) grad(j) = sum.Value(j);
  } else {
    const Eigen::Index block = FullPassBlockRows(2 * (d + 1));
    Eigen::VectorXd g;
    for (Eigen::Index start = 0; start < n; start += block) {
      const Eigen::Index rows = std::min(block, n - start);
      BlockMargins(w, start, rows, g);
      loss_.Derivatives(g.data(), y_.data() + start * y_.innerStride(), y_.innerStride(), rows,
                        g.data());
      grad.head(d).noalias() += x_.middleRows(start, rows).transpose() * g;
      if (fit_intercept_) grad(d) += g.sum();
      CountWork(2 * uint64_t(rows) * uint64_t(d + 1));
    }
  }
  grad /= static_cast<double>(n);
  return grad;
}

void LinearObjective::AddRowGradients(const Eigen::VectorXd& w, const int64_t* rows, int64_t m,
                                      Eigen::VectorXd& sum) const {
  const Eigen::Index d = x_.cols();
  const double b = fit_intercept_ ? w(d) : 0.0;
  if (sum_grid() > 0 && m == 1) {
    // One row (stochastic steps): its rounded contribution is the exact
    // sum, added once; no accumulator needed (bit-identical to ExactSum's).
    const Eigen::Index i = rows[0];
    const double q = sum_grid();
    const double s = loss_.Derivative(x_.row(i).dot(w.head(d)) + b, y_(i)) / q;
    const double* x = x_.data() + i * x_.outerStride();
    for (Eigen::Index j = 0; j < d; j++) sum(j) += q * RoundToGrid(s * x[j]);
    if (fit_intercept_) sum(d) += q * RoundToGrid(s);
    return;
  }
  if (sum_grid() > 0) {
    // The batch's rows rounded to the grid and summed exactly, then added
    // to `sum` once (exact_sum.hpp).
    ExactSum batch(dim(), sum_grid());
    const Eigen::Index stride = x_.outerStride();
    for (int64_t k = 0; k < m; k++) {
      const Eigen::Index i = rows[k];
      double c = loss_.Derivative(x_.row(i).dot(w.head(d)) + b, y_(i));
      batch.AddScaled(0, c, x_.data() + i * stride, int(d), fit_intercept_);
    }
    for (int j = 0; j < dim(); j++) sum(j) += batch.Value(j);
    return;
  }
  for (int64_t k = 0; k < m; k++) {
    const Eigen::Index i = rows[k];
    double c = loss_.Derivative(x_.row(i).dot(w.head(d)) + b, y_(i));
    sum.head(d).noalias() += c * x_.row(i).transpose();
    if (fit_intercept_) sum(d) += c;
    CountWork(2 * uint64_t(d + 1));
  }
}

void PrefetchFeatureRows(const FeatureMap& x, const LabelMap& y, const int64_t* rows, int64_t m) {
  // Every cache line of each row's features, and its label.
  const Eigen::Index stride = x.outerStride();
  const size_t bytes = sizeof(double) * static_cast<size_t>(x.cols());
  for (int64_t k = 0; k < m; k++) {
    const char* row = reinterpret_cast<const char*>(x.data() + rows[k] * stride);
    for (size_t b = 0; b < bytes; b += 64) __builtin_prefetch(row + b);
    if (bytes > 0) __builtin_prefetch(row + bytes - 1);
    __builtin_prefetch(y.data() + rows[k] * y.innerStride());
  }
}

void LinearObjective::PrefetchRows(const int64_t* rows, int64_t m) const {
  PrefetchFeatureRows(x_, y_, rows, m);
}

Eigen::MatrixXd LinearObjective::LossHessian(const Eigen::VectorXd& w) const {
  const Eigen::Index d = x_.cols();
  Eigen::VectorXd m;
  BlockMargins(w, 0, n(), m);
  CountWork(uint64_t(n()) * uint64_t(w.size()) * uint64_t(w.size()));
  Eigen::MatrixXd rows(n(), w.size());  // training rows with the intercept column
  rows.leftCols(d) = x_;
  if (fit_intercept_) rows.col(d).setOnes();
  Eigen::VectorXd c(m.size());
  for (Eigen::Index i = 0; i < m.size(); i++) c(i) = loss_.Curvature(m(i), y_(i));
  Eigen::MatrixXd h = rows.transpose() * c.asDiagonal() * rows;
  h /= static_cast<double>(n());
  return h;
}

Eigen::VectorXd LinearObjective::MomentSums(double gamma, double grid, double* curvature) const {
  *curvature = loss_.Curvature(0.0, 1.0);
  return PackedSums(nullptr, gamma, grid);
}

Eigen::VectorXd LinearObjective::CurvatureSums(const Eigen::VectorXd& w, double gamma,
                                               double grid) const {
  return PackedSums(&w, gamma, grid);
}

Eigen::VectorXd LinearObjective::PackedSums(const Eigen::VectorXd* w, double gamma,
                                            double grid) const {
  // Layout (packed_row.hpp). At w = nullptr, m = 0 and c = 1 exactly, so
  // each product is the unweighted one bit for bit. The margin is
  // FourSumDot's, as a streaming pass computes it (streaming.cpp).
  const int dim = this->dim();
  const int d = int(x_.cols());
  const int64_t count = PackedCount(dim);
  ExactSum sum(int(count), grid);
  const double* data = x_.data();
  const Eigen::Index stride = x_.outerStride();
  const double b = w != nullptr && fit_intercept_ ? (*w)(d) : 0.0;
  // The rows in RowParts parts (row_parts.hpp), merged exactly: the same
  // integers on any number of threads. CountWork probes for a cancel about
  // every millisecond at any dim (count roundings a row).
  SumRowParts(x_.rows(), uint64_t(count), sum, [&](int64_t begin, int64_t end, ExactSum& part) {
    for (int64_t i = begin; i < end; i++) {
      const double* x = data + i * stride;
      const double m = w != nullptr ? FourSumDot(w->data(), x, d) + b : 0.0;
      const double c = w != nullptr ? loss_.Curvature(m, y_(i)) : 1.0;
      // gamma f'(m, y): one rounding of the product.
      AddPackedRow(part, dim, x, d, fit_intercept_, gamma * loss_.Derivative(m, y_(i)), c);
      CountWork(uint64_t(count));
    }
  });
  Eigen::VectorXd out(count);
  for (int64_t c = 0; c < count; c++) out(c) = sum.Value(int(c));
  return out;
}

std::unique_ptr<Loss> MakeLoss(LossKind kind, const Options& options) {
  std::unique_ptr<Loss> loss = LossSpecFor(kind).MakeMarginLoss(LossParamsOf(options));
  if (loss == nullptr)
    throw Error(ErrorKind::kInternal,
                std::string("MakeLoss: no margin loss for ") + LossName(kind));
  return loss;
}

}  // namespace dperm
