// Helpers shared by the core's unit tests.
#pragma once
#include "dperm/options.hpp"

namespace dperm::testing {

// Options of an output_gd release with the settings the tests vary.
inline Options Opts(double epsilon, double delta, double l2, bool fit_intercept = true,
                    Accountant accountant = Accountant::kTight) {
  Options o;
  o.epsilon = epsilon;
  o.delta = delta;
  o.l2 = l2;
  o.fit_intercept = fit_intercept;
  o.accountant = accountant;
  return o;
}

}  // namespace dperm::testing
