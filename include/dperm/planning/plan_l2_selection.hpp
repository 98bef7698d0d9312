// Planning l2 => 'auto' from public inputs: the grid, the split sizes, each
// candidate's plan at the calibrated per-candidate epsilon, the scores'
// noise, the curves (release/select_l2.hpp has the privacy argument;
// plan/l2_selection.hpp the plan's type).
#pragma once
#include "dperm/options/options.hpp"
#include "dperm/plan/l2_selection.hpp"
#include "dperm/plan/plan.hpp"

#include <cstdint>
#include <vector>

namespace dperm {

// The public grid of l2 values (documentation order).
const std::vector<double>& L2Grid();

// The validation share of the rows.
constexpr double kValidationFraction = 0.2;
// Fewest rows l2 => 'auto' takes (both parts need rows; n is public).
constexpr int64_t kMinSelectionRows = 20;

// The selection's plan from public inputs only: grid, split sizes, the
// candidates' plans at the calibrated per-candidate epsilon, the score's
// epsilon, the curves. Throws Error(kInvalidParameter) when n <
// kMinSelectionRows, when a candidate has no RDP curve (delta > 0), or when
// no calibration meets the request.
L2Selection PlanL2Selection(const Options& options, LossKind loss, int64_t n, int d);

// The plan the ledger row names: the first candidate's algorithm, noise,
// loss and shape, with the release's n and options (epsilon, delta as
// requested).
Plan SelectionChargePlan(const L2Selection& selection);

}  // namespace dperm
