// l2 => 'auto''s plan and outcome as plain types, and their JSON: what
// PlanL2Selection (planning/plan_l2_selection.hpp) plans, TrainL2Selection
// (release/select_l2.hpp, which states the privacy argument) trains, and
// dp_explain and the model print.
#pragma once
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace dperm {

struct L2Selection {
  Options options;  // as given (l2_auto set)
  LossKind loss = LossKind::kLogistic;
  int64_t n = 0, n_train = 0, n_valid = 0;
  int d = 0;
  std::vector<double> grid;
  std::vector<Plan> candidates;  // one per grid value, on n_train rows
  double candidate_epsilon = 0;  // each candidate's planned epsilon (at options.delta)
  double score_epsilon = 0;  // the scores' epsilon (delta = 0: pure; else of score_curve at delta)
  double score_multiplier = 0;  // delta > 0: the scores' noise multiplier z (0: Laplace)
  double score_bound = 0;       // per-row score bound (the loss's ValidationScore)
  const char* score = "";       // what the score counts
  // Curves on LedgerOrders(): the training part (sum of the candidates'),
  // the validation part (the scores'), and the release's, their maximum.
  std::vector<double> train_curve, score_curve, rdp_curve;
  double epsilon_at_delta = 0;  // rdp_curve converted at options.delta (pure: epsilon)
  std::string rule;             // the calibration, in words
};

struct L2SelectionResult {
  int chosen = 0;                    // index into the grid
  std::vector<double> w;             // the chosen candidate's coefficients
  std::vector<double> offset;        // its stage-0 offset b0 (offset.hpp), in w's intercepts
  std::vector<double> noisy_scores;  // per candidate, the released noisy sums
};

// The selection as JSON: what dp_explain shows and the model keeps
// ("l2_selection"); with a result, the chosen l2 and the noisy scores.
std::string L2SelectionJson(const L2Selection& selection, const L2SelectionResult* result);

}  // namespace dperm
