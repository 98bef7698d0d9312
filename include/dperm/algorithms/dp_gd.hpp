#pragma once
#include "dperm/algorithms/mechanism.hpp"

namespace dperm {

// Plan field (MechanismFields): 1 when the steps take Nesterov's momentum
// (dp_gd.cpp, "Accelerated schedule"); absent (0): plain gradient descent.
inline constexpr const char kNesterov[] = "nesterov";
// Above this many steps of Theorem 6.3's rule (l2 = 0, logistic and
// softmax, no `iterations` given), dp_gd runs this many accelerated steps
// instead: a public constant, so the work stops growing with n.
inline constexpr int64_t kAcceleratedSteps = 100;

class DpGd final : public Mechanism {
 public:
  Plan MakePlan(const Options& options, LossKind loss, int64_t n, int d) const override;
  Eigen::VectorXd Train(const Plan& plan, const Objective& objective,
                        SecureRng& rng) const override;
};

}  // namespace dperm
