// The Huber loss h_delta(m - y) of regression (dp_huber): its values and
// derivatives, and its entry in the loss table (losses.def).
#include "dperm/losses/loss.hpp"
#include "dperm/losses/loss_spec.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

namespace dperm {
namespace {

// The intercept offset (offset.hpp): S = sum_i (y_i + B), y_i clipped to
// [-B, B] (B = target_bound), each term in [0, 2B] (a NaN target counts as
// 0, the middle); b0 = clamp(S/n - B, -B, B), the clipped mean.
class ClippedTargetSum final : public OffsetStatistic {
 public:
  const char* Text() const override {
    return "sum of targets clipped to [-target_bound, target_bound]; b0 = clipped mean";
  }
  bool Histogram() const override { return false; }
  bool Counts() const override { return false; }
  double RowRange(const LossParams& p) const override { return 2 * p.target_bound; }
  double Bound(const LossParams& p, int64_t) const override { return p.target_bound; }
  double Row(const LossParams& p, double y, int* sum) const noexcept override {
    const double B = p.target_bound;
    *sum = 0;
    return std::isnan(y) ? 0.5 : (std::clamp(y, -B, B) + B) / (2 * B);
  }
  std::vector<double> FromSums(const LossParams& p, const std::vector<double>& s,
                               int64_t n) const override {
    const double B = p.target_bound;
    return {std::clamp(s[0] / double(n) - B, -B, B)};
  }
};

// l2 => 'auto''s score: the absolute error capped at B = target_bound (a
// row's value stays in [0, B] whatever w is; targets are clipped to
// [-B, B]): a wild prediction scores the cap (dp_predict does not clip).
// The absolute error, not the squared one: for targets spread over a
// fraction of [-B, B], squared errors are far below their cap 4 B^2 (the
// sensitivity), and the noise would drown them.
class CappedAbsoluteError final : public ValidationScore {
 public:
  const char* Text() const override {
    return "absolute error capped at B = target_bound (lower is better)";
  }
  double Bound(const LossParams& p) const override { return p.target_bound; }
  bool Counts() const override { return false; }
  bool LowerIsBetter() const override { return true; }
  double Row(const LossParams& p, const double* s, double y) const noexcept override {
    const double e = std::fabs(s[0] - y);
    return std::isfinite(e) ? std::min(e, p.target_bound) : p.target_bound;
  }
};

class HuberSpec final : public LossSpec {
 public:
  LossKind kind() const override { return LossKind::kHuber; }
  LossConstants Constants(const LossParams& p, double R) const override {
    const HuberLoss f(p.huber_delta);
    LossConstants c;
    // grad = h'(r) x and Hessian = h''(r) x x^T with |h'| <= delta and
    // h'' <= 1 for every residual r: L = delta R and beta = R^2 (loss.hpp,
    // Lipschitz and Smoothness), with the effective huber_delta (HuberDelta:
    // the option, or a constant times target_bound; public either way).
    // Clipping targets to [-target_bound, target_bound] (rows.hpp) changes
    // neither constant, whatever the target.
    c.L = f.Lipschitz(R);
    c.beta = f.Smoothness(R);
    // h_delta(B): the Huber loss of a zero prediction for a target of size
    // B = target_bound, the largest a clipped target can have (h_delta grows
    // with |y|).
    const double delta = p.huber_delta, bound = p.target_bound;
    c.zero_model_bound = bound <= delta ? bound * bound / 2 : delta * (bound - delta / 2);
    // h' in [-delta, delta]: two gradients of a row differ by <= 2 delta R.
    c.gradient_range = 2 * p.huber_delta * R;
    return c;
  }
  std::unique_ptr<Loss> MakeMarginLoss(const LossParams& p) const override {
    return std::make_unique<HuberLoss>(p.huber_delta);
  }
  double RowKernel(const LossParams& p, double* s, double y,
                   bool with_loss) const noexcept override {
    const HuberLoss f(p.huber_delta);
    const double value = with_loss ? f.Value(s[0], y) : 0.0;
    s[0] = f.Derivative(s[0], y);
    return value;
  }
  double RowCurvature(const LossParams& p, double m, double y) const noexcept override {
    return HuberLoss(p.huber_delta).Curvature(m, y);
  }
  // SmoothCurvature and LabelFreeCurvature stay false: h'' jumps from 1 to
  // 0 at |m - y| = delta, and where it jumps depends on the target y.
  const OffsetStatistic* Offset() const override {
    static const ClippedTargetSum offset;
    return &offset;
  }
  const ValidationScore* Score() const override {
    static const CappedAbsoluteError score;
    return &score;
  }
};

}  // namespace

double HuberLoss::Value(double m, double y) const {
  double u = std::fabs(m - y);
  return u <= delta_ ? 0.5 * u * u : delta_ * (u - 0.5 * delta_);
}
double HuberLoss::Derivative(double m, double y) const {
  double u = m - y;
  return u > delta_ ? delta_ : (u < -delta_ ? -delta_ : u);
}
double HuberLoss::Curvature(double m, double y) const {
  return std::fabs(m - y) <= delta_ ? 1.0 : 0.0;
}

template <>
const LossSpec& LossSpecOf<LossKind::kHuber>() {
  static const HuberSpec spec;
  return spec;
}

}  // namespace dperm
