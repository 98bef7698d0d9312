// The RDP curve a release records in the ledger (docs/design.md section 3,
// item 4): composed there by accounting/budget.hpp, shown by dp_explain.
#pragma once
#include "dperm/plan/plan.hpp"

#include <vector>

namespace dperm {

// The release's RDP curve on LedgerOrders(), empty when the plan has none
// (has_rdp = false); the plan's own rdp_curve when it set one; otherwise:
// gradient perturbation: noisy_steps times the subsampled Gaussian step's RDP
// at the plan's sampling rate and noise multiplier (WBK 2019, Thm 9,
// replace-one: the curve PlanGradientNoise, plan_steps.hpp, calibrated on);
// Gaussian noise of scale sigma on L2 sensitivity Delta: alpha Delta^2/(2 sigma^2)
// (Mironov 2017, Prop. 7); epsilon-DP noise: min(epsilon, alpha epsilon^2/2),
// since epsilon-DP implies (epsilon^2/2)-zCDP (Bun & Steinke 2016, Prop. 1.4)
// and (alpha, epsilon)-RDP.
// A unit-level plan (unit_level.hpp) charged by its per-unit curve has
// alpha unit_zcdp; one by group privacy (unit_rows > 1) UnitLevelCurve.
std::vector<double> ReleaseRdpCurve(const Plan& plan);

}  // namespace dperm
