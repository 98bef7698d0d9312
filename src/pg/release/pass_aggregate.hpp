// The per-pass aggregates of streaming mode (pass_aggregate.cpp).
#pragma once

#include "base/boundary.hpp"

namespace dperm::pg {

// dperm.internal_pass: on only while dperm.train runs a streaming pass; the
// per-pass aggregates refuse without it (pass_aggregate.cpp).
extern bool g_internal_pass;

}  // namespace dperm::pg
