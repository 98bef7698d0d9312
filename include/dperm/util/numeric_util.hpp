// Internal helpers shared by the core's numeric code (accountants and
// calibration): the number format of error messages and the Boost.Math error
// policy. Not part of dperm's interface; include only from src/core.
#pragma once

#include "dperm/util/errors.hpp"

#include <boost/math/policies/policy.hpp>

#include <sstream>
#include <string>

namespace dperm {

// Boost.Math errors become C++ exceptions (docs/style.md, MADlib: throwing policy).
using ThrowPolicy = boost::math::policies::policy<
    boost::math::policies::evaluation_error<boost::math::policies::throw_on_error>>;

// Formats a double with all significant digits for error messages.
inline std::string Num(double x) {
  std::ostringstream out;
  out.precision(17);
  out << x;
  return out.str();
}

}  // namespace dperm
