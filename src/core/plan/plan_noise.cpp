// A plan's noise (plan_noise.hpp): snapping, gradient steps' rounded exact
// Gaussian, the release, and the floor on delta.
#include "dperm/plan/plan_noise.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "dperm/noise/exact_normal.hpp"

namespace dperm {

void SnapPlan(Plan& p, double noise_per_sensitivity) {
  const double base = p.sensitivity;  // L2 sensitivity of the unrounded release
  const double root_dim = std::sqrt(double(p.dim));
  // A sensitivity that underflows to 0 comes from extreme public options
  // (e.g. step_size => 5e-324 makes a few steps move nothing): refused as
  // such while planning, before any charge. Anything else is a bug.
  if (base == 0)
    ThrowInvalid("the release's sensitivity underflows to 0 with these options",
                 "Use a larger step_size (or less extreme bounds).");
  if (!(base > 0) || !std::isfinite(base) || !(noise_per_sensitivity > 0) ||
      !std::isfinite(noise_per_sensitivity))
    throw Error(ErrorKind::kInternal, "SnapPlan: the plan has no sensitivity or noise");
  // scale/grid = noise_per_sensitivity (base/grid + sqrt(dim)) falls to
  // noise_per_sensitivity sqrt(dim) as the grid grows: below the cap some
  // grid fits, at or above it none does (pure epsilon-DP in many
  // coordinates at a small epsilon: sqrt(dim) sqrt(dim)/epsilon). Refused
  // while planning, from public quantities, before any charge.
  if (!(noise_per_sensitivity * root_dim < MaxGridUnits(p.noise))) {
    std::ostringstream msg;
    msg << "the noise for " << p.dim << " coordinates at epsilon " << p.options.epsilon
        << " is too wide for dperm's exact "
        << (p.noise == NoiseKind::kLaplace ? "discrete Laplace" : "discrete Gaussian")
        << " sampler (more than " << MaxGridUnits(p.noise)
        << " grid units per coordinate whatever the grid)";
    ThrowInvalid(
        msg.str(),
        p.noise == NoiseKind::kLaplace
            ? "Use a larger epsilon, fewer features or classes, or delta > 0 (Gaussian noise)."
            : "Use a larger epsilon, or fewer features or classes.");
  }
  double grid = SnapGrid(base, p.dim, noise_per_sensitivity * base, p.noise);
  double inflated = 0, scale = 0;
  for (;;) {
    // Rounding both neighbours' releases to the grid moves their difference
    // by at most sqrt(dim) grid in L2 (noise.hpp: |e_i - e'_i| <= grid).
    inflated = base + root_dim * grid;
    scale = noise_per_sensitivity * inflated;
    if (scale / grid <= MaxGridUnits(p.noise)) break;
    grid *= 2;
  }
  p.grid = grid;
  p.rounding_inflation = root_dim * grid;
  p.sensitivity = inflated;
  p.sensitivity_rule += " + sqrt(dim) grid (rounding to the grid)";
  p.noise_scale = scale;
  p.sampler =
      p.noise == NoiseKind::kLaplace
          ? "discrete Laplace per coordinate (Canonne, Kamath & Steinke 2020, Alg. 2), snapped to the grid"
          : "discrete Gaussian (Canonne, Kamath & Steinke 2020, Alg. 3), snapped to the grid";
}

void PlanExactGaussianSteps(Plan& p, double multiplier) {
  const double c = p.sensitivity / 2;  // per-row contribution before rounding
  if (c == 0)
    ThrowInvalid("the release's sensitivity underflows to 0 with these options",
                 "Use a larger step_size (or less extreme bounds).");
  if (!(c > 0) || !std::isfinite(c) || !(multiplier > 0) || !std::isfinite(multiplier))
    throw Error(ErrorKind::kInternal,
                "PlanExactGaussianSteps: the plan has no sensitivity or noise");
  const double root_dim = std::sqrt(double(p.dim));
  const int bits = ExactGaussianBits(multiplier, p.dim);
  // sigma = Dyadic(z C') with C' = C + sqrt(dim) sigma 2^-bits: a fixed
  // point, reached from C' = C upwards (the map is increasing with slope
  // z sqrt(dim) 2^-bits <= 2^-10 below the cap), stopped once sigma >= z C'.
  double contribution = c, sigma = 0;
  for (int i = 0;; ++i) {
    sigma = DyadicNoiseScale(multiplier * contribution);
    const double next = c + root_dim * std::ldexp(sigma, -bits);
    if (sigma >= multiplier * next) {
      contribution = next;
      break;
    }
    if (i > 200 || !std::isfinite(sigma))
      ThrowInvalid("the noise for " + std::to_string(p.dim) + " coordinates at epsilon " +
                       FormatNumber(p.options.epsilon) +
                       " is too wide for dperm's exact Gaussian sampler",
                   "Use a larger epsilon, or fewer features or classes.");
    contribution = next;
  }
  p.noise_bits = bits;
  p.noise_scale = sigma;
  p.grid = std::ldexp(sigma, -bits);
  p.rounding_inflation = 2 * root_dim * p.grid;
  p.sensitivity = 2 * contribution;
  p.sensitivity_rule += " + 2 sqrt(dim) grid (rounding to the grid)";
  p.noise_multiplier = sigma / contribution;
  p.sampler = "rounded exact Gaussian: grid * (round(v/grid) + round(2^" + std::to_string(bits) +
              " X)), X ~ N(0, I) drawn exactly (Karney 2016, Alg. N), grid = sigma 2^-" +
              std::to_string(bits) +
              ": a rounding of the continuous Gaussian mechanism (noise.hpp)";
}

void AddPlannedNoise(const Plan& plan, SecureRng& rng, double* v) {
  // noise_scale = 0 only in tests that measure the noiseless output (no
  // plan sets it): the release is left as it is, like GaussianNoise(0).
  if (plan.noise_scale == 0) return;
  if (!(plan.grid > 0) || !(plan.noise_scale > 0))
    throw Error(ErrorKind::kInternal, "AddPlannedNoise: the plan has no grid or no noise");
  if (plan.noise == NoiseKind::kGaussian && plan.noise_bits > 0) {
    SnapExactGaussian(rng, plan.noise_scale, plan.noise_bits, v, plan.dim);
  } else if (plan.noise == NoiseKind::kGaussian) {
    SnapDiscreteGaussian(rng, plan.grid, GridSigmaSq(plan.noise_scale, plan.grid), v, plan.dim);
  } else if (plan.noise == NoiseKind::kLaplace) {
    uint64_t t, s;
    GridLaplaceScale(plan.noise_scale, plan.grid, t, s);
    SnapDiscreteLaplace(rng, plan.grid, t, s, v, plan.dim);
  } else {
    throw Error(ErrorKind::kInternal, "AddPlannedNoise: no secure sampler for this noise");
  }
}

// ---- Sampler failure and the floor on delta (noise.hpp) -------------------
double PlannedNoiseDraws(const Plan& p) {
  // Generous: two noise vectors per noisy step (SVRG's two parts), two for
  // an output-perturbation plan (objective perturbation's b and its output
  // noise), and the stage-0 offset's and l2 selection's few draws besides.
  // A mechanism whose release has more coordinates than the model (ssp's
  // moments) states its draws as the figure "noise_draws".
  const double steps = double(std::max<int64_t>(p.noisy_steps, 1));
  return std::max(double(p.dim) * (2 * steps + 2), p.mechanism_fields.Get("noise_draws")) + 64;
}

double LogSamplerAbortBound(const Plan& p) {
  return std::log(PlannedNoiseDraws(p)) + std::log(kAbortPerDraw) - kAbortExponent;
}

double MaxShiftPerSigma(const Plan& p) {
  // Only the exact normal truncates (the discrete samplers are exact): the
  // rounded exact Gaussian of gradient steps, a step's mean gradient
  // against its sigma.
  double ratio = p.noise_bits > 0 && p.noise_scale > 0 ? p.sensitivity / p.noise_scale : 0;
  // SVRG's two parts carry sqrt(f) and sqrt(1 - f) of sigma, each against
  // at most the whole sensitivity (svrg_common.hpp, "noise_fraction").
  const double f = p.mechanism_fields.Get("noise_fraction");
  if (ratio > 0 && f > 0 && f < 1) ratio /= std::sqrt(std::min(f, 1 - f));
  // Objective perturbation's b: 2L against sigma_1
  // (objective_perturbation.hpp, "objective_noise").
  const double sigma1 = p.mechanism_fields.Get("objective_noise");
  if (sigma1 > 0) ratio = std::max(ratio, 2 * p.L / sigma1);
  return ratio;
}

void CheckDeltaFloor(const Plan& p) {
  const double delta = p.options.delta;
  if (!(delta > 0)) return;  // pure epsilon-DP: discrete Laplace only, exact
  const double log_share = std::log(delta) - kFailureShareBits * std::log(2.0);
  const bool abort_ok = LogSamplerAbortBound(p) <= log_share;
  // The truncation: outside the region where no noise draw of either
  // neighbour is within reach of its cap (mass <= 2 exp(-(c - s)^2/2) per
  // draw, s the shift per sigma), the two laws have the ideal densities
  // divided by one common normaliser (noise.hpp).
  const double gap = kTruncationSigmas - MaxShiftPerSigma(p);
  const bool tail_ok = gap > 0 && std::log(2 * PlannedNoiseDraws(p)) - gap * gap / 2 <= log_share;
  if (abort_ok && tail_ok) return;
  ThrowInvalid("delta " + FormatNumber(delta) + " is below this release's floor: its " +
                   FormatNumber(PlannedNoiseDraws(p)) +
                   " noise draws may fail with a probability that delta must dominate",
               "Use delta => 0 (pure epsilon-DP) or a larger delta; noise.hpp, SAMPLER FAILURE.");
}

}  // namespace dperm
