// Releases at the level of a privacy unit (docs/design.md section 4): every
// unit contributes exactly k = max_rows_per_unit row slots (dperm.train
// bounds them: a uniformly random k of a unit's rows, its rows repeated in
// turn when it has fewer), so the slots number n = units * k, public with
// the number of units. Two tables that differ in one unit's rows then give
// slot tables of the same n that differ in at most k slots, and any
// mechanism that is (epsilon', delta')-DP for one replaced row is, by group
// privacy over those k slots, (k epsilon', delta' sum_{i<k} e^{i epsilon'})-DP
// for one replaced unit (Dwork & Roth 2014, Theorem 2.2 for delta' = 0; the
// delta term by the same chain of k neighbouring tables, each step adding
// delta' times the e^{i epsilon'} the previous steps multiplied by). Every
// mechanism is symmetric in the order of its rows (they shuffle or sample
// with their own generator, or sum exactly), so the slots' order does not
// matter. A unit-level plan is therefore the row-level plan at
// RowLevelOptions' (epsilon', delta'); it states the unit's (epsilon,
// delta), and its ledger curve is UnitLevelCurve (below).
#pragma once
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"

#include <cstdint>
#include <vector>

namespace dperm {

// The ledger curve of a release that is (epsilon, delta)-DP per privacy unit
// by group privacy: epsilon-DP gives min(epsilon, alpha epsilon^2 / 2) at
// every order (Bun & Steinke 2016, Prop. 1.4); with delta > 0 group privacy
// gives no RDP curve, so the release composes by sums (empty).
std::vector<double> UnitLevelCurve(double epsilon, double delta);

// The row-level options a unit-level release is planned with: epsilon' =
// epsilon / k and delta' = delta (e^{epsilon'} - 1) / (e^{epsilon} - 1), which
// group privacy over k slots turns back into exactly (epsilon, delta)
// (GroupDelta). The options themselves when max_rows_per_unit is 0 or 1 (a
// unit of one slot is a row). Throws kInvalidParameter when epsilon / k is
// below kMinEpsilon.
Options RowLevelOptions(const Options& unit_level);

// Group privacy: the delta of a unit of k slots when each replaced slot costs
// (epsilon_row, delta_row): delta_row sum_{i<k} e^{i epsilon_row}.
double GroupDelta(double epsilon_row, double delta_row, int64_t k);

// The one charge of a unit-level release, made before anything is read or
// released: the noisy number of units at `count_epsilon` (pure, discrete
// Laplace) and the model at (`epsilon`, `delta`) per unit, composed
// (Dwork & Roth 2014, Thm 3.16): (count_epsilon + epsilon, delta), and, when
// the model is pure, the order-wise sum of the two pure curves
// (UnitLevelCurve; Mironov 2017, Prop. 1); with delta > 0 no curve (the row
// composes by sums). Neither part depends on the number of units, so the
// whole release is admitted or refused at once.
//
// The same release at the row, for a budget in its closure that protects
// rows (no unit): a replaced row leaves one unit and joins another, so the
// two tables differ in at most two units, each step of the chain one unit
// added, removed or replaced, which the release is (E, D)-DP for (E, D
// above). Group privacy over those two steps (Dwork & Roth 2014, Thm 2.2,
// and the delta chain of GroupDelta): (2 E, D (1 + e^E)); a pure release is
// 2E-DP per row, so its curve is UnitLevelCurve(2 E, 0). An upper bound:
// the review of 0.7.0 measured 1.45-1.9 E for k = 3.
struct ReleaseCost {
  double epsilon = 0;
  double delta = 0;
  std::vector<double> curve;  // on LedgerOrders(); empty: none (composes by sums)
};
struct UnitReleaseCost {
  ReleaseCost unit;  // per unit
  ReleaseCost row;   // per row, for a budget that names no unit
};
UnitReleaseCost UnitReleaseCharge(double count_epsilon, double epsilon, double delta);

// The row part alone, of a release that is (epsilon, delta)-DP per unit
// (count and model together): dperm.unit_release_at_row.
ReleaseCost UnitReleaseAtRow(double epsilon, double delta);

// Marks a row-level plan of n = units * k slots as the unit-level release
// `unit_level` asked for (its epsilon and delta, its k and the units).
void StateUnitLevel(const Options& unit_level, Plan* plan);

}  // namespace dperm
