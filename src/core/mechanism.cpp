// The mechanism registry, losses by kind, and cooperative cancellation.
#include "dperm/mechanism.hpp"

#include "dperm/bolton.hpp"
#include "dperm/dp_lssgd.hpp"
#include "dperm/dp_sgd.hpp"
#include "dperm/output_gd.hpp"
#include "dperm/rrpsgd.hpp"

namespace dperm {

const Mechanism& MechanismFor(Algorithm algorithm) {
  static const OutputGd output_gd;
  static const DpSgd dp_sgd;
  static const Rrpsgd rrpsgd;
  static const DpLssgd dp_lssgd;
  static const Bolton bolton;
  switch (algorithm) {
    case Algorithm::kOutputGd: return output_gd;
    case Algorithm::kDpSgd: return dp_sgd;
    case Algorithm::kRrpsgd: return rrpsgd;
    case Algorithm::kDpLssgd: return dp_lssgd;
    case Algorithm::kBolton: return bolton;
  }
  throw Error(ErrorKind::kInternal, "unknown algorithm");
}

std::unique_ptr<Loss> MakeLoss(LossKind kind, const Options& options) {
  switch (kind) {
    case LossKind::kLogistic: return std::make_unique<LogisticLoss>();
    case LossKind::kHuber: return std::make_unique<HuberLoss>(options.huber_delta);
    case LossKind::kSoftmax: break;  // not a margin loss: see softmax.hpp
  }
  throw Error(ErrorKind::kInternal, "MakeLoss: no margin loss for softmax");
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
