// Privacy units (unit_level.hpp): the row-level share of a unit-level
// release, checked against the group-privacy formula it inverts, and the
// plan and ledger curve a unit-level release states.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "dperm/accounting/budget.hpp"
#include "dperm/accounting/rdp.hpp"
#include <cstdio>
#include "dperm/release/streaming.hpp"
#include "dperm/planning/unit_curve_plan.hpp"
#include "dperm/planning/unit_level.hpp"
#include "dperm/planning/release_curve.hpp"
#include "dperm/planning/release_plan.hpp"
#include "dperm/planning/plan_release.hpp"

namespace {

dperm::Options UnitOptions(double epsilon, double delta, int64_t k) {
  dperm::Options o;
  o.epsilon = epsilon;
  o.delta = delta;
  o.has_algorithm = false;
  o.has_l2 = false;
  o.max_rows_per_unit = k;
  return o;
}

// Group privacy over k neighbouring steps, summed term by term (the chain
// argument itself, not the closed form GroupDelta uses).
double ChainDelta(double epsilon_row, double delta_row, int64_t k) {
  double total = 0;
  for (int64_t i = 0; i < k; i++) total += delta_row * std::exp(double(i) * epsilon_row);
  return total;
}

TEST(UnitLevel, RowShareComposesBackToTheUnitsBudget) {
  for (int64_t k : {2, 5, 20, 300}) {
    for (double epsilon : {0.5, 1.0, 3.0}) {
      const dperm::Options row = dperm::RowLevelOptions(UnitOptions(epsilon, 1e-6, k));
      EXPECT_DOUBLE_EQ(row.epsilon * double(k), epsilon);
      EXPECT_NEAR(ChainDelta(row.epsilon, row.delta, k), 1e-6, 1e-6 * 1e-12) << k;
      EXPECT_NEAR(dperm::GroupDelta(row.epsilon, row.delta, k), 1e-6, 1e-6 * 1e-12) << k;
      EXPECT_LT(row.delta, 1e-6 / double(k) * 1.0000001);  // never more than delta / k
    }
  }
}

TEST(UnitLevel, OneRowPerUnitIsTheRowLevelRelease) {
  const dperm::Options o = UnitOptions(1, 1e-6, 1);
  const dperm::Options row = dperm::RowLevelOptions(o);
  EXPECT_EQ(row.epsilon, 1);
  EXPECT_EQ(row.delta, 1e-6);
}

TEST(UnitLevel, RefusesAShareBelowTheEpsilonFloor) {
  EXPECT_THROW(dperm::RowLevelOptions(UnitOptions(0.5, 0, 1000)), dperm::Error);
}

TEST(UnitLevel, InMemoryPlanStatesTheUnitAndPlansAtTheShare) {
  const int64_t units = 500, k = 4;
  dperm::ReleasePlan r =
      dperm::PlanInMemoryRelease(UnitOptions(2, 0, k), dperm::LossKind::kLogistic, units * k, 3);
  EXPECT_EQ(r.plan.unit_rows, k);
  EXPECT_EQ(r.plan.units, units);
  EXPECT_EQ(dperm::ReleaseEpsilon(r.plan), 2);
  EXPECT_DOUBLE_EQ(dperm::TotalEpsilon(r.plan), 0.5);  // the row-level plan
  // Pure epsilon per unit: the curve min(eps, alpha eps^2 / 2).
  ASSERT_EQ(r.curve.size(), dperm::LedgerOrders().size());
  for (size_t i = 0; i < r.curve.size(); i++)
    EXPECT_DOUBLE_EQ(r.curve[i], std::min(2.0, dperm::LedgerOrders()[i] * 2.0));
  // The row-level release at the share plans the same noise.
  dperm::Options row = UnitOptions(0.5, 0, 0);
  dperm::ReleasePlan same =
      dperm::PlanInMemoryRelease(row, dperm::LossKind::kLogistic, units * k, 3);
  EXPECT_EQ(same.plan.noise_scale, r.plan.noise_scale);
  EXPECT_EQ(same.plan.algorithm, r.plan.algorithm);
}

// max_i curve_i / alpha_i over the ledger orders.
double MaxCurveOverOrder(const std::vector<double>& curve) {
  const std::vector<double>& orders = dperm::LedgerOrders();
  double rho = 0;
  for (size_t i = 0; i < orders.size(); i++) rho = std::max(rho, curve[i] / orders[i]);
  return rho;
}

TEST(UnitLevel, UnitZcdpIsTheLargestRhoThatConvertsToEpsilon) {
  const std::vector<double>& orders = dperm::LedgerOrders();
  for (double eps : {0.1, 0.9, 3.0, 10.0})
    for (double delta : {1e-9, 1e-5}) {
      const double rho = dperm::UnitZcdp(eps, delta);
      std::vector<double> at(orders.size()), above(orders.size());
      for (size_t i = 0; i < orders.size(); i++) {
        at[i] = orders[i] * rho;
        above[i] = orders[i] * rho * 1.001;
      }
      EXPECT_LE(dperm::RdpToEpsilon(orders, at, delta), eps);
      EXPECT_GT(dperm::RdpToEpsilon(orders, above, delta), eps) << eps << " " << delta;
    }
}

// delta > 0 (issue 48): the plan's row-level curve times k^2 stays under
// the charged alpha rho at every order, for in-memory and streaming plans
// of every algorithm with a per-unit curve, and for k = 1 (a query's row).
TEST(UnitLevel, ApproximateDpUnitPlanFitsUnderTheChargedCurve) {
  for (int64_t k : {1, 3, 7}) {
    for (double eps : {0.5, 1.0, 4.0}) {
      dperm::Options o = UnitOptions(eps, 1e-6, k);
      const double rho = dperm::UnitZcdp(eps, 1e-6);
      ASSERT_TRUE(dperm::UnitCurveApplies(o));
      const std::vector<double> charged = dperm::UnitModelCurve(o);
      ASSERT_EQ(charged.size(), dperm::LedgerOrders().size());
      EXPECT_DOUBLE_EQ(MaxCurveOverOrder(charged), rho);
      dperm::ReleasePlan r = dperm::PlanInMemoryRelease(o, dperm::LossKind::kLogistic, 1000 * k, 3);
      EXPECT_EQ(r.plan.unit_zcdp, rho);
      EXPECT_EQ(r.curve, charged);
      EXPECT_EQ(dperm::ReleaseEpsilon(r.plan), eps);
      EXPECT_EQ(dperm::ReleaseDelta(r.plan), 1e-6);
      EXPECT_TRUE(dperm::ScalesPerUnit(r.plan)) << dperm::AlgorithmName(r.plan.algorithm);
      // The row-level plan under it: k^2 its own curve <= alpha rho, and
      // within 1 % of the bound (the bisection's tolerance and the offset's
      // share leave a little).
      dperm::Plan row = r.plan;
      row.unit_zcdp = 0;
      row.unit_rows = 0;
      const double used = double(k * k) * MaxCurveOverOrder(dperm::ReleaseRdpCurve(row));
      EXPECT_LE(used, rho);
      EXPECT_GT(used, 0.98 * rho) << k << " " << eps;
      for (dperm::Algorithm a : {dperm::Algorithm::kDpGd, dperm::Algorithm::kOutputGd,
                                 dperm::Algorithm::kBolton, dperm::Algorithm::kDpNewton}) {
        dperm::Options named = o;
        named.has_algorithm = true;
        named.algorithm = a;
        if (a == dperm::Algorithm::kBolton) {
          named.has_l2 = true;
          named.l2 = 1e-3;
        }
        dperm::ReleasePlan p =
            dperm::PlanInMemoryRelease(named, dperm::LossKind::kLogistic, 20000 * k, 3);
        EXPECT_EQ(p.plan.algorithm, a);
        dperm::Plan rows = p.plan;
        rows.unit_zcdp = 0;
        rows.unit_rows = 0;
        EXPECT_LE(double(k * k) * MaxCurveOverOrder(dperm::ReleaseRdpCurve(rows)), rho)
            << dperm::AlgorithmName(a);
      }
      const dperm::Plan s = dperm::PlanStreamingRelease(o, dperm::LossKind::kLogistic, 1000 * k, 3);
      EXPECT_EQ(s.unit_rows, k);
      EXPECT_EQ(dperm::ReleaseRdpCurve(s), charged);
      dperm::Plan srow = s;
      srow.unit_zcdp = 0;
      srow.unit_rows = 0;
      EXPECT_LE(double(k * k) * MaxCurveOverOrder(dperm::ReleaseRdpCurve(srow)), rho);
    }
  }
}

// Per-unit sensitivity beats group privacy: at k = 7 the row-level noise of
// the curve path is below group privacy's (epsilon / k, delta') plan's.
TEST(UnitLevel, PerUnitCurveNeedsNoMoreNoiseThanGroupPrivacy) {
  dperm::Options o = UnitOptions(1, 1e-5, 7);
  o.has_algorithm = true;
  o.algorithm = dperm::Algorithm::kDpGd;
  const dperm::ReleasePlan curve =
      dperm::PlanInMemoryRelease(o, dperm::LossKind::kLogistic, 7 * 600, 5);
  dperm::Options group = dperm::RowLevelOptions(o);
  group.max_rows_per_unit = 0;
  const dperm::ReleasePlan by_group =
      dperm::PlanInMemoryRelease(group, dperm::LossKind::kLogistic, 7 * 600, 5);
  EXPECT_LT(curve.plan.noise_multiplier, by_group.plan.noise_multiplier * 1.02);
  std::printf(
      "dp_gd k = 7 at (1, 1e-5): noise multiplier %.4f by the per-unit curve, %.4f by group privacy\n",
      curve.plan.noise_multiplier, by_group.plan.noise_multiplier);
}

// Objective perturbation has no per-unit curve: named, it keeps group
// privacy (no curve); the default at a unit with delta > 0 never picks it.
TEST(UnitLevel, ObjectiveKeepsGroupPrivacyAndIsNotTheUnitDefault) {
  dperm::Options o = UnitOptions(1, 1e-6, 5);
  o.has_algorithm = true;
  o.algorithm = dperm::Algorithm::kObjective;
  EXPECT_FALSE(dperm::UnitCurveApplies(o));
  EXPECT_TRUE(dperm::UnitModelCurve(o).empty());
  o.has_l2 = true;
  o.l2 = 1e-3;
  dperm::ReleasePlan r = dperm::PlanInMemoryRelease(o, dperm::LossKind::kLogistic, 1000 * 5, 3);
  EXPECT_TRUE(r.curve.empty());
  EXPECT_EQ(r.plan.unit_zcdp, 0);
  // The default, where objective would be the row-level default (large n).
  for (int64_t n : {1000, 100000}) {
    dperm::ReleasePlan d =
        dperm::PlanInMemoryRelease(UnitOptions(1, 1e-6, 5), dperm::LossKind::kLogistic, n * 5, 3);
    EXPECT_NE(d.plan.algorithm, dperm::Algorithm::kObjective);
    EXPECT_GT(d.plan.unit_zcdp, 0);
  }
}

TEST(UnitLevel, SlotsMustBeAMultipleOfK) {
  EXPECT_THROW(
      dperm::PlanInMemoryRelease(UnitOptions(1, 0, 3), dperm::LossKind::kLogistic, 1000, 3),
      dperm::Error);
}

}  // namespace

