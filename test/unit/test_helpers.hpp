// Helpers shared by the core's unit tests.
#pragma once
#include "dperm/accounting/budget.hpp"
#include "dperm/noise/noise.hpp"
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/accounting/pld_wor.hpp"
#include "dperm/accounting/rdp.hpp"
#include "dperm/algorithms/svrg_common.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/planning/release_curve.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>
#include <utility>

#include <gtest/gtest.h>

namespace dperm::testing {

// An option entry `key => v` as the SQL layer hands ParseOptions a number.
inline OptionEntry NumberOption(const char* key, double v) {
  OptionEntry e;
  e.key = key;
  e.kind = OptionEntry::Kind::kNumber;
  e.number = v;
  return e;
}

// Options of an output_gd release with the settings the tests vary, and
// huber_delta = 1, the Huber scale the tests' constants are written for
// (PlanConstants.DefaultHuberDeltaFollowsTargetBound tests the default).
inline Options Opts(double epsilon, double delta, double l2, bool fit_intercept = true,
                    Accountant accountant = Accountant::kTight) {
  Options o;
  o.huber_delta = 1;
  o.epsilon = epsilon;
  o.delta = delta;
  o.l2 = l2;
  o.fit_intercept = fit_intercept;
  o.accountant = accountant;
  return o;
}

// A snapped plan (noise.hpp): the grid is a power of two, the rounding
// term is sqrt(dim) grid (plus the sums' sum_inflation, exact_sum.hpp) and at most 2^-10 of the sensitivity it inflates
// (unless sigma is over MaxGridUnits of it), and the noise keeps the ratio to
// the sensitivity it was calibrated for. Returns the noise scale before
// inflation: noise_scale (Delta - sqrt(dim) g)/Delta.
//
// Gradient steps (noise_bits > 0) use the rounded exact Gaussian instead:
// grid = noise_scale 2^-noise_bits, rounding term 2 sqrt(dim) grid (at most
// 2^-10 of the sensitivity), noise_scale >= multiplier C' (noise.hpp).
inline double ExpectSnappedNoise(const Plan& p) {
  EXPECT_GT(p.grid, 0.0);
  if (p.noise_bits > 0) {
    EXPECT_EQ(p.grid, std::ldexp(p.noise_scale, -p.noise_bits));
    EXPECT_GE(p.noise_bits, 10);
    const double base = p.sensitivity - p.rounding_inflation;
    if (p.mechanism_fields.Get(dperm::kNoiseFraction) == 0) {
      EXPECT_DOUBLE_EQ(p.rounding_inflation,
                       2 * std::sqrt(double(p.dim)) * p.grid + p.sum_inflation);
      EXPECT_LE(p.rounding_inflation, base / 1024 * (1 + 1e-12))
          << "grid coarser than 2^-10 of the sensitivity";
    }
    EXPECT_NE(p.sampler.find("exact Gaussian"), std::string::npos) << p.sampler;
    return p.noise_scale * base / p.sensitivity;
  }
  int exponent = 0;
  EXPECT_EQ(std::frexp(p.grid, &exponent), 0.5) << "grid " << p.grid << " is not a power of two";
  EXPECT_DOUBLE_EQ(p.rounding_inflation, std::sqrt(double(p.dim)) * p.grid + p.sum_inflation);
  const double base = p.sensitivity - p.rounding_inflation;
  EXPECT_LE(p.rounding_inflation, base / 1024 * (1 + 1e-12))
      << "grid coarser than 2^-10 of the sensitivity";
  EXPECT_LE(p.noise_scale / p.grid, MaxGridUnits(p.noise));
  EXPECT_NE(p.sampler.find("discrete"), std::string::npos) << p.sampler;
  return p.noise_scale * base / p.sensitivity;
}

// The (epsilon at the plan's delta) of a gradient-perturbation plan by the
// accountant that calibrated it (PlanGradientNoise): the without-replacement
// pair's PLD at the plan's multiplier, with the calibration's grid width, up
// to kWorPldMaxEpsilon; above it the ledger curve's RDP (WBK Thm 9). The
// ledger's curve itself (the pair's RDP) converts about 10% higher.
inline double PlanStepsEpsilon(const Plan& p) {
  const double eps = p.options.epsilon, delta = p.options.delta;
  if (eps > kWorPldMaxEpsilon) return RdpToEpsilon(LedgerOrders(), ReleaseRdpCurve(p), delta);
  return EpsilonWorGaussianPld(p.sampling_rate, p.noise_multiplier, p.noisy_steps, delta,
                               1e-3 * std::min(1.0, eps));
}

// Calls `call`, which must throw a dperm::Error of `kind` with a non-empty
// message containing `message_part` and a hint containing `hint_part` (an
// empty part matches any text). Anything else is a test failure. Returns the
// message ("" when none was thrown). Failures are reported at this file: give
// a loop's case with SCOPED_TRACE.
template <class Call>
std::string ExpectError(ErrorKind kind, Call&& call, const std::string& message_part = "",
                        const std::string& hint_part = "") {
  try {
    std::forward<Call>(call)();
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.kind(), kind) << "message: " << message;
    EXPECT_FALSE(message.empty());
    EXPECT_NE(message.find(message_part), std::string::npos)
        << "message: " << message << "\nexpected it to contain: " << message_part;
    EXPECT_NE(e.hint().find(hint_part), std::string::npos)
        << "hint: " << e.hint() << "\nexpected it to contain: " << hint_part;
    return message;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a std::exception, not a dperm::Error: " << e.what();
    return "";
  } catch (...) {
    ADD_FAILURE() << "threw something other than a dperm::Error";
    return "";
  }
  ADD_FAILURE() << "no error; expected one containing \"" << message_part << "\"";
  return "";
}

// ExpectError for the common case: a bad option or argument (SQLSTATE 22023).
template <class Call>
std::string ExpectInvalid(Call&& call, const std::string& message_part = "",
                          const std::string& hint_part = "") {
  return ExpectError(ErrorKind::kInvalidParameter, std::forward<Call>(call), message_part,
                     hint_part);
}

// The call PlanRelease(o, loss, n, d), for ExpectInvalid.
inline auto Planning(const Options& o, LossKind loss, int64_t n, int d) {
  return [=] { PlanRelease(o, loss, n, d); };
}

}  // namespace dperm::testing
