// Refusals of a release from public inputs only (release_checks.cpp),
// shared by the aggregates, dperm.train and the named models.
#pragma once

#include "dperm/options/options.hpp"
#include "base/boundary.hpp"

namespace dperm::pg {

// Refuses a release whose coefficient count (from the options and the
// features' dimension d, the public shape) exceeds dperm.max_coefficients.
void CheckCoefficientCount(LossKind loss, int d, const Options& options);

// Refuses the seed option unless dperm.allow_seed is on.
void CheckSeedAllowed(const Options& options);

// Refuses a release charged to a budgeted or protected relation whose
// options declare no d (SQLSTATE 22023), naming `aggregate` (or dperm.train).
[[noreturn]] void RaiseUndeclaredDimension(const char* aggregate);

}  // namespace dperm::pg
