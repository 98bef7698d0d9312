// Composition of a relation's ledger rows into the privacy it has spent
// (docs/design.md section 3, item 4); the curve each release records is
// ReleaseRdpCurve's (planning/release_curve.hpp).
#pragma once
#include "dperm/util/errors.hpp"

#include <vector>

namespace dperm {

// The Renyi orders of every curve in the ledger (the 24-order standard grid).
const std::vector<double>& LedgerOrders();

// One ledger row: its (epsilon, delta) and its curve (nullptr if unknown).
struct Charge {
  double epsilon = 0;
  double delta = 0;
  const double* rdp = nullptr;  // LedgerOrders().size() values
};

// What a relation has spent. Basic sums: the rows are (epsilon, delta)-DP.
// RDP conversion (at_delta_budget): the rows are (epsilon, delta_budget)-DP,
// and delta is the part of the delta budget the rows without a curve took
// (what is left is what later rows without a curve may take; rows with a
// curve take no delta of their own).
struct Spent {
  double epsilon = 0;
  double delta = 0;
  bool at_delta_budget = false;
};

// The running total of a relation's ledger rows: everything ComposeCharges
// needs, so that composing the total gives the answer of composing the rows
// (dperm.budget_totals holds one per relation; the ledger's triggers keep it).
struct ChargeTotals {
  long long releases = 0;
  double epsilon = 0;  // sum over every row
  double delta = 0;
  double plain_epsilon = 0;  // sum over the rows without a curve
  double plain_delta = 0;
  long long curves = 0;     // rows with a curve
  std::vector<double> rdp;  // order-wise sum of their curves (LedgerOrders().size())
};

// Adds one ledger row to a running total.
void AddCharge(ChargeTotals* totals, const Charge& charge);

// Privacy spent by the rows a running total sums (see ComposeCharges).
Spent ComposeTotals(bool rdp_accounting, double delta_budget, const ChargeTotals& totals);

// Privacy spent by `charges` on one relation. Basic accounting sums epsilon
// and delta. RDP accounting composes the curves (sums per order) and converts
// at the delta budget left by the rows without a curve (reporting their delta
// only, see Spent); it takes the smaller of that and the basic sums whenever
// both are valid at the delta budget, so it is never worse than basic
// composition. Either way spent <= budget (epsilon and delta) is the ledger
// writer's admission test.
Spent ComposeCharges(bool rdp_accounting, double delta_budget, const std::vector<Charge>& charges);

}  // namespace dperm
