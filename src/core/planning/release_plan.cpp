// A release's plan, curve and memory (release_plan.hpp).
#include "dperm/planning/release_plan.hpp"

#include "dperm/planning/memory.hpp"
#include "dperm/planning/plan_l2_selection.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/planning/release_curve.hpp"
#include "dperm/planning/unit_curve_plan.hpp"
#include "dperm/planning/unit_level.hpp"

namespace dperm {

ReleasePlan PlanInMemoryRelease(const Options& given, LossKind loss, int64_t n, int d) {
  ReleasePlan r;
  // A unit-level release charged by its per-unit curve (unit_level.hpp):
  // the row-level plan under the unit's alpha rho.
  if (UnitCurveApplies(given)) {
    r.plan = PlanUnitByCurve(given, [&](const Options& o) { return PlanRelease(o, loss, n, d); });
    r.curve = ReleaseRdpCurve(r.plan);
    r.memory = ReleaseMemoryBytes(r.plan, false);
    return r;
  }
  // Otherwise a unit-level release is the row-level one at RowLevelOptions'
  // share (group privacy, unit_level.hpp), charged per unit.
  const Options options = RowLevelOptions(given);
  if (options.l2_auto) {
    r.selects = true;
    r.selection = PlanL2Selection(options, loss, n, d);
    r.plan = SelectionChargePlan(r.selection);
    r.curve = r.selection.rdp_curve;
    r.memory = SelectionMemoryBytes(r.selection);
  } else {
    r.plan = PlanRelease(options, loss, n, d);
    r.curve = ReleaseRdpCurve(r.plan);
    r.memory = ReleaseMemoryBytes(r.plan, false);
  }
  if (given.max_rows_per_unit > 0) {
    StateUnitLevel(given, &r.plan);
    r.curve = ReleaseRdpCurve(r.plan);
  }
  return r;
}

ReleasePlan PlanReleaseByPasses(const Options& options, LossKind loss, int64_t n, int d) {
  ReleasePlan r;
  r.plan = PlanStreamingRelease(options, loss, n, d);
  r.curve = ReleaseRdpCurve(r.plan);
  r.memory = ReleaseMemoryBytes(r.plan, true);
  return r;
}

}  // namespace dperm
