// Privacy units (unit_level.hpp): the row-level share of a unit-level
// release, checked against the group-privacy formula it inverts, and the
// plan and ledger curve a unit-level release states.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "dperm/accounting/budget.hpp"
#include "dperm/release/streaming.hpp"
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

TEST(UnitLevel, ApproximateDpUnitReleaseHasNoCurve) {
  dperm::ReleasePlan r =
      dperm::PlanInMemoryRelease(UnitOptions(1, 1e-6, 5), dperm::LossKind::kLogistic, 1000 * 5, 3);
  EXPECT_TRUE(r.curve.empty());
  EXPECT_EQ(dperm::ReleaseDelta(r.plan), 1e-6);
  const dperm::Plan s =
      dperm::PlanStreamingRelease(UnitOptions(1, 1e-6, 5), dperm::LossKind::kLogistic, 1000 * 5, 3);
  EXPECT_EQ(s.unit_rows, 5);
  EXPECT_TRUE(dperm::ReleaseRdpCurve(s).empty());
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
    dperm::UnitReleaseCost pure = dperm::UnitReleaseCharge(count_eps, eps, 0);
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
    // delta > 0: no curve; (2E, D (1 + e^E)) at the row.
    dperm::UnitReleaseCost approx = dperm::UnitReleaseCharge(count_eps, eps, 1e-6);
    EXPECT_DOUBLE_EQ(approx.unit.epsilon, total);
    EXPECT_EQ(approx.unit.delta, 1e-6);
    EXPECT_TRUE(approx.unit.curve.empty());
    EXPECT_TRUE(approx.row.curve.empty());
    EXPECT_DOUBLE_EQ(approx.row.epsilon, 2 * total);
    EXPECT_NEAR(approx.row.delta, 1e-6 * (1 + std::exp(total)), 1e-6 * 1e-14 * std::exp(total));
  }
}
