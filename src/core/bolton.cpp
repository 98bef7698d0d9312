// Placeholder: not implemented yet.
#include "dperm/bolton.hpp"

namespace dperm {

Plan Bolton::MakePlan(const Options&, LossKind, int64_t, int) const {
  ThrowInvalid("algorithm bolton is not implemented yet");
}

Eigen::VectorXd Bolton::Train(const Plan&, const Objective&, SecureRng&) const {
  throw Error(ErrorKind::kInternal, "algorithm bolton is not implemented yet");
}

}  // namespace dperm
