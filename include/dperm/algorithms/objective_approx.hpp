// Efficient objective perturbation (Bassily, Feldman, Talwar & Thakurta,
// NeurIPS 2019, Section 5, "Efficient Objective Perturbation"): solve the
// perturbed objective of Algorithm 2 approximately with SVRG to a certified
// distance r from its exact minimiser, then add Gaussian noise for L2
// sensitivity 2r. Derivation at the top of objective_approx.cpp.
#pragma once
#include "dperm/algorithms/mechanism.hpp"
#include "dperm/algorithms/objective_perturbation.hpp"

namespace dperm {

class ObjectiveApprox final : public Mechanism {
 public:
  Plan MakePlan(const Options& options, LossKind loss, int64_t n, int d) const override;
  Eigen::VectorXd Train(const Plan& plan, const Objective& objective,
                        SecureRng& rng) const override;
};

// SVRG's inner steps per epoch and step size for a perturbed objective
// whose rows are `row_smoothness`-smooth and whose regulariser is
// `strong`-strongly convex (Johnson & Zhang 2013, Thm 1 with rate 1/2).
int64_t SvrgInnerSteps(double row_smoothness, double strong);
double SvrgStepSize(double row_smoothness);

struct SvrgResult {
  Eigen::VectorXd w;
  int64_t epochs = 0;                // SVRG epochs run
  int64_t gradient_evaluations = 0;  // per-row gradients, full gradients as n
  bool certified = false;            // ||grad P(w)|| <= tolerance
};

// From w = 0: exactly `epochs` SVRG epochs (Option II) on P, then one full
// gradient for the certificate ||grad P(w)|| <= tolerance. No early exit:
// the work depends only on `epochs`, n, dim and the RNG's draws.
SvrgResult SvrgFixedEpochs(const PerturbedObjective& f, double beta, double tolerance,
                           int64_t epochs, SecureRng& rng);

}  // namespace dperm
