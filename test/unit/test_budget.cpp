// ComposeCharges: the budget arithmetic every release is checked against
// (docs/user-guide.md, "Budgets and the ledger"). Expected values come from the sums and
// from RdpToEpsilon (tested against the reference vectors in test_rdp.cpp),
// never from ComposeCharges itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "dperm/accounting/budget.hpp"
#include "dperm/accounting/rdp.hpp"

namespace {

using dperm::Charge;
using dperm::ComposeCharges;
using dperm::LedgerOrders;
using dperm::RdpToEpsilon;
using dperm::Spent;

// The RDP curve of a Gaussian release with sensitivity/sigma = ratio
// (Mironov 2017, Prop. 7): alpha ratio^2 / 2.
std::vector<double> GaussianCurve(double ratio) {
  std::vector<double> curve;
  for (double a : LedgerOrders()) curve.push_back(a * ratio * ratio / 2);
  return curve;
}

TEST(ComposeCharges, BasicAccountingSumsEpsilonAndDelta) {
  std::vector<double> curve = GaussianCurve(0.5);
  std::vector<Charge> charges = {
      {0.1, 1e-7, nullptr}, {0.25, 0, curve.data()}, {0.5, 2e-7, nullptr}};
  Spent s = ComposeCharges(false, 1e-5, charges);
  EXPECT_DOUBLE_EQ(s.epsilon, 0.85);
  EXPECT_DOUBLE_EQ(s.delta, 3e-7);
}

TEST(ComposeCharges, NothingSpentIsZero) {
  Spent basic = ComposeCharges(false, 1e-5, {});
  Spent rdp = ComposeCharges(true, 1e-5, {});
  EXPECT_EQ(basic.epsilon, 0);
  EXPECT_EQ(rdp.epsilon, 0);
  EXPECT_EQ(rdp.delta, 0);
}

// k Gaussian releases compose as one Gaussian with sigma / sqrt(k): the
// summed curve converted at the whole delta budget.
TEST(ComposeCharges, CurvesAddAndConvertAtTheDeltaBudget) {
  const int k = 50;
  const double ratio = 0.2, delta_budget = 1e-6;
  std::vector<double> curve = GaussianCurve(ratio);
  std::vector<Charge> charges(k, Charge{0.5, 1e-9, curve.data()});
  Spent s = ComposeCharges(true, delta_budget, charges);
  double expected =
      RdpToEpsilon(LedgerOrders(), GaussianCurve(ratio * std::sqrt(double(k))), delta_budget);
  EXPECT_NEAR(s.epsilon, expected, 1e-9 * expected);
  // at the whole delta budget; curved rows take no delta of their own
  EXPECT_TRUE(s.at_delta_budget);
  EXPECT_EQ(s.delta, 0);
  EXPECT_LT(s.epsilon, k * 0.5);  // far below the basic sum, 25
}

// Rows without a curve compose by sums and use up delta first; the curved
// rows convert at the delta that is left.
TEST(ComposeCharges, RowsWithoutACurveAreAddedAndTakeTheirDelta) {
  const double delta_budget = 1e-5;
  std::vector<double> curve = GaussianCurve(0.3);
  std::vector<Charge> charges = {
      {1, 1e-6, curve.data()}, {1, 1e-6, curve.data()}, {0.4, 4e-6, nullptr}, {0.2, 0, nullptr}};
  Spent s = ComposeCharges(true, delta_budget, charges);
  double curved =
      RdpToEpsilon(LedgerOrders(), GaussianCurve(0.3 * std::sqrt(2.0)), delta_budget - 4e-6);
  EXPECT_NEAR(s.epsilon, 0.6 + curved, 1e-9);
  EXPECT_TRUE(s.at_delta_budget);
  EXPECT_DOUBLE_EQ(s.delta, 4e-6);  // the plain rows' delta: 6e-6 is left for them
}

// With no delta left to convert at, RDP falls back to the basic sums.
TEST(ComposeCharges, NoDeltaLeftFallsBackToSums) {
  std::vector<double> curve = GaussianCurve(0.3);
  std::vector<Charge> charges = {{1, 1e-6, curve.data()}, {0.5, 1e-5, nullptr}};
  Spent s = ComposeCharges(true, 1e-5, charges);
  EXPECT_DOUBLE_EQ(s.epsilon, 1.5);
  EXPECT_DOUBLE_EQ(s.delta, 1e-5 + 1e-6);
  Spent zero_budget = ComposeCharges(true, 0, {{1, 0, curve.data()}});
  EXPECT_DOUBLE_EQ(zero_budget.epsilon, 1);
}

// Never worse than basic composition when the summed delta fits the budget:
// one pure-DP release (curve min(eps, alpha eps^2/2)) is reported at its eps.
TEST(ComposeCharges, NeverWorseThanBasicWhenItsDeltaFits) {
  std::vector<double> pure;
  for (double a : LedgerOrders()) pure.push_back(std::min(0.1, a * 0.1 * 0.1 / 2));
  Spent s = ComposeCharges(true, 1e-6, {{0.1, 0, pure.data()}});
  EXPECT_DOUBLE_EQ(s.epsilon, 0.1);
  for (int k = 1; k <= 64; k *= 2) {
    std::vector<Charge> charges(k, Charge{0.1, 0, pure.data()});
    EXPECT_LE(ComposeCharges(true, 1e-6, charges).epsilon, 0.1 * k * (1 + 1e-12)) << k;
  }
}

// RDP accounting of a ledger with no curves is the basic sums, with their
// own delta (not the budget's), even when that delta is over the budget.
TEST(ComposeCharges, PlainOnlyLedgerIsTheSums) {
  for (double delta_budget : {1e-5, 1e-6, 0.0}) {
    Spent s = ComposeCharges(true, delta_budget, {{0.3, 2e-6, nullptr}, {0.2, 0, nullptr}});
    EXPECT_DOUBLE_EQ(s.epsilon, 0.5) << delta_budget;
    EXPECT_DOUBLE_EQ(s.delta, 2e-6) << delta_budget;
  }
}

// min(basic, RDP): one Gaussian release (Delta/sigma = 0.3, recorded at
// epsilon 0.5, delta 1e-6) converts to about 1.3 at delta 1e-5, more than its
// recorded epsilon, so the basic pair is reported as it is, with its own
// delta; at epsilon 5 recorded the conversion is smaller and is reported at
// the whole delta budget.
TEST(ComposeCharges, ReportsTheSmallerOfBasicAndRdp) {
  const double delta_budget = 1e-5;
  std::vector<double> curve = GaussianCurve(0.3);
  const double converted = RdpToEpsilon(LedgerOrders(), curve, delta_budget);
  ASSERT_GT(converted, 0.5);
  ASSERT_LT(converted, 5);
  Spent basic = ComposeCharges(true, delta_budget, {{0.5, 1e-6, curve.data()}});
  EXPECT_DOUBLE_EQ(basic.epsilon, 0.5);
  // (0.5, 1e-6) is a bound at the delta budget too: reported there, with the
  // delta of the rows without a curve (none)
  EXPECT_TRUE(basic.at_delta_budget);
  EXPECT_EQ(basic.delta, 0);
  Spent rdp = ComposeCharges(true, delta_budget, {{5, 1e-6, curve.data()}});
  EXPECT_NEAR(rdp.epsilon, converted, 1e-12 * converted);
  EXPECT_TRUE(rdp.at_delta_budget);
  EXPECT_EQ(rdp.delta, 0);
}

// The basic pair is a bound at the delta budget only if its delta fits: a
// smaller basic epsilon whose summed delta is over the budget is not
// reported; the curve converted at the budget is.
TEST(ComposeCharges, BasicOverTheDeltaBudgetIsNotReported) {
  const double delta_budget = 1e-5;
  std::vector<double> curve = GaussianCurve(0.3);
  const double converted = RdpToEpsilon(LedgerOrders(), curve, delta_budget);
  ASSERT_GT(converted, 0.5);
  Spent s = ComposeCharges(true, delta_budget, {{0.5, 2e-5, curve.data()}});
  EXPECT_NEAR(s.epsilon, converted, 1e-12 * converted);
  EXPECT_TRUE(s.at_delta_budget);
  EXPECT_EQ(s.delta, 0);
}

// Plain rows whose delta is over the budget leave a negative delta to
// convert at: the sums, as with none left.
TEST(ComposeCharges, NegativeDeltaLeftFallsBackToSums) {
  std::vector<double> curve = GaussianCurve(0.01);
  Spent s = ComposeCharges(true, 1e-5, {{1, 0, curve.data()}, {0.5, 2e-5, nullptr}});
  EXPECT_DOUBLE_EQ(s.epsilon, 1.5);
  EXPECT_DOUBLE_EQ(s.delta, 2e-5);
}

// A further release never lowers what was spent.
TEST(ComposeCharges, SpendingIsMonotone) {
  std::vector<double> curve = GaussianCurve(0.25);
  std::vector<Charge> charges;
  double previous = 0;
  for (int i = 0; i < 40; i++) {
    charges.push_back(i % 3 == 0 ? Charge{0.05, 0, nullptr} : Charge{0.3, 1e-8, curve.data()});
    Spent s = ComposeCharges(true, 1e-5, charges);
    EXPECT_GE(s.epsilon, previous * (1 - 1e-12)) << i;
    previous = s.epsilon;
  }
}

// Under RDP the reported delta is what the rows without a curve took: it
// grows only with them, stays below the delta budget whenever the epsilon is
// at the delta budget (so the ledger writer's test, spent <= budget in
// epsilon and delta, admits exactly what the epsilon admits there), and
// leaves later plain rows the rest: one taking all of it falls back to sums.
TEST(ComposeCharges, RdpDeltaIsWhatPlainRowsTook) {
  const double delta_budget = 1e-5;
  std::vector<double> curve = GaussianCurve(0.25);
  std::vector<Charge> charges;
  double previous = 0, plain = 0;
  for (int i = 0; i < 30; i++) {
    bool is_plain = i % 4 == 0;
    charges.push_back(is_plain ? Charge{0.05, 2e-6, nullptr} : Charge{0.3, 1e-6, curve.data()});
    if (is_plain) plain += 2e-6;
    Spent s = ComposeCharges(true, delta_budget, charges);
    if (i == 0) {
      EXPECT_FALSE(s.at_delta_budget);  // no curve yet: the sums
      EXPECT_EQ(s.delta, plain);
    } else if (plain < delta_budget) {
      EXPECT_TRUE(s.at_delta_budget) << i;
      EXPECT_NEAR(s.delta, plain, 1e-18) << i;
      EXPECT_LT(s.delta, delta_budget) << i;
    } else {
      EXPECT_FALSE(s.at_delta_budget) << i;  // no delta left to convert at: the sums
      EXPECT_GT(s.delta, delta_budget) << i;
    }
    EXPECT_GE(s.delta, previous) << i;
    previous = s.delta;
  }
}

}  // namespace

