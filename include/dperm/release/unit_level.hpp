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
// delta), and its ledger curve is UnitLevelCurve (budget.hpp).
#pragma once
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"

#include <vector>

namespace dperm {

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

// Marks a row-level plan of n = units * k slots as the unit-level release
// `unit_level` asked for (its epsilon and delta, its k and the units).
void StateUnitLevel(const Options& unit_level, Plan* plan);

}  // namespace dperm
