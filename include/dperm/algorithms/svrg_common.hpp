// What DP-SVRG and DP-SVRG++ ([WYX17] Algorithms 1 and 2) share: the
// option checks, the noise plan, and the training loop; the privacy
// accounting of their noisy inner steps is svrg_accounting.hpp.
#pragma once
#include "dperm/util/errors.hpp"
#include "dperm/algorithms/svrg_accounting.hpp"
#include "dperm/losses/objective.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dperm {

struct AlgorithmSpec;  // registry.hpp

// D = R (sup f' - inf f') for one row: logistic R (f' lies between 0 and -y,
// |y| = 1), Huber 2 huber_delta R, softmax sqrt(2) R (||p - p'|| <= sqrt(2)
// for two probability vectors). At most 2L; each loss derives its own (LossConstants::gradient_range).
double SvrgRowRange(const Plan& p);

// Total inner steps of `epochs` epochs whose first has m inner steps:
// T m (DP-SVRG) or m (2^{T+1} - 2) when epochs double (DP-SVRG++, m_s = 2^s m).
// Throws when the count exceeds the largest supported run.
int64_t SvrgTotalSteps(int64_t epochs, int64_t m, bool doubling);

// dp_svrg / dp_svrg_pp plan the fraction f of sigma^2 on the snapshot part,
// the rest on the sampled part (Plan::mechanism_fields, svrg_common.cpp).
inline constexpr const char kNoiseFraction[] = "noise_fraction";

// The algorithm-table entries both SVRG variants share: the options they
// take (not radius, ls_sigma) and delta > 0 (every inner step adds Gaussian
// noise).
void SvrgSpec(AlgorithmSpec& spec);

// Rows per inner step: the batch_size option or 1 (Algorithms 1 and 2).
int64_t SvrgBatch(const Options& o, int64_t n, Algorithm a);

// A schedule at one batch size, for SvrgChooseBatch: T epochs whose first
// has m inner steps (m = 0: this batch size is not possible), and the
// weight w of sigma^2 in the noise error w sigma^2 dim the schedule is
// expected to leave (svrg_accounting.hpp, "THE BATCH SIZE").
struct SvrgCandidate {
  int64_t epochs = 0;
  int64_t m = 0;
  double noise_weight = 0;
};

// noise_weight sigma^2 dim for the schedule c at batch size b, sigma the
// predicted noise of its K steps (SvrgPredictedSigma); +inf when epsilon is
// out of reach.
double SvrgNoiseError(const Plan& p, bool doubling, int64_t batch, const SvrgCandidate& c);

// The default batch size: among b = 1, 2, 4, ... <= n whose inner steps read
// at most max(kSvrgMaxInnerPasses n, 2^22) rows (b K; b = 1 always
// qualifies), the one whose schedule minimises SvrgNoiseError. Public
// inputs only: n, dim, L, D, epsilon, delta and the schedules.
struct SvrgBatchChoice {
  int64_t batch = 1;
  double noise_error = 0;  // noise_weight sigma^2 dim of that schedule
};
SvrgBatchChoice SvrgChooseBatch(const Plan& p, bool doubling,
                                const std::function<SvrgCandidate(int64_t)>& schedule);

// The noise scale of the snapshot part (sqrt(f) sigma) or of the sampled
// part (sqrt(1 - f) sigma), rounded up by DyadicNoiseScale for the exact
// Gaussian sampler (noise.hpp).
double SvrgPartSigma(double sigma, double fraction, bool snapshot);

// Fills the noise part of a plan whose schedule (iterations = T epochs,
// batch_size = b, step_size, epoch length m) is set: noisy_steps = K,
// sampling, sensitivity, noise_scale = sigma by the split analysis (or the
// paper's sigma when at least that, accountant 'paper'), rdp_curve, and the
// note counting gradient evaluations. Needs delta > 0.
void PlanSvrgNoise(Plan& p, int64_t m, bool doubling, double paper_sigma,
                   const std::string& paper_rule);

// The epoch length m of the first epoch, recovered from a plan made by
// PlanSvrgNoise (noisy_steps = SvrgTotalSteps(iterations, m, doubling)).
int64_t SvrgEpochLength(const Plan& p, bool doubling);

// Runs the plan: Algorithm 1 (doubling = false: every epoch has m steps and
// starts from the snapshot) or Algorithm 2 (doubling = true: m_s = 2^s m,
// the next epoch starts from the last inner iterate). Inner step:
// x <- prox_{eta r}(x - eta v) with r = l1 ||.||_1 + l2/2 ||.||^2. Returns
// x~_T, the mean of the last epoch's inner iterates.
Eigen::VectorXd RunSvrg(const Plan& p, const Objective& objective, SecureRng& rng, bool doubling);

// prox of t (l1 ||.||_1 + l2/2 ||.||^2): soft thresholding at t l1, then
// division by 1 + t l2.
void ProxElasticNet(Eigen::VectorXd& w, double t, double l1, double l2);

}  // namespace dperm
