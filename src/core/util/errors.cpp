// Message helpers of the core (errors.hpp).
#include "dperm/util/errors.hpp"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace dperm {

std::string FormatNumber(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

std::string ShortestNumber(double v) {
  char buf[32];
  for (int precision = 1; precision <= 17; precision++) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace dperm
