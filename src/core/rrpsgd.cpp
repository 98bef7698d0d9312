// Placeholder: not implemented yet.
#include "dperm/rrpsgd.hpp"

namespace dperm {

Plan Rrpsgd::MakePlan(const Options&, LossKind, int64_t, int) const {
  ThrowInvalid("algorithm rrpsgd is not implemented yet");
}

Eigen::VectorXd Rrpsgd::Train(const Plan&, const Objective&, SecureRng&) const {
  throw Error(ErrorKind::kInternal, "algorithm rrpsgd is not implemented yet");
}

}  // namespace dperm
