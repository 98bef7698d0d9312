// dp_explain's answer: a release's plan (release_plan.hpp), its accounting
// under every accountant dperm has (budget, RDP, PLD, analytic Gaussian) and
// its memory estimate.
#pragma once
#include "dperm/plan/l2_selection.hpp"
#include "dperm/plan/plan.hpp"

#include <string>

namespace dperm {

// The plan plus its "options" (every key of the option table with the value
// the plan used; null: not given and the plan chooses), "options_given" (the
// keys the caller gave) and its "accounting": the noise multiplier, the release's RDP
// curve on the ledger's orders, and epsilon at the requested delta under
// each accountant (analytic Gaussian, RDP, PLD).
std::string ExplainJson(const Plan& plan);

// dp_explain for l2 => 'auto': the selection and every candidate's plan.
std::string ExplainL2Selection(const L2Selection& selection);

}  // namespace dperm
