// The interrupt probe the boundary installs (src/pg/module.cpp) and the check
// long loops call.
#include "dperm/interrupt.hpp"

namespace dperm {

namespace {
InterruptProbe g_probe = nullptr;
}

void SetInterruptProbe(InterruptProbe probe) { g_probe = probe; }

void CheckInterrupt() {
  if (g_probe != nullptr && g_probe())
    throw Error(ErrorKind::kCancelled, "training was interrupted");
}

}  // namespace dperm
