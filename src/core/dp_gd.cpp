// Placeholder: not implemented yet.
#include "dperm/dp_gd.hpp"

namespace dperm {

Plan DpGd::MakePlan(const Options& options, LossKind, int64_t, int) const {
  ThrowInvalid(std::string("algorithm ") + AlgorithmName(options.algorithm) +
               " is not implemented yet");
}

Eigen::VectorXd DpGd::Train(const Plan&, const Objective&, SecureRng&) const {
  throw Error(ErrorKind::kInternal, "algorithm is not implemented yet");
}

}  // namespace dperm
