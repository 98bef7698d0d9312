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
//
// The selection's plan (the grid, the split, the calibration above) is made
// from public inputs by PlanL2Selection (planning/plan_l2_selection.hpp);
// its type and JSON are plan/l2_selection.hpp's; this file trains it.
#pragma once
#include "dperm/util/errors.hpp"
#include "dperm/plan/l2_selection.hpp"
#include "dperm/noise/random.hpp"

#include <vector>

namespace dperm {

// Runs the selection on n rows of stride d + 1 (clipped features, then the
// label): the partition, every candidate's training, the noisy scores.
// Always the same work for a given plan: G trainings and one scoring pass.
L2SelectionResult TrainL2Selection(const L2Selection& selection, const double* rows,
                                   SecureRng& rng);

// The per-row validation score of coefficients w on a row: the loss's
// ValidationScore (loss_spec.hpp), clamped to [0, score_bound].
double RowScore(const L2Selection& selection, const std::vector<double>& w, const double* row);

}  // namespace dperm
