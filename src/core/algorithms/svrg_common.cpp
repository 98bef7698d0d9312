// What DP-SVRG and DP-SVRG++ share besides the privacy accounting of their
// inner steps (svrg_accounting.cpp, which derives it): the per-row gradient
// range, the schedule's checks and batch choice, the noise plan (its
// calibrated split, snapped to the release grids), and the training loop
// ([WYX17] Algorithms 1 and 2).
#include "dperm/algorithms/svrg_common.hpp"

#include "dperm/algorithms/audit_seam.hpp"

#include <algorithm>
#include <boost/math/tools/toms748_solve.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>

#include "dperm/losses/loss_spec.hpp"
#include "dperm/accounting/budget.hpp"
#include "dperm/accounting/calibrate.hpp"
#include "dperm/noise/exact_normal.hpp"
#include "dperm/util/interrupt.hpp"
#include "dperm/noise/noise.hpp"
#include "dperm/plan/plan_steps.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/util/numeric_util.hpp"
#include "dperm/accounting/rdp.hpp"
#include "dperm/accounting/rdp_wor.hpp"

namespace dperm {
namespace {

// More inner steps than this are refused (2^40 ~ 1.1e12): beyond any run
// that finishes, and far from int64 overflow.
const int64_t kMaxTotalSteps = int64_t(1) << 40;

// SvrgChooseBatch: the inner steps of a default schedule read at most
// max(32 n, 2^22) rows (b K), a bound on the training time. The floor
// 2^22 serves small n with a large condition number beta/mu, whose epochs
// need m ~ 2 beta/mu steps whatever n.
const double kSvrgMaxInnerPasses = 32;
const double kSvrgMinInnerRows = 4194304;

}  // namespace

double SvrgRowRange(const Plan& p) {
  // The loss's bound on ||grad f_i(w) - grad f_i(w')|| (loss_spec.hpp):
  // R (logistic), 2 huber_delta R (Huber), sqrt(2) R (softmax).
  return LossConstantsFor(p.loss, p.options, p.R).gradient_range;
}

int64_t SvrgTotalSteps(int64_t epochs, int64_t m, bool doubling) {
  if (epochs < 1 || m < 1) throw Error(ErrorKind::kInternal, "SVRG schedule without steps");
  const std::string hint = "Use fewer iterations (epochs).";
  if (!doubling) {
    if (m > kMaxTotalSteps / epochs)
      ThrowInvalid("the plan would run more than " + std::to_string(kMaxTotalSteps) +
                       " inner steps (" + std::to_string(epochs) + " epochs of " +
                       std::to_string(m) + ")",
                   hint);
    return epochs * m;
  }
  // m (2 + 4 + ... + 2^T) = m (2^{T+1} - 2).
  if (epochs > 39 || m > kMaxTotalSteps / ((int64_t(1) << (epochs + 1)) - 2))
    ThrowInvalid("the plan would run more than " + std::to_string(kMaxTotalSteps) +
                     " inner steps (" + std::to_string(epochs) + " doubling epochs, the first of " +
                     std::to_string(2 * m) + ")",
                 hint);
  return m * ((int64_t(1) << (epochs + 1)) - 2);
}

void SvrgSpec(AlgorithmSpec& s) {
  s.options = {"l1", "iterations", "step_size", "batch_size"};
  s.refusals = {{"radius", "it takes proximal steps, not projections onto a ball"}};
  s.needs_delta = "it adds Gaussian noise to every inner step";
  // RunSvrg: the snapshot, x, v, the two batch gradients, the mean, the
  // noisy snapshot gradient and the full gradient; a batch and the
  // sampler's n indices.
  s.model_vectors = 8;
  s.row_arrays = 2;
}

int64_t SvrgBatch(const Options& o, int64_t n, Algorithm a) {
  if (o.batch_size > n)
    ThrowInvalid(std::string("batch_size ") + std::to_string(o.batch_size) +
                 " exceeds the number of rows n = " + std::to_string(n) + " (algorithm " +
                 AlgorithmName(a) + ")");
  return o.batch_size;
}

double SvrgNoiseError(const Plan& p, bool doubling, int64_t batch, const SvrgCandidate& c) {
  SvrgSteps s;
  s.n = p.n;
  s.batch = batch;
  s.steps = SvrgTotalSteps(c.epochs, c.m, doubling);
  s.snapshot_sensitivity = 2 * (p.L + p.sum_slack) / double(p.n);
  s.row_range = SvrgRowRange(p) + 2 * p.sum_slack;
  double sigma;
  try {
    sigma = SvrgPredictedSigma(s, p.options.epsilon, p.options.delta);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kInvalidParameter) throw;
    return std::numeric_limits<double>::infinity();  // epsilon not reachable at this b
  }
  return c.noise_weight * sigma * sigma * double(p.dim);
}

