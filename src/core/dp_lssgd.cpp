// Placeholder: not implemented yet.
#include "dperm/dp_lssgd.hpp"

namespace dperm {

Plan DpLssgd::MakePlan(const Options&, LossKind, int64_t, int) const {
  ThrowInvalid("algorithm dp_lssgd is not implemented yet");
}

Eigen::VectorXd DpLssgd::Train(const Plan&, const Objective&, SecureRng&) const {
  throw Error(ErrorKind::kInternal, "algorithm dp_lssgd is not implemented yet");
}

}  // namespace dperm
