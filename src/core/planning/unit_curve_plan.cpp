// The plan of a unit-level release charged by its per-unit curve
// (unit_curve_plan.hpp).
#include "dperm/planning/unit_curve_plan.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "dperm/accounting/budget.hpp"
#include "dperm/planning/release_curve.hpp"
#include "dperm/planning/unit_level.hpp"
#include "dperm/util/numeric_util.hpp"

namespace dperm {
namespace {

// max_i curve_i / alpha_i: the smallest rho with curve <= alpha rho at every
// ledger order.
double CurveZcdp(const std::vector<double>& curve) {
  const std::vector<double>& orders = LedgerOrders();
  double rho = 0;
  for (size_t i = 0; i < orders.size(); i++) rho = std::max(rho, curve[i] / orders[i]);
  return rho;
}

}  // namespace

Plan PlanUnitByCurve(const Options& unit_level,
                     const std::function<Plan(const Options&)>& plan_rows) {
  const int64_t k = std::max<int64_t>(1, unit_level.max_rows_per_unit);
  const double rho = UnitZcdp(unit_level.epsilon, unit_level.delta);
  const double k2 = double(k) * double(k);
  auto plan_at = [&](double epsilon) {
    Options row = unit_level;
    row.epsilon = epsilon;
    Plan p = plan_rows(row);
    if (!ScalesPerUnit(p) && !unit_level.has_algorithm) {
      // The default picked a mechanism with no per-unit curve (objective
      // perturbation): the delta > 0 default at l2 = 0 instead.
      row.has_algorithm = true;
      row.algorithm = Algorithm::kDpGd;
      p = plan_rows(row);
      p.algorithm_rule =
          "a privacy unit with delta > 0: dp_gd, whose per-unit curve composes in the ledger "
          "(objective perturbation has none; unit_level.hpp)";
    }
    if (!ScalesPerUnit(p))
      throw Error(ErrorKind::kInternal, "PlanUnitByCurve: a mechanism without a per-unit curve");
    return p;
  };
  auto fits = [&](const Plan& p) { return k2 * CurveZcdp(ReleaseRdpCurve(p)) <= rho; };
  // Bracket: a Gaussian's epsilon is about linear in 1/sigma, so the row
  // plan under alpha rho / k^2 sits near epsilon / k; epsilon / (2 k) fits
  // for every mechanism of the list in practice; halve below it down to
  // kMinEpsilon if not.
  double lo = std::max(kMinEpsilon, unit_level.epsilon / (2 * double(k)));
  Plan best = plan_at(lo);
  while (!fits(best)) {
    if (lo <= kMinEpsilon)
      ThrowInvalid("epsilon " + FormatNumber(unit_level.epsilon) + " per unit of " +
                       std::to_string(k) + " rows leaves no row-level plan above epsilon " +
                       FormatNumber(kMinEpsilon),
                   "Raise epsilon, or ask the owner for a smaller max_rows_per_unit.");
    lo = std::max(kMinEpsilon, lo / 2);
    best = plan_at(lo);
  }
  double hi = 2 * unit_level.epsilon;
  // Bisection in log epsilon to 0.1 %: the last plan that fits is kept (a
  // plan that fits is sound whatever the curve's monotonicity).
  for (int i = 0; i < 40 && hi / lo > 1.001; i++) {
    const double mid = std::sqrt(lo * hi);
    Plan p = plan_at(mid);
    if (fits(p)) {
      lo = mid;
      best = std::move(p);
    } else {
      hi = mid;
    }
  }
  StateUnitLevel(unit_level, &best);
  best.unit_zcdp = rho;
  return best;
}

}  // namespace dperm
