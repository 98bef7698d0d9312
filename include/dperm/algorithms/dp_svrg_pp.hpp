#pragma once
#include "dperm/algorithms/mechanism.hpp"

namespace dperm {

class DpSvrgPp final : public Mechanism {
 public:
  Plan MakePlan(const Options& options, LossKind loss, int64_t n, int d) const override;
  Eigen::VectorXd Train(const Plan& plan, const Objective& objective,
                        SecureRng& rng) const override;
};

}  // namespace dperm
