// dp_explain's answer. Apart from plan.hpp: it reads every accountant
// (budget, RDP, PLD, analytic Gaussian), each of which depends on the plan.
#pragma once
#include "dperm/plan/plan.hpp"

#include <string>

namespace dperm {

// The plan plus its "options" (every key of the option table with the value
// the plan used; null: not given and the plan chooses), "options_given" (the
// keys the caller gave) and its "accounting": the noise multiplier, the release's RDP
// curve on the ledger's orders, and epsilon at the requested delta under
// each accountant (analytic Gaussian, RDP, PLD).
std::string ExplainJson(const Plan& plan);

}  // namespace dperm
