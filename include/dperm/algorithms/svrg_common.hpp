// What DP-SVRG and DP-SVRG++ (Wang, Ye & Xu, NIPS 2017, Algorithms 1 and 2;
// seeds/003) share: the privacy analysis of a noisy variance-reduced inner
// step (derivation at the top of src/core/svrg_common.cpp), its noise
// calibration, the option checks, and the training loop.
#pragma once
#include "dperm/util/errors.hpp"
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

// The public quantities that fix the privacy of K noisy inner steps
// v = grad F(x~) + (1/b) sum_{i in batch} [grad f_i(x) - grad f_i(x~)] + u,
// u ~ N(0, sigma^2 I), split as u = u1 + u2 with Var u1 = f sigma^2 and
// Var u2 = (1 - f) sigma^2.
struct SvrgSteps {
  int64_t n = 0;       // rows
  int64_t batch = 1;   // b: rows per inner step, uniformly without replacement
  int64_t steps = 0;   // K: noisy inner steps over the whole run
  double snapshot_sensitivity = 0;  // 2G/n: replace-one change of grad F(x~)
  double row_range = 0;  // D: max ||grad f_i(x) - grad f_i(y)|| for one row
};

// D = R (sup f' - inf f') for one row: logistic R (f' lies between 0 and -y,
// |y| = 1), Huber 2 huber_delta R, softmax sqrt(2) R (||p - p'|| <= sqrt(2)
// for two probability vectors). At most 2L; derivation in svrg_common.cpp.
double SvrgRowRange(const Plan& p);

// One sampled step's RDP on LedgerOrders() at multiplier z2 = sigma2 / C
// (C = D/b, the per-row contribution; a replaced row moves the batch mean
// by 2C): RdpWorGaussianTight(b/n, z2, alpha), the dominating pair of Zhu,
// Dong & Wang 2022, Prop. 30 (rdp_wor.hpp), memoised per (gamma, z2).
std::vector<double> SvrgSampledStepRdp(double gamma, double z2);

// The RDP curve on LedgerOrders() of the K steps at total noise sigma and
// snapshot fraction f in (0, 1): K [alpha (2G/n)^2 / (2 f sigma^2)
// (Mironov 2017, Prop. 7) + SvrgSampledStepRdp(b/n, sqrt(1 - f) sigma b / D)]
// (composition: Mironov 2017, Prop. 1).
std::vector<double> SvrgRdpCurve(const SvrgSteps& s, double sigma, double fraction);

// The smallest sigma (to ~1e-12 relative, never below) whose SvrgRdpCurve
// at `fraction` converts to epsilon at delta (Balle et al. 2020, Thm 21).
double SvrgCalibrateSigma(const SvrgSteps& s, double fraction, double epsilon,
                          double delta);

// The fraction f minimising SvrgCalibrateSigma (a search over the sampled
// part's multiplier, svrg_common.cpp), and SvrgCalibrateSigma there.
struct SvrgSplit {
  double fraction = 0;
  double sigma = 0;
};
SvrgSplit SvrgOptimalSplit(const SvrgSteps& s, double epsilon, double delta);

// The batch search's prediction of SvrgOptimalSplit's sigma (utility only):
// the same search on its grid only, with the Poisson-subsampled Gaussian's
// RDP (cheaper; a lower bound of the step's RDP) in place of
// SvrgSampledStepRdp: 0-8% below the calibrated sigma at the BANK
// settings (or a hair above it, the grid being coarser than the search).
double SvrgPredictedSigma(const SvrgSteps& s, double epsilon, double delta);

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
// expected to leave (svrg_common.cpp, "THE BATCH SIZE").
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
Eigen::VectorXd RunSvrg(const Plan& p, const Objective& objective,
                        SecureRng& rng, bool doubling);

// prox of t (l1 ||.||_1 + l2/2 ||.||^2): soft thresholding at t l1, then
// division by 1 + t l2.
void ProxElasticNet(Eigen::VectorXd& w, double t, double l1, double l2);

}  // namespace dperm
