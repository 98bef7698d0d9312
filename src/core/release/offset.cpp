// The intercept on a private offset: stage 0's mechanism, once for every
// loss (offset.hpp states the privacy argument; each loss's statistic is its
// LossSpec's OffsetStatistic, in its own file).
#include "dperm/release/offset.hpp"

#include "dperm/losses/loss_spec.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/util/interrupt.hpp"
#include "dperm/rows/exact_sum.hpp"
#include "dperm/noise/noise.hpp"

namespace dperm {
namespace {

// The loss's statistic, or nullptr when it has no offset stage.
const OffsetStatistic* StatisticOf(LossKind loss) { return LossSpecFor(loss).Offset(); }

// Delta_u: the L1 sensitivity of the released sums in units of one row's
// range (offset.hpp). Every row adds a value in [0, 1] to one sum
// (OffsetStatistic): replace-one moves one sum by <= 1, or, in a histogram,
// takes <= 1 from one sum and adds <= 1 to another.
double UnitSensitivity(const OffsetStatistic& s) { return s.Histogram() ? 2.0 : 1.0; }

// The sums of values that are not counts, exact (exact_sum.hpp): each row's
// value in [0, 1] rounded to this grid, summed in integers. Two neighbours'
// exact sums then differ by at most 1 + grid per sum, and the one rounding
// to a double of a sum of n values in [0, 1] (and of its division by the
// range) adds at most n 2^-52: SumSlack, added to Delta_u.
double ValueSumGrid() { return SumGrid(1.0); }
double SumSlack(int64_t n) { return ValueSumGrid() + std::ldexp(double(n), -52); }

class ShiftedLoss final : public Loss {
 public:
  ShiftedLoss(std::unique_ptr<Loss> inner, double b0) : inner_(std::move(inner)), b0_(b0) {}
  LossKind kind() const override { return inner_->kind(); }
  double Value(double m, double y) const override { return inner_->Value(m + b0_, y); }
  double Derivative(double m, double y) const override { return inner_->Derivative(m + b0_, y); }
  // A block of rows: the shifted margins through the inner loss's block
  // kernel (vectorised for the logistic loss), the values of Derivative.
  void Derivatives(const double* m, const double* y, Eigen::Index y_stride, Eigen::Index count,
                   double* out) const override {
    for (Eigen::Index i = 0; i < count; i++) out[i] = m[i] + b0_;
    inner_->Derivatives(out, y, y_stride, count, out);
  }
  double Curvature(double m, double y) const override { return inner_->Curvature(m + b0_, y); }
  // Bounds over all margins: a shift of the margin does not change them.
  double MaxDerivative() const override { return inner_->MaxDerivative(); }
  double MaxCurvature() const override { return inner_->MaxCurvature(); }

 private:
  std::unique_ptr<Loss> inner_;
  double b0_;
};

}  // namespace

double OffsetEpsilon(LossKind loss, double epsilon, int64_t n, double l2) {
  const OffsetStatistic* statistic = StatisticOf(loss);
  if (statistic == nullptr || !(n >= 1) || !(epsilon > 0)) return 0;
  const double cap =
      loss == LossKind::kHuber && l2 >= kOffsetHuberMeanL2 ? kOffsetMaxShareHuber : kOffsetMaxShare;
  return std::min(cap * epsilon,
                  kOffsetPerSqrtN * UnitSensitivity(*statistic) / std::sqrt(double(n)));
}

OffsetPlan PlanOffset(const Options& o, LossKind loss, int64_t n) {
  OffsetPlan p;
  const OffsetStatistic* statistic = StatisticOf(loss);
  if (statistic == nullptr || !o.fit_intercept || !o.intercept_offset || n < 1) return p;
  const LossParams params = LossParamsOf(o);
  const double share = OffsetEpsilon(loss, o.epsilon, n, o.l2);
  const double mechanism = o.epsilon - share;  // rounded: MechanismOptions' epsilon
  if (!(share > 0) || mechanism < kMinEpsilon) return p;
  // epsilon0 = epsilon - mechanism is exact (Sterbenz: mechanism lies in
  // [epsilon/2, epsilon]), so the two shares sum to epsilon exactly.
  const double eps0 = o.epsilon - mechanism;
  const double du = UnitSensitivity(*statistic);
  const int m = statistic->Histogram() ? o.classes : 1;
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
  // Counts are exact in doubles (n < 2^53); other sums are exact on their
  // own grid, up to SumSlack for each of the du sums a row moves (once for
  // counts, where it is only a margin).
  const bool counts = statistic->Counts();
  const double slack = counts ? SumSlack(n) : du * SumSlack(n);
  const double delta1 = counts && g <= 1 ? du : du + m * g + slack;
  const double range = statistic->RowRange(params);
  p.epsilon = eps0;
  p.sensitivity = delta1 * range;
  p.noise_scale = delta1 / eps0 * range;
  p.grid = g * range;
  p.bound = statistic->Bound(params, n);
  p.statistic = statistic->Text();
  p.rule = "epsilon0 = min(epsilon/10, 4 Delta/sqrt(n)), Delta = " + FormatNumber(du) +
           " rows' range (offset.hpp)";
  return p;
}

Options MechanismOptions(const Options& options, const OffsetPlan& offset,
                         const DecisionPlan& decision) {
  Options m = options;
  m.epsilon = options.epsilon - offset.epsilon - decision.epsilon;
  return m;
}

std::vector<double> OffsetFromSums(LossKind loss, const std::vector<double>& s, int64_t n,
                                   double target_bound) {
  const OffsetStatistic* statistic = StatisticOf(loss);
  if (statistic == nullptr)
    throw Error(ErrorKind::kInternal,
                std::string("OffsetFromSums: no offset for ") + LossName(loss));
  LossParams params;
  params.target_bound = target_bound;
  params.classes = int(s.size());
  return statistic->FromSums(params, s, n);
}

std::vector<double> ReleaseOffset(const Plan& plan, const double* rows, SecureRng& rng) {
  const OffsetPlan& op = plan.offset;
  const OffsetStatistic* statistic = StatisticOf(plan.loss);
  if (!(op.epsilon > 0) || statistic == nullptr) return {};
  LossParams params = LossParamsOf(plan.options);
  params.classes = plan.classes;
  const int m = statistic->Histogram() ? plan.classes : 1;
  const bool counts = statistic->Counts();
  const double range = statistic->RowRange(params);
  const int64_t stride = int64_t(plan.d) + 1;
  // u: the sums in units of one row's range, each row adding a value in
  // [0, 1] to one of them -- clamped again here, so the sensitivity holds
  // whatever the buffer holds and the loss returns.
  std::vector<double> u(m, 0.0);
  ExactSum exact(counts ? 0 : m, ValueSumGrid());  // sums of non-counts, exact (SumSlack)
  for (int64_t i = 0; i < plan.n; i++) {
    int k = 0;
    double v = statistic->Row(params, rows[i * stride + plan.d], &k);
    k = std::clamp(k, 0, m - 1);
    if (counts) {
      u[k] += v >= 0.5 ? 1.0 : 0.0;
    } else {
      exact.Add(k, v >= 0 ? std::min(v, 1.0) : 0.0);
    }
    CountWork(4);
  }
  if (!counts)
    for (int k = 0; k < m; k++) u[k] = exact.Value(k);
  const double g = op.grid / range;
  uint64_t t, s;
  GridLaplaceScale(op.noise_scale / range, g, t, s);  // rounded up: at least the scale
  SnapDiscreteLaplace(rng, g, t, s, u.data(), m);
  for (double& v : u) v *= range;
  return statistic->FromSums(params, u, plan.n);
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