// A unit-level release's one charge (count + model) and its cost at the
// row, against the formulas written out (unit_level.hpp): composition of
// the two parts, and group privacy over two units for a budget without one.
TEST(UnitLevel, ReleaseChargeComposesCountAndModel) {
  const std::vector<double>& orders = dperm::LedgerOrders();
  for (double eps : {0.1, 0.9, 4.5}) {
    const double count_eps = eps / 9;
    // Pure: sum of the two pure curves; at the row, the curve of 2 (count + model).
    dperm::UnitReleaseCost pure = dperm::UnitReleaseCharge(count_eps, UnitOptions(eps, 0, 7));
    const double total = count_eps + eps;
    EXPECT_DOUBLE_EQ(pure.unit.epsilon, total);
    EXPECT_EQ(pure.unit.delta, 0);
    EXPECT_DOUBLE_EQ(pure.row.epsilon, 2 * total);
    EXPECT_EQ(pure.row.delta, 0);
    ASSERT_EQ(pure.unit.curve.size(), orders.size());
    ASSERT_EQ(pure.row.curve.size(), orders.size());
    for (size_t i = 0; i < orders.size(); i++) {
      const double a = orders[i];
      EXPECT_NEAR(
          pure.unit.curve[i],
          std::min(count_eps, a * count_eps * count_eps / 2) + std::min(eps, a * eps * eps / 2),
          1e-15 * (1 + pure.unit.curve[i]));
      EXPECT_NEAR(pure.row.curve[i], std::min(2 * total, a * 4 * total * total / 2),
                  1e-15 * (1 + pure.row.curve[i]));
      // The row pays at least the unit at every order.
      EXPECT_GE(pure.row.curve[i], pure.unit.curve[i]);
    }
    // delta > 0: the count's pure curve plus alpha rho (rho = UnitZcdp of
    // the model's share); at the row 2 count_epsilon's curve plus 4 alpha
    // rho (2k slots); the (epsilon, delta) claims as before.
    dperm::Options model = UnitOptions(eps, 1e-6, 7);
    dperm::UnitReleaseCost approx = dperm::UnitReleaseCharge(count_eps, model);
    const double rho = dperm::UnitZcdp(eps, 1e-6);
    EXPECT_DOUBLE_EQ(approx.unit.epsilon, total);
    EXPECT_EQ(approx.unit.delta, 1e-6);
    ASSERT_EQ(approx.unit.curve.size(), orders.size());
    ASSERT_EQ(approx.row.curve.size(), orders.size());
    for (size_t i = 0; i < orders.size(); i++) {
      const double a = orders[i];
      EXPECT_NEAR(approx.unit.curve[i],
                  std::min(count_eps, a * count_eps * count_eps / 2) + a * rho,
                  1e-14 * (1 + approx.unit.curve[i]));
      EXPECT_NEAR(approx.row.curve[i],
                  std::min(2 * count_eps, a * 4 * count_eps * count_eps / 2) + 4 * a * rho,
                  1e-14 * (1 + approx.row.curve[i]));
    }
    // Alone, the unit's curve converts to no more than the claim.
    EXPECT_LE(dperm::RdpToEpsilon(orders, approx.unit.curve, 1e-6), total * (1 + 1e-12));
    EXPECT_DOUBLE_EQ(approx.row.epsilon, 2 * total);
    EXPECT_NEAR(approx.row.delta, 1e-6 * (1 + std::exp(total)), 1e-6 * 1e-14 * std::exp(total));
    // A mechanism without a per-unit curve: none, as before.
    model.has_algorithm = true;
    model.algorithm = dperm::Algorithm::kObjective;
    dperm::UnitReleaseCost none = dperm::UnitReleaseCharge(count_eps, model);
    EXPECT_TRUE(none.unit.curve.empty());
    EXPECT_TRUE(none.row.curve.empty());
  }
}

// Issue 48's figure: ten unit-level releases at (1, 1e-5) per unit, k = 7
// (a tenth of epsilon for each count), compose in the ledger (RDP,
// converted at delta 1e-5) to at most 4.5 (by sums: 10).
TEST(UnitLevel, TenUnitReleasesComposeUnderFourAndAHalf) {
  dperm::ChargeTotals totals;
  totals.rdp.assign(dperm::LedgerOrders().size(), 0);
  dperm::Options model = UnitOptions(0.9, 1e-5, 7);
  model.has_algorithm = true;
  model.algorithm = dperm::Algorithm::kDpGd;
  const dperm::UnitReleaseCost c = dperm::UnitReleaseCharge(0.1, model);
  for (int i = 0; i < 10; i++)
    dperm::AddCharge(&totals, {c.unit.epsilon, c.unit.delta, c.unit.curve.data()});
  const dperm::Spent spent = dperm::ComposeTotals(true, 1e-5, totals);
  EXPECT_TRUE(spent.at_delta_budget);
  EXPECT_LE(spent.epsilon, 4.5);
  EXPECT_GT(spent.epsilon, 2.0);  // not free either
  std::printf("ten unit releases at (1, 1e-5), k = 7: %.3f\n", spent.epsilon);
}
