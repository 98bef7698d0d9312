// Objective perturbation (Bassily, Feldman, Talwar & Thakurta, NeurIPS 2019,
// Section 5, Algorithm 2), and the pieces objective_approx shares with it:
// the loss check (Assumption 5.1), lambda (Theorems 5.2 and 5.3), the RDP
// curve of the exact minimiser, and the perturbed objective with its
// fixed-length solver.
// The derivations are at the top of objective_perturbation.cpp (the solver's:
// objective_perturbation_solver.cpp; the RDP curve's: objective_perturbation_rdp.cpp).
#pragma once
#include "dperm/algorithms/mechanism.hpp"

#include <Eigen/Dense>
#include <vector>

namespace dperm {

struct AlgorithmSpec;  // registry.hpp

// The plan's figures of objective perturbation (Plan::mechanism_fields):
// the minimised objective gets lambda ||w||^2 + <b, w>/n on top of F, with
// b ~ N(0, objective_noise^2 I); the solver stops at ||grad|| <=
// solver_tolerance; the release is within certificate_radius of the exact
// minimiser of its b.
inline constexpr const char kObjectiveLambda[] = "objective_lambda";
inline constexpr const char kObjectiveNoise[] = "objective_noise";
inline constexpr const char kSolverTolerance[] = "solver_tolerance";
inline constexpr const char kCertificateRadius[] = "certificate_radius";

class ObjectivePerturbation final : public Mechanism {
 public:
  Plan MakePlan(const Options& options, LossKind loss, int64_t n, int d) const override;
  Eigen::VectorXd Train(const Plan& plan, const Objective& objective,
                        SecureRng& rng) const override;
};

// The algorithm-table entries objective and objective_approx share: the
// losses Theorem 5.2 does not cover (softmax: Hessian rank up to K-1; Huber:
// not twice differentiable) and no per-algorithm option (l1,
// radius, batch_size, ls_sigma, step_size, iterations), with the reasons.
void ObjectivePerturbationSpec(AlgorithmSpec& spec);

// Sets the plan's objective_lambda: Theorem 5.3's lambda, raised to beta/(epsilon n)
// when that is larger (Theorem 5.2's condition beta <= epsilon n lambda),
// with a note saying so; and p.norm_bound = M.
void PlanObjectiveLambda(Plan& p);

// Strong convexity of the data-independent part of the perturbed objective:
// 2 lambda (from lambda ||w||^2) + l2.
double PerturbedStrongConvexity(const Plan& p);

// Prefixes the plan's sampler (set by SnapPlan for the output noise) with
// the sampler of the linear term b.
void DescribeObjectiveSampler(Plan& p);

// log(1 + beta / (n (2 lambda + l2))): the bound on the log-ratio of the
// Jacobian determinants of neighbouring datasets (rank-1 Hessians).
double JacobianEpsilon(const Plan& p);

// RDP at `order` of releasing the exact minimiser when b ~ N(0, sigma^2 I),
// kappa = 2L/sigma: eps_J + kappa^2/2 + log E[exp((order-1) kappa R)]/(order-1)
// with R ~ Rayleigh (chi with 2 degrees of freedom).
double ObjectivePerturbationRdp(double kappa, double jacobian_epsilon, double order);

// The RDP curve on LedgerOrders() of the exact minimiser at kappa = 2L/sigma,
// plus (output_ratio > 0) a Gaussian release whose sensitivity/sigma is
// output_ratio (Mironov 2017, Prop. 7), composed (Prop. 1).
std::vector<double> ObjectivePerturbationCurve(double kappa, double jacobian_epsilon,
                                               double output_ratio);

// The largest kappa = 2L/sigma whose curve, with an output release of
// ratio output_share * kappa (0: none), converts to (p's epsilon, delta)
// (Balle et al. 2020, Thm 21). Refuses an epsilon the Jacobian term alone
// already uses up.
double CalibrateObjectiveKappa(const Plan& p, double jacobian_epsilon, double output_share,
                               double delta);

// log E[exp(t R)] for R ~ Rayleigh(1), t >= 0:
// log(1 + t sqrt(2 pi) exp(t^2/2) Phi(t)).
double LogRayleighMgf(double t);

// F(w) + lambda ||w||^2 + <b, w>/n for an objective F (l2 included, no l1).
class PerturbedObjective {
 public:
  PerturbedObjective(const Objective& f, double lambda, Eigen::VectorXd b);
  int dim() const { return f_.dim(); }
  Eigen::Index n() const { return f_.n(); }
  const Objective& base() const { return f_; }
  // Modulus of strong convexity of the data-independent part: 2 lambda + l2.
  double strong_convexity() const { return 2 * lambda_ + f_.l2(); }
  double Value(const Eigen::VectorXd& w) const;
  Eigen::VectorXd Gradient(const Eigen::VectorXd& w) const;
  Eigen::MatrixXd Hessian(const Eigen::VectorXd& w) const;

 private:
  const Objective& f_;
  double lambda_;
  Eigen::VectorXd b_over_n_;
};

// The number T of ITEM steps (Taylor & Drori 2023) that takes a
// `strong`-strongly convex, `smooth`-smooth P from a start within
// gradient_bound/strong of its minimiser (||grad P(start)|| <= gradient_bound)
// to within `distance` of it: the smallest N with 1 + q A_N >=
// (gradient_bound/(strong distance))^2 (their Theorem 3), 0 if the start is
// close enough already.
int64_t AcceleratedSteps(double strong, double smooth, double gradient_bound, double distance);

// Exactly `steps` steps of ITEM (step 1/smoothness, coefficients from q =
// strong convexity/smoothness alone) from `start`, returning z_T: one full
// gradient per step, no line search and no early exit, so the work does not
// depend on the data. `smoothness` bounds the Hessian's largest eigenvalue.
Eigen::VectorXd MinimisePerturbed(const PerturbedObjective& f, double smoothness, int64_t steps,
                                  const Eigen::VectorXd& start);

}  // namespace dperm
