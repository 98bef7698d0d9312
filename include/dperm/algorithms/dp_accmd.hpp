// DP-AccMD (Wang, Ye & Xu, NIPS 2017, Algorithm 3): accelerated mirror
// descent with noisy full gradients over the L1 ball ||w||_1 <= radius.
// Derivation at the top of src/core/algorithms/dp_accmd.cpp.
#pragma once
#include "dperm/algorithms/mechanism.hpp"

#include <Eigen/Dense>

namespace dperm {

class DpAccmd final : public Mechanism {
 public:
  Plan MakePlan(const Options& options, LossKind loss, int64_t n, int d) const override;
  Eigen::VectorXd Train(const Plan& plan, const Objective& objective,
                        SecureRng& rng) const override;
};

// The mirror map w(x) = coef ||x||_p^2 of the L1 ball of radius `radius` in
// R^dim: p = min(2, 1 + 1/ln dim), coef = k/(2 (p-1) radius^2) with
// k = dim^(2 (1 - 1/p)), so that w is 1-strongly convex w.r.t. ||x||_C =
// ||x||_1/radius; range = sup over the ball of w = k/(2 (p-1)).
struct L1Mirror {
  double p = 2;
  double coef = 0;
  double k = 1;
  double range = 0;
};
L1Mirror MakeL1Mirror(int dim, double radius);

// grad w(z) = 2 coef ||z||_p^(2-p) sign(z) |z|^(p-1).
Eigen::VectorXd MirrorGradient(const L1Mirror& m, const Eigen::VectorXd& z);

// argmin over ||z||_1 <= radius of w(z) - <theta, z> (the z-step).
Eigen::VectorXd MirrorArgmin(const L1Mirror& m, const Eigen::VectorXd& theta, double radius);

// argmin over ||y||_1 <= radius of a/2 ||y - x||_1^2 + <g, y> for a > 0 and
// ||x||_1 <= radius (the y-step), exactly, in O(dim log dim).
Eigen::VectorXd L1QuadraticStep(const Eigen::VectorXd& x, const Eigen::VectorXd& g, double a,
                                double radius);

}  // namespace dperm
