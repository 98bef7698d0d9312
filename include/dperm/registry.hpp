// The mechanism of each algorithm. Kept apart from mechanism.hpp, which every
// algorithm includes, so that the registry (which includes every algorithm)
// closes no include cycle.
#pragma once
#include "dperm/core.hpp"
#include "dperm/mechanism.hpp"

namespace dperm {

const Mechanism& MechanismFor(Algorithm algorithm);

}  // namespace dperm
