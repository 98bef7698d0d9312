// l2 => 'auto': private selection of l2 among a public grid ([PS22]),
// charged as one release. docs/accountant.md, "Choosing l2
// privately", has the argument in full; in short:
//
//  1. Split. A uniformly random partition (secure generator) of the n rows
//     into a training part of n_train = n - n_valid rows and a validation
//     part of n_valid = ceil(kValidationFraction n) rows; both sizes are
//     functions of the public n.
//  2. Candidates. For each l2 of the public grid L2Grid(), one release on the
//     training part (the options' algorithm, or the default one for that
//     l2 and n_train), each at a per-candidate budget.
//  3. Score. Each candidate's validation sum of a bounded per-row score
//     (correct predictions for logistic and softmax; the absolute error
//     capped at B for Huber), the G sums
//     released together: delta > 0, discrete Gaussian noise of multiplier
//     score_multiplier (the candidates' curve shape, so the maximum below
//     costs little); delta = 0, discrete Laplace at score_epsilon
//     (ReleaseBoundedSums, evaluate.hpp). The best noisy score wins, and
//     its model is released with the noisy scores.
//
// Privacy (replace-one, n public). Neighbouring tables D = S + {x},
// D' = S + {x'}; couple the partitions so that x and x' take the same slot.
// Given the slot's part, the two runs differ in that part only:
//   - training part: the G candidate releases on neighbouring training
//     parts (adaptive composition: the curves add, Mironov 2017, Prop. 1)
//     and, given them, the same scoring (post-processing);
//   - validation part: the same candidates, then the scores on
//     neighbouring validation parts (one G-sum release).
// The output is a mixture, with the same data-independent weights, of pairs
// each bounded by one of the two curves, and Renyi divergence is jointly
// quasi-convex (van Erven & Harremoes 2014, Thm 13), so the release is
// (alpha, max(C_train(alpha), C_score(alpha)))-RDP at every order: parallel
// composition of the two parts. The calibration makes that curve convert to
// the requested (epsilon, delta) (RdpToEpsilon), checked as evaluated.
//
// Why not Papernot & Steinke's random stopping (ICLR 2022): its bound
// (Thm 2: repeat K ~ TNB(eta, gamma) times, keep the best) holds only
// while K stays hidden; a release's running time shows K (docs/design.md section 6:
// a timing is charged or made independent of the rows), and given K the
// best of K runs costs up to K times a run. Padding to a public cap
// costs the cap's work for every release. The split above runs a fixed,
// public number G of trainings and one scoring pass, so its work depends
// on (n, d, options) only. PapernotSteinkeRdp
// (accounting/papernot_steinke.hpp) is kept as the comparison the
// benchmark and docs quote (docs/accountant.md).
#pragma once
#include "dperm/util/errors.hpp"
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace dperm {

// The public grid of l2 values (documentation order).
const std::vector<double>& L2Grid();

// The validation share of the rows.
constexpr double kValidationFraction = 0.2;
// Fewest rows l2 => 'auto' takes (both parts need rows; n is public).
constexpr int64_t kMinSelectionRows = 20;

struct L2Selection {
  Options options;  // as given (l2_auto set)
  LossKind loss = LossKind::kLogistic;
  int64_t n = 0, n_train = 0, n_valid = 0;
  int d = 0;
  std::vector<double> grid;
  std::vector<Plan> candidates;  // one per grid value, on n_train rows
  double candidate_epsilon = 0;  // each candidate's planned epsilon (at options.delta)
  double score_epsilon = 0;      // the scores' epsilon (delta = 0: pure; else of score_curve at delta)
  double score_multiplier = 0;   // delta > 0: the scores' noise multiplier z (0: Laplace)
  double score_bound = 0;        // per-row score bound (the loss's ValidationScore)
  const char* score = "";        // what the score counts
  // Curves on LedgerOrders(): the training part (sum of the candidates'),
  // the validation part (the scores'), and the release's, their maximum.
  std::vector<double> train_curve, score_curve, rdp_curve;
  double epsilon_at_delta = 0;   // rdp_curve converted at options.delta (pure: epsilon)
  std::string rule;              // the calibration, in words
};

// An in-memory release's plan and charge, from public inputs only (options,
// n, d): l2 => 'auto' plans a selection (the charge is the selection's
// curve, the plan its first candidate's), any other release PlanRelease.
// The aggregates' final function and dperm.train (which charges it before
// the first row is read) plan with this one function.
struct InMemoryRelease {
  Plan plan;                  // the plan charged
  std::vector<double> curve;  // the release's RDP curve on LedgerOrders()
  bool selects = false;       // l2 => 'auto'
  L2Selection selection;      // when selects
  double memory = 0;          // the training's peak memory besides the rows (bytes)
};
InMemoryRelease PlanInMemoryRelease(const Options& options, LossKind loss, int64_t n, int d);

// The selection's plan from public inputs only: grid, split sizes, the
// candidates' plans at the calibrated per-candidate epsilon, the score's
// epsilon, the curves. Throws Error(kInvalidParameter) when n <
// kMinSelectionRows, when a candidate has no RDP curve (delta > 0), or when
// no calibration meets the request.
L2Selection PlanL2Selection(const Options& options, LossKind loss, int64_t n, int d);

struct L2SelectionResult {
  int chosen = 0;                   // index into the grid
  std::vector<double> w;            // the chosen candidate's coefficients
  std::vector<double> offset;       // its stage-0 offset b0 (offset.hpp), in w's intercepts
  std::vector<double> noisy_scores; // per candidate, the released noisy sums
};

// Runs the selection on n rows of stride d + 1 (clipped features, then the
// label): the partition, every candidate's training, the noisy scores.
// Always the same work for a given plan: G trainings and one scoring pass.
L2SelectionResult TrainL2Selection(const L2Selection& selection, const double* rows,
                                   SecureRng& rng);

// The per-row validation score of coefficients w on a row: the loss's
// ValidationScore (loss_spec.hpp), clamped to [0, score_bound].
double RowScore(const L2Selection& selection, const std::vector<double>& w, const double* row);

// The selection as JSON: what dp_explain shows and the model keeps
// ("l2_selection"); with a result, the chosen l2 and the noisy scores.
std::string L2SelectionJson(const L2Selection& selection, const L2SelectionResult* result);

// dp_explain for l2 => 'auto': the selection and every candidate's plan.
std::string ExplainL2Selection(const L2Selection& selection);

// The peak memory of TrainL2Selection besides the rows (registry.hpp,
// ReleaseMemoryBytes): its copy of the rows split in two parts and the
// permutation, 8 (n (d + 1) + n) bytes, the candidates' coefficients, and
// the largest candidate's training.
double SelectionMemoryBytes(const L2Selection& selection);

// The plan the ledger row names: the first candidate's algorithm, noise,
// loss and shape, with the release's n and options (epsilon, delta as
// requested).
Plan SelectionChargePlan(const L2Selection& selection);

}  // namespace dperm
