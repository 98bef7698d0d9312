// The plan of a unit-level release charged by its per-unit curve
// (unit_level.hpp, PER-UNIT CURVES): the row-level plan whose k^2 curve
// stays under the charged alpha rho.
#pragma once
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"

#include <functional>

namespace dperm {

// The row-level plan of a unit-level release charged by its per-unit curve:
// the largest row epsilon (bisection; the row delta is the unit's) whose
// plan, made by `plan_rows`, has k^2 ReleaseRdpCurve <= alpha rho at every
// ledger order; with no algorithm named, a default outside the list is
// replaced by dp_gd (the delta > 0 default at l2 = 0). The plan is stated
// unit-level (StateUnitLevel) with unit_zcdp = rho. Throws
// kInvalidParameter when no row epsilon down to kMinEpsilon fits.
Plan PlanUnitByCurve(const Options& unit_level,
                     const std::function<Plan(const Options&)>& plan_rows);

}  // namespace dperm
