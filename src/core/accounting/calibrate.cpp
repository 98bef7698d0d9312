// Noise calibration by root finding on log σ.
#include "dperm/accounting/calibrate.hpp"

#include "dperm/util/numeric_util.hpp"
#include "dperm/accounting/rdp.hpp"

#include <boost/math/tools/toms748_solve.hpp>

#include <cmath>
#include <exception>
#include <limits>
#include <string>

namespace dperm {
namespace {

constexpr double kMinSigma = 1e-6;
constexpr double kMaxSigma = 1e6;

// Stop when the bracket on log σ is this narrow (σ known to ~1e-14 relative).
constexpr double kLogSigmaTol = 1e-14;

}  // namespace

// ε(σ) is non-increasing, so f(x) = ε(e^x) − target has one sign change.
// Bracket it from σ = 1 with steps on log σ that double each time, refine
// with TOMS 748 (Alefeld, Potra & Shi 1995) keeping f(hi) ≤ 0, then step
// σ up until ε(σ) ≤ target holds as computed: never on the unsafe side.
double CalibrateNoiseMultiplier(const std::function<double(double sigma)>& epsilon_of_sigma,
                                double target_epsilon) {
  if (!std::isfinite(target_epsilon) || !(target_epsilon > 0.0))
    ThrowInvalid("target epsilon must be a finite number greater than 0, got " +
                 Num(target_epsilon));
  if (!epsilon_of_sigma)
    throw Error(ErrorKind::kInternal, "calibration without an epsilon function");
  auto excess = [&](double log_sigma) {
    const double sigma = std::exp(log_sigma);
    const double eps = epsilon_of_sigma(sigma);
    if (std::isnan(eps))
      throw Error(ErrorKind::kInternal, "epsilon is NaN at noise multiplier " + Num(sigma));
    return eps - target_epsilon;
  };
  const double log_min = std::log(kMinSigma), log_max = std::log(kMaxSigma);
  double lo = 0.0, hi = 0.0;
  double f_lo = excess(0.0), f_hi = f_lo;
  double step = std::log(2.0);
  if (f_hi > 0.0) {  // grow hi until ε(hi) ≤ target
    while (f_hi > 0.0) {
      if (hi >= log_max)
        ThrowInvalid("target epsilon " + Num(target_epsilon) +
                         " is not reached by any noise multiplier up to " + Num(kMaxSigma) +
                         " (epsilon there is " + Num(f_hi + target_epsilon) + ")",
                     "raise the target epsilon or delta, or lower the "
                     "sampling rate or the number of steps");
      lo = hi;
      f_lo = f_hi;
      hi = std::min(hi + step, log_max);
      step *= 2.0;
      f_hi = excess(hi);
    }
  } else {  // shrink lo until ε(lo) > target
    while (!(f_lo > 0.0)) {
      if (lo <= log_min)
        ThrowInvalid("target epsilon " + Num(target_epsilon) +
                         " is already met at noise multiplier " + Num(kMinSigma) +
                         ", so it does not determine the noise",
                     "check the epsilon function and the target");
      hi = lo;
      f_hi = f_lo;
      lo = std::max(lo - step, log_min);
      step *= 2.0;
      f_lo = excess(lo);
    }
  }
  double log_sigma = hi;
  if (f_hi < 0.0) {
    std::uintmax_t max_iter = 200;
    auto narrow = [](double a, double b) { return std::fabs(b - a) <= kLogSigmaTol; };
    try {
      log_sigma = boost::math::tools::toms748_solve(excess, lo, hi, f_lo, f_hi, narrow, max_iter,
                                                    ThrowPolicy())
                      .second;  // the upper end: ε ≤ target there
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw Error(ErrorKind::kInternal,
                  std::string("noise calibration root finding failed: ") + e.what());
    }
  }
  // Privacy guard: never return a σ whose computed ε exceeds the target.
  double sigma = std::exp(log_sigma);
  double nudge = sigma * std::numeric_limits<double>::epsilon();
  for (int i = 0; !(epsilon_of_sigma(sigma) <= target_epsilon); ++i) {
    if (i > 200 || !std::isfinite(sigma + nudge))
      throw Error(ErrorKind::kInternal, "calibrated noise could not be made safe");
    sigma += nudge;
    nudge *= 2.0;
  }
  return sigma;
}

// CalibrateNoiseMultiplier on EpsilonPoissonSubsampledGaussianRdp.
double CalibratePoissonSubsampledGaussianRdp(double q, std::int64_t steps, double target_epsilon,
                                             double delta) {
  if (!(q > 0.0 && q <= 1.0)) ThrowInvalid("sampling rate q must be in (0, 1], got " + Num(q));
  if (steps < 1) ThrowInvalid("steps must be at least 1, got " + std::to_string(steps));
  if (!(delta > 0.0 && delta < 1.0))
    ThrowInvalid("delta must be in the open interval (0, 1), got " + Num(delta));
  return CalibrateNoiseMultiplier(
      [&](double sigma) { return EpsilonPoissonSubsampledGaussianRdp(q, sigma, steps, delta); },
      target_epsilon);
}

}  // namespace dperm
