// The intercept on a private offset: stage 0 of every
// in-memory release that fits an intercept.
//
// Without it the intercept is one more coordinate: the l2 term shrinks it
// toward 0 (logit 1/2 for a logistic model) and the mechanism's noise moves
// it like any weight, so at small epsilon a model predicts one class or
// falls below the majority baseline (bench/reports/heldout_offset.md). With it:
//
//   Stage 0. Release a statistic S of the labels with pure epsilon0-DP
//   (discrete Laplace on a grid, noise.hpp's exact sampler) and turn it into
//   b0. The loss names S and b0 (its LossSpec's OffsetStatistic,
//   loss_spec.hpp, in the loss's own file: logistic the positive count,
//   softmax the class histogram, Huber the sum of clipped targets); a loss
//   without one has no stage 0. Each row adds a value in [0, 1] (times the
//   loss's row range) to one sum, so replace-one moves S by Delta_1 = 1 row
//   range, or 2 for a histogram (a row leaves one class and joins another;
//   Delta_2 = sqrt 2). n is public (docs/design.md section 4: replace-one
//   neighbours, n public), so b0's formula (dividing by n, the clamps) is
//   post-processing, and |b0| <= OffsetPlan::bound, a public clamp.
//
//   Stage 1. The mechanism trains w (feature weights and w_int) on
//   f_i(w) = loss(<w, x_i> + w_int + b0, y_i) + the penalties, and the
//   released intercept is w_int + b0. For a fixed b0, f_i is the same loss
//   at a shifted margin: |df/dm| and d2f/dm2 have the same bounds over all
//   margins, so L, beta, convexity and the row's gradient bound -- every
//   constant a mechanism's theorem uses -- are unchanged, and the
//   mechanism's guarantee at (epsilon - epsilon0, delta) holds for every
//   b0, i.e. conditionally on stage 0's output.
//
//   Privacy. Adaptive composition of an epsilon0-DP release and a mechanism
//   that is (epsilon - epsilon0, delta)-DP for every value of it gives
//   (epsilon, delta)-DP (Dwork & Roth 2014, Thm 3.16 and its adaptive form,
//   Dwork, Rothblum & Vadhan 2010), so the summed claim is exact: the plan
//   states epsilon, the ledger charges epsilon. In RDP (Mironov 2017, Prop. 1,
//   adaptive), the release's curve is the mechanism's plus stage 0's:
//   epsilon0-DP implies (epsilon0^2/2)-zCDP (Bun & Steinke 2016, Prop. 1.4),
//   i.e. (alpha, alpha epsilon0^2/2)-RDP, and (alpha, epsilon0)-RDP
//   (Mironov 2017, Prop. 3): min(epsilon0, alpha epsilon0^2/2) per order
//   (ReleaseRdpCurve, planning/release_curve.cpp).
//
//   Budget share (OffsetEpsilon): epsilon0 = min(epsilon/10 (Huber at
//   l2 >= 0.1: epsilon/2), 4 Delta_u / sqrt(n)), Delta_u the sensitivity in units of one row's range (1 for
//   one sum, 2 for a histogram). The noise
//   of the released mean then has standard deviation sqrt(2) Delta_u /
//   (epsilon0 n) = 0.35/sqrt(n) of a row's range, about 0.7 of the largest
//   sampling error of a mean of n rows (1/(2 sqrt n)) -- the base rate is
//   known about as well as the data allow -- and never costs more than a
//   tenth of the budget (docs/accountant.md, *Intercept offset*). Only
//   public inputs enter (epsilon, n, the loss).
#pragma once
#include "dperm/util/errors.hpp"
#include "dperm/losses/loss.hpp"
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace dperm {

// The share rule's constants (see above).
constexpr double kOffsetMaxShare = 0.1;  // epsilon0 <= epsilon / 10
// Huber at l2 >= kOffsetHuberMeanL2: epsilon0 <= epsilon / 2. So strong a
// penalty keeps the model near b0 (Huber's default does so where n epsilon is
// small: plan_release.hpp, kHuberShrinkNEPerD), so the release is about the
// mean alone, and a tenth of epsilon left that mean's noise several times its
// sampling error (WINE, epsilon = 0.1: RMSE above the training mean's,
// bench/reports/heldout_huber.md); at smaller l2 the mechanism keeps its
// share (BIKE, dp_gd at epsilon = 0.1 lost to the larger epsilon0). The cap
// binds only while epsilon < 8 / sqrt(n); above, 4/sqrt(n) decides.
constexpr double kOffsetMaxShareHuber = 0.5;
constexpr double kOffsetHuberMeanL2 = 0.1;
constexpr double kOffsetPerSqrtN = 4.0;  // epsilon0 <= 4 Delta_u / sqrt(n)

// epsilon0 for a release of `epsilon` over n rows of `loss`.
double OffsetEpsilon(LossKind loss, double epsilon, int64_t n, double l2);

// Stage 0's plan from public inputs: epsilon0 = 0 (no stage 0) unless
// options.fit_intercept and options.intercept_offset, n >= 1, and the
// mechanism's share epsilon - epsilon0 stays at least kMinEpsilon.
OffsetPlan PlanOffset(const Options& options, LossKind loss, int64_t n);

// The options the mechanism is planned with: epsilon minus the shares of
// stage 0 and stage 2 (decision.hpp).
Options MechanismOptions(const Options& options, const OffsetPlan& offset,
                         const DecisionPlan& decision);

// Stage 0: releases the plan's statistic over rows viewed in place (n rows
// of stride d + 1, the label last) and returns b0: one value, or K for a
// histogram; empty when the plan has no offset stage. Draws from rng before
// training does.
std::vector<double> ReleaseOffset(const Plan& plan, const double* rows, SecureRng& rng);

// b0 from noisy sums (the loss's post-processing; tests call it directly).
std::vector<double> OffsetFromSums(LossKind loss, const std::vector<double>& noisy_sums, int64_t n,
                                   double target_bound);

// The margin loss f(m + b0, y) of `inner`: same bounds on f' and f'' (hence
// the same L and beta) as `inner`.
std::unique_ptr<Loss> ShiftLoss(std::unique_ptr<Loss> inner, double b0);

// Adds b0 to the trained intercepts of w (the released intercept is
// w_int + b0).
void AddOffset(const Plan& plan, const std::vector<double>& b0, std::vector<double>& w);

}  // namespace dperm
