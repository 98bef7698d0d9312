// Releases at the level of a privacy unit (unit_level.hpp).
#include "dperm/planning/unit_level.hpp"

#include "dperm/accounting/budget.hpp"
#include "dperm/accounting/rdp.hpp"
#include "dperm/util/numeric_util.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace dperm {

std::vector<double> UnitLevelCurve(double epsilon, double delta) {
  if (delta > 0) return {};
  const std::vector<double>& orders = LedgerOrders();
  std::vector<double> curve(orders.size());
  for (size_t i = 0; i < orders.size(); i++)
    curve[i] = std::min(epsilon, orders[i] * epsilon * epsilon / 2);
  return curve;
}

double GroupDelta(double epsilon_row, double delta_row, int64_t k) {
  // delta_row (1 + e^{eps} + ... + e^{(k-1) eps}) = delta_row (e^{k eps} - 1) / (e^{eps} - 1).
  if (k <= 1) return delta_row;
  return delta_row * std::expm1(double(k) * epsilon_row) / std::expm1(epsilon_row);
}

Options RowLevelOptions(const Options& unit_level) {
  const int64_t k = unit_level.max_rows_per_unit;
  if (k <= 1) return unit_level;
  Options row = unit_level;
  row.epsilon = unit_level.epsilon / double(k);
  if (row.epsilon < kMinEpsilon)
    ThrowInvalid("epsilon / max_rows_per_unit = " + FormatNumber(unit_level.epsilon) + " / " +
                     std::to_string(k) + " is below " + FormatNumber(kMinEpsilon),
                 "A unit of k rows is released at epsilon / k per row (group privacy): raise "
                 "epsilon, or ask the owner for a smaller max_rows_per_unit.");
  // The inverse of GroupDelta at epsilon' = epsilon / k.
  row.delta = unit_level.delta * std::expm1(row.epsilon) / std::expm1(unit_level.epsilon);
  return row;
}

namespace {

// The mechanisms whose per-unit curve is k^2 times the row-level one
// (unit_level.hpp, PER-UNIT CURVES): every output a Gaussian or pure release
// of a map whose sensitivity, every coin fixed, is linear along a chain of
// replaced rows.
bool ScalingAlgorithm(Algorithm a) {
  return a == Algorithm::kDpGd || a == Algorithm::kDpNewton || a == Algorithm::kOutputGd ||
         a == Algorithm::kBolton || a == Algorithm::kSsp;
}

std::vector<double> LinearCurve(double rho) {
  const std::vector<double>& orders = LedgerOrders();
  std::vector<double> curve(orders.size());
  for (size_t i = 0; i < orders.size(); i++) curve[i] = orders[i] * rho;
  return curve;
}

}  // namespace

bool UnitCurveApplies(const Options& o) {
  return o.max_rows_per_unit >= 1 && o.delta > 0 && !o.l2_auto &&
         (!o.has_algorithm || ScalingAlgorithm(o.algorithm));
}

double UnitZcdp(double epsilon, double delta) {
  // RdpToEpsilon of alpha rho grows with rho: bisection (in log rho) for
  // the largest rho at most epsilon; the result is checked, so it never
  // converts above epsilon.
  const std::vector<double>& orders = LedgerOrders();
  auto eps_of = [&](double rho) { return RdpToEpsilon(orders, LinearCurve(rho), delta); };
  double lo = epsilon * epsilon * 1e-6, hi = epsilon;  // eps_of(epsilon) > epsilon: rho <= epsilon
  while (eps_of(lo) > epsilon && lo > 1e-300) lo /= 16;
  for (int i = 0; i < 200 && hi / lo > 1 + 1e-12; i++) {
    const double mid = std::sqrt(lo * hi);
    (eps_of(mid) <= epsilon ? lo : hi) = mid;
  }
  return lo;
}

std::vector<double> UnitModelCurve(const Options& o) {
  if (o.delta == 0) return UnitLevelCurve(o.epsilon, 0);
  if (!UnitCurveApplies(o)) return {};
  return LinearCurve(UnitZcdp(o.epsilon, o.delta));
}

bool ScalesPerUnit(const Plan& p) { return p.has_rdp && ScalingAlgorithm(p.algorithm); }

void CheckUnitLevelOptions(const Options& o) {
  if (UnitCurveApplies(o)) {
    if (!(UnitZcdp(o.epsilon, o.delta) > 0))
      ThrowInvalid("epsilon " + FormatNumber(o.epsilon) + " at delta " + FormatNumber(o.delta) +
                       " is too small for a unit-level release",
                   "Raise epsilon.");
    return;
  }
  RowLevelOptions(o);
}

ReleaseCost UnitReleaseAtRow(double epsilon, double delta) {
  ReleaseCost row;
  row.epsilon = 2 * epsilon;
  row.delta = GroupDelta(epsilon, delta, 2);
  row.curve = UnitLevelCurve(row.epsilon, row.delta);
  return row;
}

UnitReleaseCost UnitReleaseCharge(double count_epsilon, const Options& o) {
  UnitReleaseCost c;
  c.unit.epsilon = count_epsilon + o.epsilon;
  c.unit.delta = o.delta;
  const std::vector<double> model = UnitModelCurve(o);
  c.row = UnitReleaseAtRow(c.unit.epsilon, c.unit.delta);
  if (!model.empty()) {
    // The count, pure count_epsilon-DP, composed with the model's curve
    // (Mironov 2017, Prop. 1; Bun & Steinke 2016, Prop. 1.4).
    c.unit.curve = UnitLevelCurve(count_epsilon, 0);
    for (size_t i = 0; i < c.unit.curve.size(); i++) c.unit.curve[i] += model[i];
    if (o.delta > 0) {
      // At the row: two units' slots, 2k slots, so (2k)^2 = 4 k^2 times the
      // row curve: 4 alpha rho; the count 2 count_epsilon-DP (group privacy
      // over two units).
      c.row.curve = UnitLevelCurve(2 * count_epsilon, 0);
      for (size_t i = 0; i < c.row.curve.size(); i++) c.row.curve[i] += 4 * model[i];
    }
  }
  return c;
}

void StateUnitLevel(const Options& unit_level, Plan* plan) {
  const int64_t k = unit_level.max_rows_per_unit;
  if (k <= 0) return;
  if (plan->n % k != 0)
    throw Error(ErrorKind::kInternal,
                "a unit-level plan needs a multiple of max_rows_per_unit rows");
  plan->unit_rows = k;
  plan->units = plan->n / k;
  plan->unit_epsilon = unit_level.epsilon;
  plan->unit_delta = unit_level.delta;
}

}  // namespace dperm
