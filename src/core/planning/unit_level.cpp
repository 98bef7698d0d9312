// Releases at the level of a privacy unit (unit_level.hpp).
#include "dperm/planning/unit_level.hpp"

#include "dperm/accounting/budget.hpp"
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

ReleaseCost UnitReleaseAtRow(double epsilon, double delta) {
  ReleaseCost row;
  row.epsilon = 2 * epsilon;
  row.delta = GroupDelta(epsilon, delta, 2);
  row.curve = UnitLevelCurve(row.epsilon, row.delta);
  return row;
}

UnitReleaseCost UnitReleaseCharge(double count_epsilon, double epsilon, double delta) {
  UnitReleaseCost c;
  c.unit.epsilon = count_epsilon + epsilon;
  c.unit.delta = delta;
  if (delta == 0) {
    c.unit.curve = UnitLevelCurve(count_epsilon, 0);
    const std::vector<double> model = UnitLevelCurve(epsilon, 0);
    for (size_t i = 0; i < c.unit.curve.size(); i++) c.unit.curve[i] += model[i];
  }
  c.row = UnitReleaseAtRow(c.unit.epsilon, c.unit.delta);
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
