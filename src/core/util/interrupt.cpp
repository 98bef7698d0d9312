// The interrupt probe the boundary installs (src/pg/module.cpp) and the check
// long loops call.
#include "dperm/util/interrupt.hpp"

namespace dperm {

namespace {
InterruptProbe g_probe = nullptr;
}

namespace detail {
thread_local uint64_t work_since_probe = 0;
IterationHook iteration_hook = nullptr;
}  // namespace detail

void SetInterruptProbe(InterruptProbe probe) { g_probe = probe; }

void SetIterationHook(IterationHook hook) { detail::iteration_hook = hook; }

void CheckInterrupt() {
  detail::work_since_probe = 0;
  if (g_probe != nullptr && g_probe())
    throw Error(ErrorKind::kCancelled, "training was interrupted");
}

}  // namespace dperm