// The running total (dperm.budget_totals) composes to the rows' answer: a
// total built the way the ledger's insert trigger builds it (each statement's
// rows summed, then added to the total, in another order than the rows are
// read) gives ComposeCharges of the rows to 1e-12, under both accountings,
// for a mix of curved rows, curve-less rows and delta = 0 rows.
TEST(ComposeTotals, RunningTotalComposesLikeTheRows) {
  std::vector<std::vector<double>> curves;
  for (int i = 0; i < 7; i++) curves.push_back(GaussianCurve(0.05 + 0.03 * i));
  std::vector<Charge> charges;
  for (int i = 0; i < 7; i++) {
    charges.push_back({0.1 * (i + 1), i % 2 == 0 ? 0 : 1e-8 * i, curves[i].data()});  // curved
    charges.push_back({0.013 * (i + 1), i % 3 == 0 ? 0 : 1e-9 * i, nullptr});         // curve-less
  }
  // Two "statements" of rows, last first; each summed on its own and merged.
  const size_t k = LedgerOrders().size();
  dperm::ChargeTotals total;
  total.rdp.assign(k, 0.0);
  for (size_t first : {size_t(9), size_t(0)}) {
    size_t last = first == 0 ? 9 : charges.size();
    dperm::ChargeTotals part;
    for (size_t j = first; j < last; j++) dperm::AddCharge(&part, charges[j]);
    total.releases += part.releases;
    total.epsilon += part.epsilon;
    total.delta += part.delta;
    total.plain_epsilon += part.plain_epsilon;
    total.plain_delta += part.plain_delta;
    total.curves += part.curves;
    for (size_t i = 0; i < part.rdp.size(); i++) total.rdp[i] += part.rdp[i];
  }
  EXPECT_EQ(total.releases, 14);
  EXPECT_EQ(total.curves, 7);
  for (bool rdp : {false, true}) {
    for (double delta_budget : {1e-6, 1e-4, 0.0}) {
      Spent rows = ComposeCharges(rdp, delta_budget, charges);
      Spent sum = dperm::ComposeTotals(rdp, delta_budget, total);
      EXPECT_NEAR(sum.epsilon, rows.epsilon, 1e-12 * rows.epsilon) << rdp << " " << delta_budget;
      EXPECT_NEAR(sum.delta, rows.delta, 1e-12 * std::max(rows.delta, 1e-300));
    }
  }
  // RDP composition took the curves (it is below the basic sum).
  EXPECT_LT(dperm::ComposeTotals(true, 1e-4, total).epsilon, total.epsilon);
}
