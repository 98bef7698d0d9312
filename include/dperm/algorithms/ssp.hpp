// Sufficient-statistics perturbation for logistic regression (the
// Functional Mechanism of Zhang et al., VLDB 2012, with Gaussian noise as in
// Ferrando & Sheldon 2024): one pass releases the moments of the quadratic
// Taylor approximation of the loss at w = 0 with one Gaussian mechanism,
// then a ridge system is solved in closed form. Derivation at the top of
// ssp.cpp.
#pragma once
#include "dperm/algorithms/mechanism.hpp"

#include <vector>

namespace dperm {

class SufficientStatistics final : public Mechanism {
 public:
  Plan MakePlan(const Options& options, LossKind loss, int64_t n, int d) const override;
  Eigen::VectorXd Train(const Plan& plan, const Objective& objective,
                        SecureRng& rng) const override;
};

// Model coordinates above this are refused while planning (ssp, dp_newton):
// a release has dim (dim + 3)/2 coordinates and its pass as many roundings
// a row. CheckMomentDim refuses a wider plan (22023), naming the algorithm,
// what it releases and `hint`.
inline constexpr int kMaxMomentDim = 512;
void CheckMomentDim(const Plan& p, const char* algorithm, const char* what, const char* hint);

// The plan's figures (Plan::mechanism_fields).
inline constexpr const char kMomentWeight[] = "moment_weight";             // gamma
inline constexpr const char kMomentCoordinates[] = "moment_coordinates";   // M
inline constexpr const char kMomentSumGrid[] = "moment_sum_grid";          // q
inline constexpr const char kRidgePerCurvature[] = "ridge_per_curvature";  // rho / f''(0)

// The noise of packed Gaussian releases of `coordinates` exact sums each
// (ssp's moments, one; dp_newton's passes, K): the rounded exact Gaussian
// of noise.hpp ("THE BRIDGE"), release k's sigma_k = PackedReleaseSigma(
// noise_scale, ratios[k]) (the smallest ratio must be 1), such that the
// releases together are a Gaussian mechanism of sigma per sensitivity at
// least `per_unit` (GDP composition), each release's sensitivity Delta'_k =
// exact + slack + 2 sqrt(coordinates) sigma_k 2^-bits once its sums'
// rounding (`slack`, exact_sum.hpp) and its grid are counted. Sets the
// plan's noise fields for the release of ratio 1 (noise_bits, noise_scale,
// grid, sensitivity, inflations, noise_multiplier, sampler,
// expected_noise_sq), full-batch sampling with noisy_steps = 0, and
// rdp_curve: the sum of the releases' Gaussian curves. `algorithm` names it
// in the error for a noise too wide for the sampler.
void PlanPackedGaussian(Plan& p, double exact, double slack, int64_t coordinates, double per_unit,
                        const std::vector<double>& ratios, const char* algorithm);

// The sigma of a packed release of `ratio` times the plan's noise_scale,
// rounded up to a dyadic value (what PlanPackedGaussian planned).
double PackedReleaseSigma(double noise_scale, double ratio);

// The release itself: the objective's exact moment sums (MomentSums, with
// the plan's weight and grid) plus the plan's rounded exact Gaussian noise;
// *curvature = f''(0). Train solves SolveMoments on it.
Eigen::VectorXd ReleaseMoments(const Plan& plan, const Objective& objective, SecureRng& rng,
                               double* curvature);

// The ridge system of the released moments: with the noisy sums v (the
// MomentSums layout, objective.hpp) and c2 = f''(0), returns the minimiser
// of 1/n sum [f'(0) w.t + c2/2 (w.t)^2] + (l2 + ridge)/2 ||w||^2 after the
// moment matrix is symmetrised and its eigenvalues clipped to >= 0.
// Post-processing only: no row is read.
Eigen::VectorXd SolveMoments(const Eigen::VectorXd& v, int dim, double gamma, double c2, double n,
                             double l2, double ridge);

}  // namespace dperm
