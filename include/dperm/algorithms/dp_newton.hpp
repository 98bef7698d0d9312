// Private Newton passes for logistic regression (noisy Newton's method of
// Avella-Medina, Bradshaw & Loh 2023): each pass releases the gradient sum
// and the Hessian sum at the current model with one Gaussian mechanism and
// takes a Newton step on the released values. Derivation at the top of
// dp_newton.cpp.
#pragma once
#include "dperm/algorithms/mechanism.hpp"

namespace dperm {

class DpNewton final : public Mechanism {
 public:
  Plan MakePlan(const Options& options, LossKind loss, int64_t n, int d) const override;
  Eigen::VectorXd Train(const Plan& plan, const Objective& objective,
                        SecureRng& rng) const override;
};

// Passes when `iterations` is not given: a public constant.
inline constexpr int64_t kNewtonPasses = 6;

// Pass k of K (from 0) has sigma_k = sqrt(2)^(K - 1 - k) times the last
// pass's: each pass gets twice the previous one's share of the privacy
// budget (dp_newton.cpp, "THE SCHEDULE").
double NewtonNoiseRatio(int64_t pass, int64_t passes);

// The plan's figures (Plan::mechanism_fields); the packed layout, its
// weight gamma and sum grid are ssp's (ssp.hpp: kMomentWeight,
// kMomentCoordinates, kMomentSumGrid).
inline constexpr const char kNewtonRidge[] = "newton_ridge";  // the last pass's rho, mean units

// The L2 sensitivity of one pass's packed sums (gamma sum f'(m, y) t, then
// sum f''(m, y) t t^T packed) between replace-one neighbours, before any
// rounding, for rows with |f'| t bounded by L and f'' |t|^2 by beta
// (dp_newton.cpp, "THE SENSITIVITY").
double NewtonPassSensitivity(double gamma, double L, double beta);

// Pass `pass`'s release: the objective's exact curvature sums at w
// (CurvatureSums, with the plan's weight and grid) plus the plan's rounded
// exact Gaussian noise of that pass (PackedReleaseSigma of noise_scale and
// NewtonNoiseRatio). Train takes a Newton step on it.
Eigen::VectorXd ReleaseCurvatureSums(const Plan& plan, const Objective& objective,
                                     const Eigen::VectorXd& w, int64_t pass, SecureRng& rng);

}  // namespace dperm
