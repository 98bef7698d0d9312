// The logistic loss log(1 + exp(-y m)) for y in {-1, +1} (dp_logreg): its
// values and derivatives, and its entry in the loss table (losses.def).
#include "dperm/losses/loss.hpp"
#include "dperm/losses/loss_spec.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

namespace dperm {
namespace {

// log(1 + exp(t)) without overflow.
double Softplus(double t) {
  return t > 0 ? t + std::log1p(std::exp(-t)) : std::log1p(std::exp(t));
}

// 1 / (1 + exp(-t)) without overflow. Both branches' values are computed
// and one is selected (a conditional move, not a jump), so the time does not
// depend on the sign of t through branch prediction: objective perturbation
// promises a running time independent of the data (objective_perturbation.cpp).
// The values are bit-for-bit those of 1/(1 + exp(-t)) (t >= 0) and
// exp(t)/(1 + exp(t)) (t < 0).
double Sigmoid(double t) {
  const double e = std::exp(-std::fabs(t));
  const double d = 1.0 + e;
  const double positive = 1.0 / d, negative = e / d;
  return t >= 0 ? positive : negative;
}

// The intercept offset (offset.hpp): S = #{y = +1}, the positive count;
// p = (S + 1/2)/(n + 1) clamped to [1/(2(n+1)), 1 - 1/(2(n+1))] and
// b0 = logit(p), so |b0| <= log(2n + 1).
class PositiveCount final : public OffsetStatistic {
 public:
  const char* Text() const override { return "positive count; b0 = logit((S + 1/2)/(n + 1))"; }
  bool Histogram() const override { return false; }
  bool Counts() const override { return true; }
  double Bound(const LossParams&, int64_t n) const override { return std::log(2.0 * double(n) + 1); }
  double Row(const LossParams&, double y, int* sum) const noexcept override {
    *sum = 0;
    return y > 0 ? 1.0 : 0.0;
  }
  std::vector<double> FromSums(const LossParams&, const std::vector<double>& s,
                               int64_t n) const override {
    const double nn = double(n), lo = 0.5 / (nn + 1);
    const double p = std::clamp((s[0] + 0.5) / (nn + 1), lo, 1 - lo);
    return {std::log(p) - std::log1p(-p)};
  }
};

// l2 => 'auto''s score: 1 when sign(m) is the label, else 0.
class Correct final : public ValidationScore {
 public:
  const char* Text() const override { return "correct predictions (higher is better)"; }
  double Bound(const LossParams&) const override { return 1; }
  bool Counts() const override { return true; }
  bool LowerIsBetter() const override { return false; }
  double Row(const LossParams&, const double* s, double y) const noexcept override {
    return (s[0] > 0 ? 1.0 : -1.0) == y ? 1 : 0;
  }
};

class LogisticSpec final : public LossSpec {
 public:
  LossKind kind() const override { return LossKind::kLogistic; }
  LossConstants Constants(const LossParams&, double R) const override {
    const LogisticLoss f;
    LossConstants c;
    // grad = f'(m) x and Hessian = f''(m) x x^T with |f'| <= 1 and
    // f'' = s(1 - s) <= 1/4 ([CMS11], logistic regression): L = R and
    // beta = R^2/4 (loss.hpp, Lipschitz and Smoothness).
    c.L = f.Lipschitz(R);
    c.beta = f.Smoothness(R);
    // F(0) = log(1 + e^0) = ln 2 for every row.
    c.zero_model_bound = std::log(2.0);
    // f'(m) = -y s(-y m) lies between 0 and -y (|y| = 1): two rows'
    // gradients at any w, w' differ by at most R.
    c.gradient_range = R;
    return c;
  }
  std::unique_ptr<Loss> MakeMarginLoss(const LossParams&) const override {
    return std::make_unique<LogisticLoss>();
  }
  double RowKernel(const LossParams&, double* s, double y, bool with_loss) const noexcept override {
    const LogisticLoss f;
    const double value = with_loss ? f.Value(s[0], y) : 0.0;
    s[0] = f.Derivative(s[0], y);
    return value;
  }
  const OffsetStatistic* Offset() const override {
    static const PositiveCount offset;
    return &offset;
  }
  const ValidationScore* Score() const override {
    static const Correct score;
    return &score;
  }
};

}  // namespace

double LogisticLoss::Value(double m, double y) const { return Softplus(-y * m); }
double LogisticLoss::Derivative(double m, double y) const {
  return -y * Sigmoid(-y * m);
}
void LogisticLoss::Derivatives(const double* m, const double* y, Eigen::Index y_stride,
                               Eigen::Index count, double* out) const {
  // Derivative, inlined: the same values.
  for (Eigen::Index i = 0; i < count; i++) {
    const double yi = y[i * y_stride];
    out[i] = -yi * Sigmoid(-yi * m[i]);
  }
}
double LogisticLoss::Curvature(double m, double) const {
  double s = Sigmoid(m);
  return s * (1.0 - s);
}

template <>
const LossSpec& LossSpecOf<LossKind::kLogistic>() {
  static const LogisticSpec spec;
  return spec;
}

}  // namespace dperm
