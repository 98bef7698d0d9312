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

// PER-UNIT CURVES (issue 48). Group privacy through (epsilon/k, delta')
// gives a delta > 0 release no RDP curve, so such releases composed by plain
// sums. For mechanisms whose every output is a Gaussian (or pure, below)
// release of a sum or a map of L2 sensitivity Delta per replaced row, with
// every coin fixed -- full-batch gradient perturbation (dp_gd, dp_newton),
// output perturbation (output_gd, bolton: the sensitivity holds for every
// permutation, bolton.cpp) and ssp -- k replaced slots move each output by
// at most k Delta (the triangle inequality along the chain of k single-slot
// replacements, the coins fixed), so each Gaussian part of ratio Delta/sigma
// has per-unit RDP alpha k^2 Delta^2/(2 sigma^2) (Mironov 2017, Prop. 7),
// adaptive compositions add (Mironov 2017, Prop. 1), and the mixture over
// the coins keeps the bound (RDP is jointly quasi-convex, Mironov 2017,
// Prop. 10 in its arXiv v3 / van Erven & Harremoes 2014, Thm 13): the
// per-unit curve is k^2 times the row-level one. The pure stages around the
// mechanism (the offset, the decision) are k epsilon_i-DP per unit, whose
// curve min(k eps_i, alpha k^2 eps_i^2/2) (Bun & Steinke 2016, Prop. 1.4) is
// at most k^2 times their row curve min(eps_i, alpha eps_i^2/2). So
// k^2 ReleaseRdpCurve(row plan) bounds the per-unit curve at every order.
//
// The charge is made before the units are counted, so its curve may not
// depend on n: it is alpha rho (rho-zCDP) with rho = UnitZcdp(epsilon,
// delta), the largest whose curve converts to (epsilon, delta) on the ledger
// orders (Balle et al. 2020, Thm 21, as the ledger converts), and the plan
// is the row-level plan whose k^2 curve stays under alpha rho at every
// ledger order (PlanUnitByCurve, unit_curve_plan.hpp). Mechanisms outside that list (objective
// perturbation, sampled SGD, l2 => 'auto') keep group privacy; the default
// algorithm at a unit with delta > 0 is chosen among those in the list.
// A unit of one slot (k = 1, a query's row) takes the same path: its curve
// is the row's.

// Whether a unit-level release with these options is charged by its
// per-unit curve (above): delta > 0, no l2 => 'auto', and the named
// algorithm, if any, in the list. Depends on the options alone.
bool UnitCurveApplies(const Options& unit_level);

// The largest rho whose curve alpha rho on LedgerOrders() converts to at
// most `epsilon` at `delta` (RdpToEpsilon). delta > 0.
double UnitZcdp(double epsilon, double delta);

// The model's charged curve per unit on LedgerOrders(): alpha UnitZcdp when
// UnitCurveApplies; UnitLevelCurve(epsilon, 0) for a pure release; empty
// otherwise (composes by sums).
std::vector<double> UnitModelCurve(const Options& unit_level);

// Whether a row-level plan's mechanism is one of the list above.
bool ScalesPerUnit(const Plan& row_plan);

// Refuses, before any charge, options no unit-level plan can meet (group
// privacy's epsilon / k below kMinEpsilon; rho too small for any plan).
void CheckUnitLevelOptions(const Options& unit_level);

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
// With UnitCurveApplies the model's part is UnitModelCurve (delta > 0
// included), and a replaced row, which moves the slots of at most two units
// (2k slots), costs at most 4 alpha rho in the model (the same chain, 2k
// slots) plus the count's 2 count_epsilon.
UnitReleaseCost UnitReleaseCharge(double count_epsilon, const Options& unit_level);

// The row part alone, of a release that is (epsilon, delta)-DP per unit
// (count and model together): dperm.unit_release_at_row.
ReleaseCost UnitReleaseAtRow(double epsilon, double delta);

// Marks a row-level plan of n = units * k slots as the unit-level release
// `unit_level` asked for (its epsilon and delta, its k and the units).
void StateUnitLevel(const Options& unit_level, Plan* plan);

}  // namespace dperm
