// The mechanism's plan of a release from public inputs only (options, n,
// d), in memory or by passes: the default l2 and algorithm, stages 0 and 2
// (release/offset.hpp, release/decision.hpp), then the mechanism's plan.
// Plain types in, plain types out (the pgRouting "driver" shape); the
// pipeline plans with release_plan.hpp, which adds the curve and memory.
#pragma once
#include "dperm/util/errors.hpp"
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"

#include <cstdint>
#include <string>

namespace dperm {

// The l2 dperm uses when neither `l2` nor `algorithm` is given,
// from public inputs only (loss, n, d, epsilon, delta, l1, the
// mode), and a sentence saying how. Chosen by held-out quality
// (bench/scripts/heldout/l2_rule_sweep.sh, bench/reports/heldout_l2_rule.md):
//   l1 > 0, streaming mode, softmax         -> 0
//   Huber, delta = 0 or n epsilon < kHuberBoltonNE
//                       -> min(kDefaultL2Huber / (n epsilon) max(1, kHuberShrinkNEPerD d / (n epsilon)),
//                              kDefaultL2Max) (bolton)
//   Huber, otherwise    -> 0 (dp_gd; its default T for Huber: dp_gd.cpp)
//   logistic, delta > 0 -> l = max(kDefaultL2Objective sqrt(d) / (n epsilon), kDefaultL2Min)
//                          (objective) while l <= kDefaultL2ObjectiveMax, else 0
//                          (dp_gd), and 0 too where objective would not be
//                          DefaultAlgorithm's choice at l (its work cap)
//   logistic, delta = 0 -> l = max(kDefaultL2PureObjective d / (n epsilon), kDefaultL2Min)
//                          (objective, pure) from n epsilon = kPureBlendNEPerD d while it
//                          runs there; below 100 d (l > kDefaultL2PureObjectiveMax), down
//                          to n epsilon = kPureWindowNEPerD d, kDefaultL2PureWindow sqrt(d)
//                          / (n epsilon) (objective, pure, the window rule), between 100 d
//                          and kPureBlendNEPerD d the blend of the two constants, both
//                          with the intercept fitted as a coordinate; else
//                          min(kDefaultL2Output / (n epsilon), kDefaultL2Max) (bolton)
// Why ~1/(n epsilon): both mechanisms perturb the minimiser of an
// l2-strongly convex objective by noise of norm ~ sqrt(d) sigma / (n l2)
// (objective perturbation: the term <b, w>/n, ||b|| ~ sqrt(d) sigma,
// Chaudhuri, Monteleoni & Sarwate 2011 Thm 9 / Kifer et al. 2012;
// output perturbation: sensitivity 2L/(n l2), ibid. Cor. 8), sigma ~ 1/epsilon,
// while the penalty's bias grows like l2; the excess risk
// d sigma^2/(n^2 l2) + l2 ||w*||^2 is smallest at l2 ~ sqrt(d) sigma/(n ||w*||).
// Bolton's noise is one vector whose norm the rule fixes relative to the
// signal (sqrt(d) did not help there: the noise norm is per release).
constexpr double kDefaultL2Objective = 1;  // logistic, delta > 0 (objective)
constexpr double kDefaultL2Min = 1e-6;     // objective's work grows as 1/sqrt(l2)
// Above it, early-stopped dp_gd at l2 = 0 beat objective at every l2 of the
// sweep (bench/reports/heldout_l2_rule.md).
constexpr double kDefaultL2ObjectiveMax = 1e-3;
// delta = 0: objective perturbation with the Gamma-norm b at
// kDefaultL2PureObjective d / (n epsilon) (its noise's norm is ~ d/epsilon)
// while that is at most kDefaultL2PureObjectiveMax -- n epsilon >= 100 d;
// from kPureBlendNEPerD d on alone, the blend below -- and objective runs
// there; else the window rule or bolton's kDefaultL2Output / (n epsilon).
// Chosen on held-out accuracy (bench/reports/heldout_pure_l2.md).
constexpr double kDefaultL2PureObjective = 0.2;
constexpr double kDefaultL2PureObjectiveMax = 2e-3;
// delta = 0, kPureWindowNEPerD d <= n epsilon < 100 d (the window rule):
// objective at kDefaultL2PureWindow sqrt(d) / (n epsilon). There l2 is
// larger than the data's curvature in most directions, so the minimiser is
// about (g + b/n) / l2 -- g the mean gradient at b0, b the Gamma-norm
// noise -- and l2 no longer sets how well the model ranks (signal and
// noise both scale as 1/l2) but how far margins move from b0, i.e. the
// share of rows predicted positive. b's component along a row x is about
// ||b|| ||x|| / sqrt(dim), ||b|| ~ 2 dim / epsilon (Chaudhuri, Monteleoni &
// Sarwate 2011, Algorithm 2), so the spread of the noise's margins is
// ~ 2 sqrt(d) / (n epsilon l2) and l2 ~ sqrt(d) / (n epsilon) keeps it a
// fixed fraction of |b0|. Bolton's 150 / (n epsilon) there (l2 ~ 0.07 on
// ADULT at epsilon = 0.1) predicted the majority class in most seeds where
// diffprivlib's best-mu oracle did not, and its AUC lost to the oracle's on
// three sets; at 4.5 sqrt(d) / (n epsilon) accuracy and AUC tie with the
// oracle's and positives are predicted where the oracle predicts them
// (bench/reports/heldout_pure_window.md: 10 seeds, n epsilon from 5.7 d to
// 75 d; 3 sqrt(d) lost AUC on ADULT, 6 sqrt(d) predicted almost no
// positive). Below 5 d bolton's rule keeps the model at b0 (ADULT at 2.85 d:
// the window's AUC was 0.45 and 0.52 in two runs against the oracle's 0.57).
// In the window the intercept is fitted as a coordinate (no stage 0,
// offset.hpp) unless `intercept` is given: with the whole epsilon in the
// mechanism and the intercept free to move with w, held-out AUC was higher
// on all three sets at epsilon = 0.1 and 0.05 (10 seeds, same noise seeds:
// ADULT 0.758 -> 0.771, BANK 0.635 -> 0.670, CREDIT 0.577 -> 0.590 at 0.1)
// with the same accuracy and positive share; the ranking is what is
// noise-bound there, and stage 0's b0 buys nothing the coordinate does not.
constexpr double kDefaultL2PureWindow = 4.5;
constexpr double kPureWindowNEPerD = 5;
// delta = 0, 100 d <= n epsilon < kPureBlendNEPerD d: the two rules meet.
// The window's constant 4.5 sqrt(d) is larger than 0.2 d for d < 506 (2.25x
// at d = 100, 3.5x at d = 42), so l2 used to jump down by that factor at
// 100 d. Between 100 d and 300 d the constant is the geometric blend
// (4.5 sqrt(d))^(1 - t) (0.2 d)^t, t = log(n epsilon / (100 d)) / log 3,
// continuous at both edges (l2 falls with n epsilon for d < 4556), and the
// intercept is fitted as a coordinate as in the window. ADULT (d = 100) at
// epsilon = 0.5 and 1 (n epsilon = 114 d and 228 d) lost ROC AUC to
// diffprivlib's oracle at 10 seeds with 0.2 d and stage 0 (0.834 and 0.860
// against 0.847 and 0.864); the intercept fitted raised both, a larger
// constant the first; with the blend they tie (0.843, 0.862; same noise
// seeds, every other cell unchanged: bench/reports/heldout_pure_blend.md,
// docs/heldout.md). Above 300 d stage 0 stays: fitting the intercept there
// cost CREDIT (d = 30) its accuracy wins and balanced accuracy at 350 d and
// 700 d.
constexpr double kPureBlendNEPerD = 300;
constexpr double kDefaultL2Output = 150;  // logistic, delta = 0 (bolton)
constexpr double kDefaultL2Max = 1;       // the model is then about b0 alone
// Huber: bolton shrinks the model toward stage 0's private mean (offset.hpp).
// At l2 = c/(n epsilon) its noise (a vector of norm ~ dim Delta/epsilon,
// Delta = 2L/(n l2)) moves w by ~ 2 L dim / c whatever n epsilon is, while
// what the model gains over the mean shrinks with n epsilon / d: below
// n epsilon = kHuberShrinkNEPerD d, l2 grows as 1/(n epsilon)^2, so that
// the noise falls with the gain and the model tends to b0 (then l2 = 1).
// It replaced output_gd at l2 = 0 (delta = 0) and, below n epsilon =
// kHuberBoltonNE, dp_gd (delta > 0), whose models were worse than the
// training mean at small n epsilon (bench/reports/heldout_huber.md).
constexpr double kDefaultL2Huber = 100;
constexpr double kHuberShrinkNEPerD = 300;
constexpr double kHuberBoltonNE = 1000;
double DefaultL2(LossKind loss, const Options& options, int64_t n, int d, bool streaming,
                 std::string* why);

// The algorithm dperm picks when `algorithm` is not given, from public
// options only, and a sentence saying why. The choice follows the
// benchmark in bench/reports/algorithms.md (docs/user-guide.md, "Choosing an algorithm"):
//   l1 > 0            -> dp_gd (the only proximal method that is competitive)
//   logistic, 0 < n l2 <= 100 (delta = 0: max(100, kDefaultL2PureWindow sqrt(d) / epsilon),
//                        the window rule's n l2) (and objective's fixed schedule
//                        within 8e7 row gradients)
//                     -> objective (best held-out AUC at small l2,
//                        bench/reports/heldout.md: output perturbation's noise ~1/(n l2)
//                        leaves a near-constant model there)
//   l2 > 0            -> bolton (lowest excess risk in the benchmark)
//   l2 = 0, delta > 0 -> dp_gd (lowest on most of its datasets)
//   l2 = 0, delta = 0 -> output_gd (dp_gd needs delta > 0)
Algorithm DefaultAlgorithm(LossKind loss, const Options& options, int64_t n, int d,
                           std::string* why);

// The plan of the options' algorithm (or the default one) for n rows of d
// features; with fit_intercept (and intercept_offset), stage 0 of
// offset.hpp takes epsilon0 = plan.offset.epsilon and the mechanism is
// planned at epsilon - epsilon0.
Plan PlanRelease(const Options& options, LossKind loss, int64_t n, int d);

// Streaming mode (dperm.train): every iteration is a pass
// over the relation, so the default's number of passes must not grow with
// n. The default plan when no algorithm is given:
//   l1 > 0            -> dp_gd
//   l2 > 0            -> output_gd (bolton and objective read rows one by
//                        one; output_gd's tight contraction needs few passes)
//   l2 = 0, delta > 0 -> dp_newton for the logistic loss when
//                        NewtonStreamsByDefault, else dp_gd
//   l2 = 0, delta = 0 -> output_gd
// with, unless `iterations` is given, T = min(the algorithm's own rule,
// kStreamingMaxPasses); the plan's noise follows its T as for any given T.
const int64_t kStreamingMaxPasses = 100;
Plan PlanStreamingDefault(const Options& options, LossKind loss, int64_t n, int d);

// Where dp_newton's 6 curvature passes replace dp_gd's up to 100 gradient
// passes as the streaming default (public: the loss, n, d and the options).
// n epsilon/d^2 >= kNewtonDefaultMinRatio: the smallest ratio measured
// where its excess empirical risk was below dp_gd's default is 10^5 x 42
// at epsilon 1 (56.7; bench/scripts/algorithms/few_pass.cpp, bench/results/few_pass.md Part
// 4: 2.4e-4 against 3.1e-4; also 3 10^5 x 42, 10^5 and 10^6 x 8).
// n >= kNewtonDefaultMinRows: on bench/scripts/time/scale.sh's rows it lost to dp_gd
// below 10^5 rows whatever the ratio (10^4 x 8, ratio 156: 0.040 against
// 0.014; 2 10^4 x 16: 0.040 against 0.010; 3 10^4 x 8: 0.023 against
// 0.017), tied at 5 10^4 and at 10^5 x 42 (1.03-1.12x) and won on every
// rung from 10^5 x 8 and 2 10^5 x 42 up (bench/results/
// streaming_excess_delta.md): the Hessian's noise falls like 1/n against
// curvature the rows set, which no public number bounds from below. At most kNewtonDefaultMaxDim
// coordinates: a pass sums dim (dim + 3)/2 values a row, so its 6 passes
// do about 0.03 (dim + 3) times the arithmetic of 100 gradient passes
// (2x at 64), which the saved reads of the rows repaid at d = 42
// (docs/scale.md, "Built as dp_newton").
const double kNewtonDefaultMinRatio = 56;
const int64_t kNewtonDefaultMinRows = 100000;
const int kNewtonDefaultMaxDim = 64;
bool NewtonStreamsByDefault(LossKind loss, int64_t n, int d, const Options& options);

// The plan of a streaming release: PlanRelease for a named algorithm
// (throws, feature not supported, for one that cannot stream), else
// PlanStreamingDefault (above: passes that do not grow with n).
Plan PlanStreamingRelease(const Options& options, LossKind loss, int64_t n, int d);

}  // namespace dperm
