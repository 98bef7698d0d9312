// Message helpers of the core (errors.hpp).
#include "dperm/util/errors.hpp"

#include <sstream>

namespace dperm {

std::string FormatNumber(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

}  // namespace dperm
