// Output-perturbation full-batch gradient descent: Algorithm 1 of Zhang,
// Zheng, Mou, Wang, "Efficient Private ERM for Smooth Objectives" (IJCAI
// 2017; [ZZMW17]), with the sensitivity analysis tightened in the style of
// the bolt-on paper (Wu et al., SIGMOD 2017). See output_gd.cpp.
#pragma once
#include "dperm/algorithms/mechanism.hpp"

namespace dperm {

class OutputGd final : public Mechanism {
 public:
  Plan MakePlan(const Options& options, LossKind loss, int64_t n, int d) const override;
  Eigen::VectorXd Train(const Plan& plan, const Objective& objective,
                        SecureRng& rng) const override;
};

// The L2 sensitivity of T steps of gradient descent with step eta on
// replace-one neighbours (the tight analysis of output_gd.cpp):
// strongly convex (mu > 0): 2L/(n mu) (1 - (1 - eta mu)^T);
// convex (mu = 0): 2 eta L T / n.
double TightGdSensitivity(double L, double mu, double eta, int64_t T, int64_t n);

}  // namespace dperm
