// Placeholder: not implemented yet.
#include "dperm/dp_sgd.hpp"

namespace dperm {

Plan DpSgd::MakePlan(const Options&, LossKind, int64_t, int) const {
  ThrowInvalid("algorithm dp_sgd is not implemented yet");
}

Eigen::VectorXd DpSgd::Train(const Plan&, const Objective&, SecureRng&) const {
  throw Error(ErrorKind::kInternal, "algorithm dp_sgd is not implemented yet");
}

}  // namespace dperm
