// Composition of ledger rows (basic and Renyi DP).
#include "dperm/accounting/budget.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/accounting/rdp.hpp"

namespace dperm {

const std::vector<double>& LedgerOrders() {
  static const std::vector<double> orders = StandardOrders();
  return orders;
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

Spent ComposeCharges(bool rdp_accounting, double delta_budget, const std::vector<Charge>& charges) {
  ChargeTotals totals;
  for (const Charge& c : charges) AddCharge(&totals, c);
  return ComposeTotals(rdp_accounting, delta_budget, totals);
}

}  // namespace dperm
