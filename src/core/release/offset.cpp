// The intercept on a private offset: stage 0 (offset.hpp states the
// statistics, their sensitivities and the privacy argument).
#include "dperm/release/offset.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/util/interrupt.hpp"
#include "dperm/rows/exact_sum.hpp"
#include "dperm/noise/noise.hpp"

namespace dperm {
namespace {

// Delta_u: the L1 sensitivity of the released sums in units of one row's
// range (offset.hpp): the positive count 1, the histogram 2 (a replaced row
// leaves one class and joins another), the Huber sum 1 (in units of 2B).
double UnitSensitivity(LossKind loss) { return loss == LossKind::kSoftmax ? 2.0 : 1.0; }

// The sums are counts (exact on any grid g <= 1 that is a power of two).
bool IntegerSums(LossKind loss) { return loss != LossKind::kHuber; }

// The Huber sum's exact sums (exact_sum.hpp): each row's value in [0, 1]
// rounded to this grid, summed in integers. Two neighbours' exact sums then
// differ by at most 1 + grid, and the one rounding to a double of a sum of
// n values in [0, 1] (and of its division by the range) adds at most
// n 2^-52: HuberSumSlack, added to Delta_u.
double HuberSumGrid() { return SumGrid(1.0); }
double HuberSumSlack(int64_t n) { return HuberSumGrid() + std::ldexp(double(n), -52); }

// One row's range in the sums' units: 1 for counts, 2B for the Huber sum.
double RowRange(LossKind loss, const Options& o) {
  return loss == LossKind::kHuber ? 2 * o.target_bound : 1.0;
}

class ShiftedLoss final : public Loss {
 public:
  ShiftedLoss(std::unique_ptr<Loss> inner, double b0) : inner_(std::move(inner)), b0_(b0) {}
  LossKind kind() const override { return inner_->kind(); }
  double Value(double m, double y) const override { return inner_->Value(m + b0_, y); }
  double Derivative(double m, double y) const override { return inner_->Derivative(m + b0_, y); }
  double Curvature(double m, double y) const override { return inner_->Curvature(m + b0_, y); }
  // Bounds over all margins: a shift of the margin does not change them.
  double MaxDerivative() const override { return inner_->MaxDerivative(); }
  double MaxCurvature() const override { return inner_->MaxCurvature(); }

