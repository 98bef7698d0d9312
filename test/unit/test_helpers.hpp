// Helpers shared by the core's unit tests.
#pragma once
#include "dperm/noise.hpp"
#include "dperm/options.hpp"
#include "dperm/plan.hpp"

#include <cmath>
#include <gtest/gtest.h>

namespace dperm::testing {

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
// term is sqrt(dim) grid and at most 2^-10 of the sensitivity it inflates
// (unless sigma is over MaxGridUnits of it), and the noise keeps the ratio to
// the sensitivity it was calibrated for. Returns the noise scale before
// inflation: noise_scale (Delta - sqrt(dim) g)/Delta.
inline double ExpectSnappedNoise(const Plan& p) {
  EXPECT_GT(p.grid, 0.0);
  int exponent = 0;
  EXPECT_EQ(std::frexp(p.grid, &exponent), 0.5) << "grid " << p.grid << " is not a power of two";
  EXPECT_DOUBLE_EQ(p.rounding_inflation, std::sqrt(double(p.dim)) * p.grid);
  const double base = p.sensitivity - p.rounding_inflation;
  EXPECT_LE(p.rounding_inflation, base / 1024 * (1 + 1e-12)) << "grid coarser than 2^-10 of the sensitivity";
  EXPECT_LE(p.noise_scale / p.grid, MaxGridUnits(p.noise));
  EXPECT_NE(p.sampler.find("discrete"), std::string::npos) << p.sampler;
  return p.noise_scale * base / p.sensitivity;
}

}  // namespace dperm::testing
