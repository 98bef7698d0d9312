// The count's share of a release's epsilon (unit_count.hpp: the rule and
// why the count is precise enough at it).
#include "dperm/planning/unit_count.hpp"

#include <algorithm>
#include <cmath>

namespace dperm {

double UnitCountEpsilon(double epsilon, int64_t units_estimate) {
  if (!(epsilon > 0) || !std::isfinite(epsilon)) return 0;
  double share = kUnitCountMaxShare * epsilon;
  if (units_estimate > 0)
    share = std::min(share, std::max(kUnitCountMinShare * epsilon,
                                     kUnitCountPerUnit / static_cast<double>(units_estimate)));
  // The model's part is epsilon - share, rounded once; the count's is the
  // share itself when the two add up to epsilon exactly (as asked: 0.1 and
  // 0.9 of 1), else the exact rest epsilon - model (Sterbenz: model is
  // within [epsilon / 2, epsilon]).
  const double model = epsilon - share;
  return model + share == epsilon ? share : epsilon - model;
}

const char* UnitCountRule(int64_t units_estimate) {
  return units_estimate <= 0
             ? "epsilon / 10 (no units_estimate)"
             : "min(epsilon / 10, max(epsilon / 100, 100 sqrt(2) / units_estimate))";
}

}  // namespace dperm