 private:
  std::unique_ptr<Loss> inner_;
  double b0_;
};

}  // namespace

double OffsetEpsilon(LossKind loss, double epsilon, int64_t n) {
  if (!(n >= 1) || !(epsilon > 0)) return 0;
  return std::min(kOffsetMaxShare * epsilon,
                  kOffsetPerSqrtN * UnitSensitivity(loss) / std::sqrt(double(n)));
}

OffsetPlan PlanOffset(const Options& o, LossKind loss, int64_t n) {
  OffsetPlan p;
  if (!o.fit_intercept || !o.intercept_offset || n < 1) return p;
  const double share = OffsetEpsilon(loss, o.epsilon, n);
  const double mechanism = o.epsilon - share;  // rounded: MechanismOptions' epsilon
  if (!(share > 0) || mechanism < kMinEpsilon) return p;
  // epsilon0 = epsilon - mechanism is exact (Sterbenz: mechanism lies in
  // [epsilon/2, epsilon]), so the two shares sum to epsilon exactly.
  const double eps0 = o.epsilon - mechanism;
  const double du = UnitSensitivity(loss);
  const int m = loss == LossKind::kSoftmax ? o.classes : 1;
  // The grid of the normalised sums u = S / RowRange (noise.hpp's rule):
  // the largest power of two g <= min(1, 1/epsilon0) Delta_u / 2^10 (the
  // rounding adds at most 2^-10 of the sensitivity; noise of >= 2^10 grid
  // units), raised while the noise spans more than MaxGridUnits(kLaplace)
  // grid units. Rounding moves two neighbours' u by at most m g more in L1
  // (noise.hpp), so Delta_1 = Delta_u + m g -- except for counts on a grid
  // g <= 1, which round exactly: Delta_1 = Delta_u. Laplace mechanism: scale
  // Delta_1 / epsilon0 (Dwork & Roth 2014, Thm 3.6; the discrete Laplace on
  // the grid, CKS20 Alg. 2, as in evaluate.hpp).
  double g = std::ldexp(1.0, std::ilogb(std::min(1.0, 1 / eps0) * du / 1024));
  while (du / eps0 / g > MaxGridUnits(NoiseKind::kLaplace)) g *= 2;
  // Counts are exact in doubles (n < 2^53); the Huber sum is exact on its
  // own grid, up to HuberSumSlack.
  const double delta1 = IntegerSums(loss) && g <= 1 ? du : du + m * g + HuberSumSlack(n);
  const double range = RowRange(loss, o);
  p.epsilon = eps0;
  p.sensitivity = delta1 * range;
  p.noise_scale = delta1 / eps0 * range;
  p.grid = g * range;
  p.bound = loss == LossKind::kHuber ? o.target_bound : std::log(2.0 * double(n) + 1);
  switch (loss) {
    case LossKind::kLogistic:
      p.statistic = "positive count; b0 = logit((S + 1/2)/(n + 1))";
      break;
    case LossKind::kSoftmax:
      p.statistic = "class histogram; b0_k = log(S_k + 1/2) - mean_j log(S_j + 1/2)";
      break;
    case LossKind::kHuber:
      p.statistic = "sum of targets clipped to [-target_bound, target_bound]; b0 = clipped mean";
      break;
  }
  p.rule = "epsilon0 = min(epsilon/10, 4 Delta/sqrt(n)), Delta = " + FormatNumber(du) +
           " rows' range (offset.hpp)";
  return p;
}

Options MechanismOptions(const Options& options, const OffsetPlan& offset) {
  Options m = options;
  m.epsilon = options.epsilon - offset.epsilon;
  return m;
}

std::vector<double> OffsetFromSums(LossKind loss, const std::vector<double>& s, int64_t n,
                                   double target_bound) {
  const double nn = double(n);
  std::vector<double> b0(s.size());
  switch (loss) {
    case LossKind::kLogistic: {
      const double lo = 0.5 / (nn + 1);
      const double p = std::clamp((s[0] + 0.5) / (nn + 1), lo, 1 - lo);
      b0[0] = std::log(p) - std::log1p(-p);
      break;
    }
    case LossKind::kSoftmax: {
      double mean = 0;
      for (size_t k = 0; k < s.size(); k++) {
        b0[k] = std::log(std::clamp(s[k], 0.0, nn) + 0.5);
        mean += b0[k];
      }
      mean /= double(s.size());
      for (double& b : b0) b -= mean;
      break;
    }
    case LossKind::kHuber:
      b0[0] = std::clamp(s[0] / nn - target_bound, -target_bound, target_bound);
      break;
  }
  return b0;
}

std::vector<double> ReleaseOffset(const Plan& plan, const double* rows, SecureRng& rng) {
  const OffsetPlan& op = plan.offset;
  if (!(op.epsilon > 0)) return {};
  const LossKind loss = plan.loss;
  const int m = loss == LossKind::kSoftmax ? plan.classes : 1;
  const double range = RowRange(loss, plan.options);
  const double B = plan.options.target_bound;
  const int64_t stride = int64_t(plan.d) + 1;
  // u: the sums in units of one row's range, each row adding a value in
  // [0, 1] (one count, or (y + B)/2B) -- clamped again here, so the
  // sensitivity holds whatever the buffer holds.
  std::vector<double> u(m, 0.0);
  ExactSum huber(1, HuberSumGrid());  // the Huber sum, exact (HuberSumSlack)
  for (int64_t i = 0; i < plan.n; i++) {
    const double y = rows[i * stride + plan.d];
    switch (loss) {
      case LossKind::kLogistic: u[0] += y > 0 ? 1.0 : 0.0; break;
      case LossKind::kSoftmax:  // clamped as a double first: int(y) of a huge y is undefined
        u[std::isnan(y) ? 0 : size_t(std::clamp(y, 0.0, double(m - 1)))] += 1.0;
        break;
      case LossKind::kHuber:
        huber.Add(0, std::isnan(y) ? 0.5 : (std::clamp(y, -B, B) + B) / (2 * B));
        break;
    }
    CountWork(4);
  }
  if (loss == LossKind::kHuber) u[0] = huber.Value(0);
  const double g = op.grid / range;
  uint64_t t, s;
  GridLaplaceScale(op.noise_scale / range, g, t, s);  // rounded up: at least the scale
  SnapDiscreteLaplace(rng, g, t, s, u.data(), m);
  for (double& v : u) v *= range;
  return OffsetFromSums(loss, u, plan.n, B);
}

std::unique_ptr<Loss> ShiftLoss(std::unique_ptr<Loss> inner, double b0) {
  return std::make_unique<ShiftedLoss>(std::move(inner), b0);
}

void AddOffset(const Plan& plan, const std::vector<double>& b0, std::vector<double>& w) {
  if (b0.empty() || !plan.options.fit_intercept) return;
  const size_t per_class = size_t(plan.d) + 1;
  for (size_t k = 0; k < b0.size(); k++) w[k * per_class + plan.d] += b0[k];
}

}  // namespace dperm