SvrgBatchChoice SvrgChooseBatch(const Plan& p, bool doubling,
                                const std::function<SvrgCandidate(int64_t)>& schedule) {
  SvrgBatchChoice best;
  best.noise_error = std::numeric_limits<double>::infinity();
  for (int64_t b = 1; b <= p.n; b *= 2) {
    const SvrgCandidate c = schedule(b);
    if (c.m < 1 || c.epochs < 1) continue;
    if (doubling && c.epochs > 39) continue;  // SvrgTotalSteps' limit
    if (!doubling && c.m > kMaxTotalSteps / c.epochs) continue;
    const double steps = double(SvrgTotalSteps(c.epochs, c.m, doubling));
    if (b > 1 && double(b) * steps > std::max(kSvrgMaxInnerPasses * double(p.n), kSvrgMinInnerRows))
      break;
    const double error = SvrgNoiseError(p, doubling, b, c);
    if (error < best.noise_error) best = {b, error};
  }
  return best;
}

double SvrgPartSigma(double sigma, double fraction, bool snapshot) {
  return DyadicNoiseScale(std::sqrt(snapshot ? fraction : 1 - fraction) * sigma);
}

void PlanSvrgNoise(Plan& p, int64_t m, bool doubling, double paper_sigma,
                   const std::string& paper_rule) {
  const Options& o = p.options;
  const int64_t steps = SvrgTotalSteps(p.iterations, m, doubling);
  SvrgSteps s;
  s.n = p.n;
  s.batch = p.batch_size;
  s.steps = steps;
  // (a): replace-one change of grad F; (b): D. Each with the sums'
  // rounding (exact_sum.hpp, (a)): the snapshot mean is within sqrt(dim)
  // sum_grid of the exact one (L + sum_slack), and the sampled part is a
  // difference of two exact batch sums (D + 2 sum_slack).
  s.snapshot_sensitivity = 2 * (p.L + p.sum_slack) / double(p.n);
  s.row_range = SvrgRowRange(p) + 2 * p.sum_slack;
  SvrgSplit split = SvrgOptimalSplit(s, o.epsilon, o.delta);
  // The step noise (noise.hpp, THE BRIDGE). The two parts are released as
  // u1 (round(v~/u1) + round(2^b X1)) and u2 (round(h_t/u2) + round(2^b X2)),
  // X1, X2 exact N(0, I), u_k = sigma_k 2^-b, sigma_1 = Dyadic(sqrt(f) sigma)
  // and sigma_2 = Dyadic(sqrt(1 - f) sigma) (SvrgPartSigma; rounded up, so
  // each part has at least its planned variance). Each is a rounding of a
  // continuous Gaussian mechanism, and their sum is a post-processing of the
  // pair, so the split argument above holds unchanged. Rounding moves each
  // part's replace-one change by at most 2 sqrt(dim) u_k: (a) 2G/n + 2
  // sqrt(dim) u1; (b) 2C + 2 sqrt(dim) u2, i.e. D + b sqrt(dim) u2 in place
  // of D. b is chosen from the unrounded quantities so that each term is at
  // most 2^-10 of the part's half-sensitivity (ExactGaussianBits). The split
  // f stays; sigma is recalibrated on the inflated sensitivities until the
  // curve at sigma meets (epsilon, delta). The curve only falls as sigma
  // grows even with the inflation: each part's ratio sigma_k / (c_k + k
  // sigma_k) increases with sigma_k; so a larger paper sigma is sound too.
  const double f = split.fraction;
  const double root_dim = std::sqrt(double(p.dim));
  const int bits = std::max(
      ExactGaussianBits(std::sqrt(f) * split.sigma / (s.snapshot_sensitivity / 2), p.dim),
      ExactGaussianBits(std::sqrt(1 - f) * split.sigma * double(s.batch) / s.row_range, p.dim));
  SvrgSteps snapped = s;
  auto inflate = [&](double sig) {
    const double u1 = std::ldexp(SvrgPartSigma(sig, f, true), -bits);
    const double u2 = std::ldexp(SvrgPartSigma(sig, f, false), -bits);
    snapped.snapshot_sensitivity = s.snapshot_sensitivity + 2 * root_dim * u1;
    snapped.row_range = s.row_range + double(s.batch) * root_dim * u2;
  };
  double sigma = split.sigma;
  for (int i = 0;; ++i) {
    inflate(sigma);
    const double need = SvrgCalibrateSigma(snapped, f, o.epsilon, o.delta);
    if (need <= sigma) break;
    if (i > 50) throw Error(ErrorKind::kInternal, "SVRG plan: the rounded sigma does not settle");
    sigma = need * (1 + std::ldexp(1.0, -20));  // overshoot a little: settles in a step or two
  }
  p.noise_rule =
      "smallest sigma whose RDP over all inner steps, with sigma^2 split " + FormatNumber(f) +
      " : " + FormatNumber(1 - f) +
      " between the snapshot gradient (Gaussian, Mironov 2017 Prop. 7) and the "
      "sampled gradient difference (a batch without replacement: the dominating pair of "
      "Zhu, Dong & Wang 2022, Prop. 30; RDP composition, Mironov 2017 Prop. 1), "
      "gives (epsilon, delta) at the rounded sensitivities; derivation in svrg_accounting.hpp";
  if (p.accountant == Accountant::kPaper) {
    if (paper_sigma >= sigma) {
      sigma = paper_sigma;
      inflate(sigma);
      p.noise_rule = paper_rule;
    } else {
      AddNote(
          p,
          "the paper's sigma " + FormatNumber(paper_sigma) +
              " does not reach (epsilon, delta) under dperm's accountant; the calibrated sigma is used");
    }
  }
  p.rdp_curve = SvrgRdpCurve(snapped, sigma, f);
  p.mechanism_fields.Set(kNoiseFraction, f);
  p.noise_bits = bits;
  p.grid = std::ldexp(SvrgPartSigma(sigma, f, false), -bits);  // the sampled part's grid
  p.sum_inflation = 4 * p.sum_slack / double(p.batch_size) + 2 * p.sum_slack / double(p.n);
  p.rounding_inflation =
      2 * root_dim * (p.grid + std::ldexp(SvrgPartSigma(sigma, f, true), -bits)) + p.sum_inflation;
  p.sampler =
      "two independent rounded exact Gaussians (Karney 2016, Alg. N; noise.hpp), of scales "
      "Dyadic(sqrt(f) sigma) and Dyadic(sqrt(1 - f) sigma), for the snapshot and the sampled part, "
      "each on its grid sigma_part 2^-" +
      std::to_string(bits) + " (the sampled part's is `grid`)";
  p.noisy_steps = steps;
  p.sampling = p.batch_size == p.n ? Sampling::kFullBatch : Sampling::kWithoutReplacement;
  p.sampling_rate = double(p.batch_size) / double(p.n);
  // The largest change of one step's v (before noise) under replace-one:
  // 2G/n through the snapshot plus 2D/b through the sampled rows.
  p.sensitivity = 2 * snapped.row_range / double(p.batch_size) + snapped.snapshot_sensitivity;
  p.sensitivity_rule =
      "2 D / batch_size + 2 L / n: a replaced row moves the snapshot gradient by 2L/n "
      "and, when sampled, the batch's gradient difference by 2D/b (D = " +
      FormatNumber(s.row_range) +
      ", the range of one row's gradient difference)"
      " + 2 sqrt(dim) (u1 + u2) (each part rounded to its grid)";
  p.noise = NoiseKind::kGaussian;
  p.noise_scale = sigma;
  p.noise_multiplier = sigma / (p.sensitivity / 2);
  p.expected_noise_sq = ExpectedNoiseSq(NoiseKind::kGaussian, p.dim, sigma);
  if (!std::isfinite(p.noise_scale) || !std::isfinite(p.expected_noise_sq))
    ThrowInvalid("epsilon " + FormatNumber(o.epsilon) + " is too small: the noise scale overflows",
                 "Use a larger epsilon.");
  const double evaluations =
      double(p.iterations) * double(p.n) + 2 * double(p.batch_size) * double(steps);
  AddNote(p, std::to_string(p.iterations) + " epochs, epoch length m = " + std::to_string(m) +
                 (doubling ? " doubling (m_s = 2^s m)" : "") + ", " + std::to_string(steps) +
                 " noisy inner steps of " + std::to_string(p.batch_size) +
                 (p.batch_size == 1 ? " row" : " rows") + "; gradient evaluations: " +
                 FormatNumber(evaluations) + " (T n for the snapshots + 2 b K inner)");
}

