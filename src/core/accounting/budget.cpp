// Composition of ledger rows (basic and Renyi DP).
#include "dperm/accounting/budget.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/accounting/rdp.hpp"

namespace dperm {

namespace {

// The RDP of one gradient-perturbation step at `order` for a plan's sampling
// rate and noise multiplier (WBK 2019, Thm 9, replace-one).
double GradientStepRdp(const Plan& p, double order) {
  return RdpSampledWithoutReplacementGaussian(p.sampling_rate, p.noise_multiplier, order);
}

}  // namespace

const std::vector<double>& LedgerOrders() {
  static const std::vector<double> orders = StandardOrders();
  return orders;
}

namespace {

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
      curve[i] = a * ratio * ratio / 2;  // Mironov 2017, Prop. 7
    } else {
      curve[i] = std::min(eps, a * eps * eps / 2);  // Bun & Steinke 2016, Prop. 1.4
    }
  }
  return curve;
}

}  // namespace

std::vector<double> UnitLevelCurve(double epsilon, double delta) {
  if (delta > 0) return {};
  const std::vector<double>& orders = LedgerOrders();
  std::vector<double> curve(orders.size());
  for (size_t i = 0; i < orders.size(); i++)
    curve[i] = std::min(epsilon, orders[i] * epsilon * epsilon / 2);
  return curve;
}

std::vector<double> ReleaseRdpCurve(const Plan& plan) {
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

void AddCharge(ChargeTotals* totals, const Charge& c) {
  totals->releases++;
  totals->epsilon += c.epsilon;
  totals->delta += c.delta;
  if (c.rdp == nullptr) {
    totals->plain_epsilon += c.epsilon;
    totals->plain_delta += c.delta;
    return;
  }
  const size_t k = LedgerOrders().size();
  totals->rdp.resize(k, 0.0);
  totals->curves++;
  for (size_t i = 0; i < k; i++) totals->rdp[i] += c.rdp[i];
}

Spent ComposeTotals(bool rdp_accounting, double delta_budget, const ChargeTotals& t) {
  Spent basic;
  basic.epsilon = t.epsilon;
  basic.delta = t.delta;
  // Rows without a curve compose by sums; rows with one, in RDP (a sum per
  // order: Mironov 2017, Prop. 1).
  if (!rdp_accounting || t.curves == 0 || t.rdp.size() != LedgerOrders().size()) return basic;
  double delta_left = delta_budget - t.plain_delta;
  if (!(delta_left > 0)) return basic;  // RDP needs some delta to convert at
  // (alpha, rho(alpha))-RDP of the curved rows gives (eps(delta_left), delta_left)-DP
  // (improved conversion); basic composition with the plain rows adds up to
  // (epsilon, delta_budget)-DP. The delta reported is the plain rows' only:
  // the curved rows take none of their own (they convert at whatever is
  // left), so the budget's delta minus it is what later releases without a
  // curve may still take (a release with a curve needs none).
  Spent rdp;
  rdp.epsilon = t.plain_epsilon + RdpToEpsilon(LedgerOrders(), t.rdp, delta_left);
  rdp.delta = t.plain_delta;
  rdp.at_delta_budget = true;
  // The basic bound (sum eps, sum delta) is also a bound at delta_budget when
  // sum delta <= delta_budget: report the smaller epsilon.
  if (basic.delta <= delta_budget && basic.epsilon <= rdp.epsilon) rdp.epsilon = basic.epsilon;
  return rdp;
}

Spent ComposeCharges(bool rdp_accounting, double delta_budget,
                     const std::vector<Charge>& charges) {
  ChargeTotals totals;
  for (const Charge& c : charges) AddCharge(&totals, c);
  return ComposeTotals(rdp_accounting, delta_budget, totals);
}

}  // namespace dperm
