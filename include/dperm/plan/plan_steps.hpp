// Planning steps every mechanism shares: the model's public constants, option
// checks, and the two ways noise is calibrated (once on the output, or on
// every step's gradient).
#pragma once
#include "dperm/util/errors.hpp"
#include "dperm/plan/plan.hpp"
// The noise steps every mechanism plans and releases with (SnapPlan,
// PlanExactGaussianSteps, AddPlannedNoise): part of these shared steps.
#include "dperm/plan/plan_noise.hpp"

#include <string>

namespace dperm {

// A plan with everything that depends only on the model and (n, d): n, d,
// classes, dim, R, L, beta, mu. Checks n >= 1, the feature count, the
// classes option against the loss, and that the model has a coordinate.
//  * Rows are clipped to ||x|| <= feature_bound, so a training row with its
//    intercept column has norm <= R = sqrt(feature_bound^2 + fit_intercept).
//  * L and beta are the loss's (LossSpec::Constants, loss_spec.hpp; each
//    derived beside its loss: logistic.cpp, huber.cpp, softmax.cpp), with
//    the effective huber_delta (HuberDelta: the option, or a constant times
//    target_bound), which the plan's options then carry.
Plan BasePlan(const Options& options, LossKind loss, Algorithm algorithm, int64_t n, int d);

// Refuses an option the algorithm does not use, naming both.
[[noreturn]] void RejectOption(Algorithm algorithm, const char* key, const std::string& why);

// Refuses a step size above p.max_step_size, naming the rule that bounds it.
void CheckStepSize(const Plan& p, const std::string& rule);

// ceil(t) clamped to [1, cap]; a capped value says so in p.note.
int64_t CapIterations(Plan& p, double t, int64_t cap);

// Appends a sentence to p.note.
void AddNote(Plan& p, const std::string& note);

// A public upper bound on F(0) = 1/n sum f_i(0), the mean loss of the zero
// model, hence on F(0) - F* (losses are >= 0): the loss's own
// (LossConstants::zero_model_bound; ln 2 logistic, ln K softmax, h_delta(B)
// Huber).
double ZeroModelLossBound(const Plan& p);

// Output perturbation noise for p.sensitivity (set p.noisy_steps = 0). The
// release is snapped to a grid (plan_noise.hpp, SnapPlan): p.sensitivity grows by
// the rounding term sqrt(dim) grid before the noise is calibrated.
// delta = 0: i.i.d. discrete Laplace of scale sqrt(dim) Delta/eps per
// coordinate (epsilon-DP at the L1 sensitivity sqrt(dim) Delta; CKS20 §2.2).
// delta > 0: the discrete Gaussian with the smallest sigma whose RDP
// alpha Delta^2/(2 sigma^2) (CKS20 Thm 14) converts to (epsilon, delta), or
// with accountant 'paper' the paper's `paper_sigma` (scaled to the rounded
// sensitivity) when that is larger. Refuses a noise scale that overflows.
void PlanOutputNoise(Plan& p, double paper_sigma, const std::string& paper_rule);

// E||z||^2 / (Delta/epsilon)^2 of three pure epsilon-DP
// noises for an L2 sensitivity Delta in dim coordinates (derivation in
// plan_steps.cpp). dperm samples the per-coordinate discrete Laplace: the
// L2-Laplace has no exact lattice sampler, the Linf one is larger for dim > 1.
struct PureNoiseSq {
  double coordinate, l2, linf;
};
PureNoiseSq PureNoiseComparison(int dim);

// Gradient perturbation: p.noisy_steps steps, each the mean gradient of
// p.batch_size rows drawn uniformly without replacement (or all n rows when
// batch_size = n), a row contributing at most C = L / batch_size, plus the
// rounded exact Gaussian of noise.hpp (a post-processing of N(0, sigma^2 I)
// added to the mean rounded to the grid u; C' = C + sqrt(dim) u). Sets
// sampling_rate q = batch_size / n, sensitivity = 2C', and sigma >= z C'
// where z is the smallest multiplier whose `steps` compositions are
// (epsilon, delta)-DP by the PLD of the Zhu-Dong-Wang dominating pair
// (CalibrateWorGaussian; epsilon <= kWorPldMaxEpsilon) or by WBK 2019 Thm 9
// (larger epsilon). rdp_curve: the pair's RDP (or Thm 9's) at z, times the
// steps. With accountant 'paper' sigma is the paper's `paper_sigma` when
// that is at least the calibrated one, otherwise the calibrated sigma with a
// note. Needs delta > 0.
void PlanGradientNoise(Plan& p, double paper_sigma, const std::string& paper_rule);

}  // namespace dperm