int64_t SvrgEpochLength(const Plan& p, bool doubling) {
  const int64_t per_m = SvrgTotalSteps(p.iterations, 1, doubling);
  if (p.noisy_steps < per_m || p.noisy_steps % per_m != 0)
    throw Error(ErrorKind::kInternal, "SVRG plan: noisy_steps does not match the epochs");
  return p.noisy_steps / per_m;
}

void ProxElasticNet(Eigen::VectorXd& w, double t, double l1, double l2) {
  ProxL1(w, t * l1);
  if (l2 > 0) w /= 1 + t * l2;
}

Eigen::VectorXd RunSvrg(const Plan& p, const Objective& objective, SecureRng& rng, bool doubling) {
  const int64_t n = objective.n();
  const int64_t b = p.batch_size;
  if (n != p.n || b < 1 || b > n || objective.dim() != p.dim)
    throw Error(ErrorKind::kInternal, "SVRG plan does not match the data");
  const int64_t m = SvrgEpochLength(p, doubling);
  const double eta = p.step_size;
  const double sigma = p.noise_scale;
  const double l1 = objective.l1(), l2 = objective.l2();
  const int dim = p.dim;
  Eigen::VectorXd snapshot = Eigen::VectorXd::Zero(dim);  // x~_0 = 0
  Eigen::VectorXd x = snapshot;
  Eigen::VectorXd v(dim), at_x(dim), at_snapshot(dim), mean(dim), noisy_full(dim);
  // The two parts' noise scales (PlanSvrgNoise's split).
  double snapshot_sigma = 0, sampled_sigma = 0;
  if (sigma > 0) {
    if (!(p.noise_bits > 0) ||
        !(p.mechanism_fields.Get(kNoiseFraction) > 0 && p.mechanism_fields.Get(kNoiseFraction) < 1))
      throw Error(ErrorKind::kInternal, "SVRG plan has no noise bits or no noise split");
    snapshot_sigma = SvrgPartSigma(sigma, p.mechanism_fields.Get(kNoiseFraction), true);
    sampled_sigma = SvrgPartSigma(sigma, p.mechanism_fields.Get(kNoiseFraction), false);
  }
  std::vector<int64_t> batch(size_t(b), 0), scratch;
  for (int64_t s = 1; s <= p.iterations; s++) {
    CheckInterrupt();
    ReportIterations(s - 1, p.iterations);
    Eigen::VectorXd full = objective.LossGradient(snapshot);  // v~ = grad F(x~)
    // Test-only white-box audit seam (audit_seam.hpp; null in production).
    AuditOracle(p.audit_seam, AuditSite::kSvrgSnapshot, nullptr, n, full.data(), dim);
    if (!doubling) x = snapshot;                    // Algorithm 1, line 4: x_0^s = x~
    const int64_t steps = doubling ? (m << s) : m;  // Algorithm 2: m_s = 2^s m
    mean.setZero();
    for (int64_t t = 0; t < steps; t++) {
      if ((t & 1023) == 1023) CheckInterrupt();
      if (b == 1) batch[0] = static_cast<int64_t>(rng.UniformIndex(uint64_t(n)));
      else SampleWithoutReplacement(rng, n, b, scratch, batch);
      at_x.setZero();
      at_snapshot.setZero();
      objective.AddRowGradients(x, batch.data(), b, at_x);
      objective.AddRowGradients(snapshot, batch.data(), b, at_snapshot);
      // v = grad f_i(x) - grad f_i(x~) + v~ + u (line 7; batch mean for b > 1),
      // u = u1 + u2 as the two snapped parts of PlanSvrgNoise.
      v = (at_x - at_snapshot) / double(b);
      AuditOracle(p.audit_seam, AuditSite::kSvrgSampled, batch.data(), b, v.data(), dim);
      noisy_full = full;
      if (sigma > 0) {
        SnapExactGaussian(rng, snapshot_sigma, p.noise_bits, noisy_full.data(), dim);
        SnapExactGaussian(rng, sampled_sigma, p.noise_bits, v.data(), dim);
      }
      AuditObserve(p.audit_seam, AuditSite::kSvrgSnapshot, noisy_full.data(), dim, snapshot_sigma);
      AuditObserve(p.audit_seam, AuditSite::kSvrgSampled, v.data(), dim, sampled_sigma);
      v += noisy_full;
      x -= eta * v;
      ProxElasticNet(x, eta, l1, l2);  // line 8: x = prox_{eta r}(x - eta v)
      mean += x;
    }
    snapshot = mean / double(steps);  // line 10: x~_s = mean of the inner iterates
    // Algorithm 2: the next epoch starts from x = x_{m_s}^s (kept as is).
  }
  ReportIterations(p.iterations, p.iterations);
  return snapshot;
}

}  // namespace dperm
