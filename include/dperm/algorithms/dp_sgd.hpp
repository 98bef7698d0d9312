// dp_sgd: ANSGD, projected mini-batch noisy SGD with averaged iterates
// (Bassily, Feldman, Talwar & Thakurta, NeurIPS 2019; [BFTT19], Section 3,
// Algorithm 1). Neighbours, sampling, sensitivity and privacy cost: see
// src/core/algorithms/dp_sgd.cpp.
#pragma once
#include "dperm/algorithms/mechanism.hpp"

namespace dperm {

class DpSgd final : public Mechanism {
 public:
  Plan MakePlan(const Options& options, LossKind loss, int64_t n, int d) const override;
  Eigen::VectorXd Train(const Plan& plan, const Objective& objective,
                        SecureRng& rng) const override;
};

}  // namespace dperm
