// Random Round Private SGD: Algorithm 2 of Zhang, Zheng, Mou, Wang,
// "Efficient Private ERM for Smooth Objectives" (IJCAI 2017; [ZZMW17]):
// draw a round R independently of the data, run R single-row SGD steps with
// Gaussian noise on each row gradient, release w_R. See rrpsgd.cpp for the
// privacy argument and the choices of T, the step size and the noise.
#pragma once
#include "dperm/algorithms/mechanism.hpp"

#include <cstdint>

namespace dperm {

class Rrpsgd final : public Mechanism {
 public:
  Plan MakePlan(const Options& options, LossKind loss, int64_t n, int d) const override;
  Eigen::VectorXd Train(const Plan& plan, const Objective& objective,
                        SecureRng& rng) const override;
};

// The round R in {1, ..., plan.iterations} of Theorem 5: P(R = k + 1) is
// proportional to 2 eta_k - beta_F eta_k^2. The plan's step is constant, so
// R is uniform. Drawn from `rng` only, never from the data.
int64_t DrawRandomRound(const Plan& plan, SecureRng& rng);

// Theorem 5's variance bound sigma^2 = 4 L^2 + dim s^2 of one noisy row
// gradient around the full gradient, for per-coordinate noise s.
double RrpsgdVarianceBound(const Plan& plan, double noise_scale);

// D_F = sqrt(2 (F(w_0) - F*) / beta_F) of Theorem 5 with a public bound on
// F(0) - F*: log 2 (logistic), log K (softmax), h_delta(1) (Huber, targets
// assumed scaled to [-1, 1]); beta_F = beta + l2.
double RrpsgdDistanceBound(const Plan& plan);

}  // namespace dperm
