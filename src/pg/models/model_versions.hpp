// A named model's versions (model_versions.cpp): one training run of a
// model's specification, recorded as a new version.
#pragma once

#include "base/boundary.hpp"
#include "models/model_registry.hpp"

namespace dperm::pg {

// Runs `spec` once as the caller and records it as a new version (trained,
// or failed after its charge; a run refused before the charge leaves none)
// and returns it; raises the run's error. With `budget_refusal`, a budget
// refusal (DP001, nothing charged) is returned there, with -1, instead.
int64 RunVersion(const ModelSpec& spec, ErrorData** budget_refusal);

}  // namespace dperm::pg
