// The RDP curve a release records (release_curve.hpp).
#include "dperm/planning/release_curve.hpp"

#include <algorithm>

#include "dperm/accounting/budget.hpp"
#include "dperm/accounting/rdp.hpp"
#include "dperm/planning/unit_level.hpp"

namespace dperm {

namespace {

// The RDP of one gradient-perturbation step at `order` for a plan's sampling
// rate and noise multiplier (WBK 2019, Thm 9, replace-one).
double GradientStepRdp(const Plan& p, double order) {
  return RdpSampledWithoutReplacementGaussian(p.sampling_rate, p.noise_multiplier, order);
}

// The mechanism's curve (without stage 0).
std::vector<double> MechanismRdpCurve(const Plan& plan) {
  if (!plan.rdp_curve.empty()) return plan.rdp_curve;
  const std::vector<double>& orders = LedgerOrders();
  std::vector<double> curve(orders.size());
  double eps = plan.options.epsilon;
  for (size_t i = 0; i < orders.size(); i++) {
    double a = orders[i];
    if (plan.noisy_steps > 0) {
      // T adaptive compositions of a subsampled Gaussian step (Mironov 2017,
      // Prop. 1; WBK 2019, Thm 9 for each step).
      curve[i] = double(plan.noisy_steps) * GradientStepRdp(plan, a);
    } else if (plan.noise == NoiseKind::kGaussian) {
      double ratio = plan.sensitivity / plan.noise_scale;  // Delta / sigma
      curve[i] = a * ratio * ratio / 2;                    // Mironov 2017, Prop. 7
    } else {
      curve[i] = std::min(eps, a * eps * eps / 2);  // Bun & Steinke 2016, Prop. 1.4
    }
  }
  return curve;
}

}  // namespace

std::vector<double> ReleaseRdpCurve(const Plan& plan) {
  // A unit-level plan charged by its per-unit curve (unit_level.hpp): the
  // charged alpha unit_zcdp, which bounds k^2 times the row-level curve.
  if (plan.unit_zcdp > 0) {
    const std::vector<double>& orders = LedgerOrders();
    std::vector<double> curve(orders.size());
    for (size_t i = 0; i < orders.size(); i++) curve[i] = orders[i] * plan.unit_zcdp;
    return curve;
  }
  // A unit of one slot is a row: the row-level curve is the unit's.
  if (plan.unit_rows > 1) return UnitLevelCurve(plan.unit_epsilon, plan.unit_delta);
  if (!plan.has_rdp) return {};
  std::vector<double> curve = MechanismRdpCurve(plan);
  // Stage 0 (offset.hpp): pure epsilon0-DP, composed adaptively with the
  // mechanism (Mironov 2017, Prop. 1): min(epsilon0, alpha epsilon0^2 / 2)
  // per order (Bun & Steinke 2016, Prop. 1.4; Mironov 2017, Prop. 3).
  // Stage 2 (decision.hpp): pure epsilon_t-DP, the same way.
  const std::vector<double>& orders = LedgerOrders();
  for (double e0 : {plan.offset.epsilon, plan.decision.epsilon})
    if (e0 > 0)
      for (size_t i = 0; i < orders.size(); i++) curve[i] += std::min(e0, orders[i] * e0 * e0 / 2);
  return curve;
}

}  // namespace dperm
