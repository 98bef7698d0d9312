// The mechanism registry, losses by kind, and cooperative cancellation.
#include "dperm/mechanism.hpp"

#include "dperm/output_gd.hpp"

namespace dperm {

const Mechanism& MechanismFor(Algorithm algorithm) {
  static const OutputGd output_gd;
  switch (algorithm) {
    case Algorithm::kOutputGd: return output_gd;
  }
  throw Error(ErrorKind::kInternal, "unknown algorithm");
}

std::unique_ptr<Loss> MakeLoss(LossKind kind, const Options& options) {
  if (kind == LossKind::kLogistic) return std::make_unique<LogisticLoss>();
  return std::make_unique<HuberLoss>(options.huber_delta);
}

namespace {
InterruptProbe g_probe = nullptr;
}

void SetInterruptProbe(InterruptProbe probe) { g_probe = probe; }

void CheckInterrupt() {
  if (g_probe != nullptr && g_probe())
    throw Error(ErrorKind::kCancelled, "training was interrupted");
}

}  // namespace dperm
