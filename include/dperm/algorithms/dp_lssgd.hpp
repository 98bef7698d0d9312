// dp_lssgd: DP-LSSGD, noisy mini-batch SGD whose noisy gradient is smoothed
// by A_sigma^{-1} = (I - sigma L)^{-1} ([LSSGD], Algorithm 1; the solve is
// laplacian_smoothing.hpp). Neighbours, sampling, sensitivity and privacy
// cost: see src/core/algorithms/dp_lssgd.cpp.
#pragma once
#include "dperm/algorithms/mechanism.hpp"

namespace dperm {

class DpLssgd final : public Mechanism {
 public:
  Plan MakePlan(const Options& options, LossKind loss, int64_t n, int d) const override;
  Eigen::VectorXd Train(const Plan& plan, const Objective& objective,
                        SecureRng& rng) const override;
};

}  // namespace dperm
