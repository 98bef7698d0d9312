// Cooperative cancellation: the boundary installs a function that reports a
// pending interrupt; long loops call CheckInterrupt(), which throws
// Error(kCancelled) so that the boundary can raise the real interrupt once no
// C++ object is alive. Depends on core.hpp only, so any module may probe.
#pragma once
#include "dperm/core.hpp"

namespace dperm {

using InterruptProbe = bool (*)();
void SetInterruptProbe(InterruptProbe probe);
void CheckInterrupt();

}  // namespace dperm
