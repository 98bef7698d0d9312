// Stage 2: the decision threshold of a binary logistic model, chosen
// privately on the training rows.
//
// Why. A private logistic model ranks well long before its margins are
// calibrated: the privacy ridge and the noise pull every margin toward the
// offset b0 = logit(base rate), so on an unbalanced table "margin > 0"
// predicts the majority class for (nearly) every row although the AUC is
// far above 1/2 (docs/heldout.md). Stage 2 moves the decision, not the
// ranking: after the mechanism has released w, it counts on the training
// rows, for each threshold t of a public grid, the rows that "margin > t"
// classifies correctly, picks one by report noisy max, and releases the
// intercept shifted by -t (so dp_predict_class's "margin > 0" is
// "margin before the shift > t", and dp_predict_proba moves with it).
//
// Privacy (replace-one, n public). w is already released, so each count
// c_k = #{i : (margin_i > t_k) == (y_i > 0)} is a function of the rows
// alone; replacing one row changes every c_k by at most 1. Report noisy max
// with noise of scale 2/epsilon_t on each candidate (Dwork & Roth 2014,
// Claim 3.9, for scores of sensitivity 1 in either direction): fix the
// other candidates' noise; if candidate k wins on D with noise z, it wins on
// D' with noise z + 2 (its count fell by at most 1, every other rose by at
// most 1; ties go to the lower index on both), and the discrete Laplace
// P[Z = z] ∝ exp(-|z| epsilon_t/2) (CKS20, Alg. 2, exact) has P[Z >= z + 2]
// >= exp(-epsilon_t) P[Z >= z] for every integer z: epsilon_t-DP. The
// threshold 0 (the model as trained) gets a public head start of
// ceil(scale ln K) counts -- about the largest of the other K - 1 noises --
// so the decision moves only when a threshold is clearly better. Composed
// with the mechanism and stage 0 by basic composition (adaptive: the
// counts use the released w), the release is (epsilon, delta)-DP with
// epsilon = stage 0 + mechanism + epsilon_t; the curve adds min(epsilon_t,
// alpha epsilon_t^2/2) (Bun & Steinke 2016, Prop. 1.4).
//
// When: logistic models with an intercept on the private offset
// (`intercept => 'offset'`, the default), trained in memory, epsilon_t =
// epsilon/20 (kDecisionShare), where n epsilon_t >= 400 (below that the
// noise could cost more accuracy than the threshold gains: the chosen count
// is within about 12/epsilon_t rows of the best). Streaming releases have
// neither stage.
#pragma once

#include <cstdint>
#include <vector>

#include "dperm/noise/random.hpp"
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"

namespace dperm {

constexpr double kDecisionShare = 0.05;       // epsilon_t = epsilon / 20
constexpr double kDecisionMinNEpsilon = 400;  // stage 2 only where n epsilon_t >= 400

// The public grid: margins logit(p) for p = 0.05, 0.10, ..., 0.95 (19
// values, ascending, logit(0.5) = 0 exactly at index 9).
std::vector<double> DecisionThresholds();

// Stage 2's plan from public inputs, after stage 0's (epsilon 0: none;
// none either when the mechanism's share would fall below kMinEpsilon).
DecisionPlan PlanDecision(const Options& options, LossKind loss, int64_t n,
                          const OffsetPlan& offset);

// Stage 2 over rows viewed in place (n rows of stride d + 1, the label
// last) for the released binary model w (its intercept w[d] included):
// returns the chosen threshold t (0: the model as trained). Draws from rng.
double ReleaseDecisionThreshold(const Plan& plan, const double* rows, const std::vector<double>& w,
                                SecureRng& rng);

}  // namespace dperm
