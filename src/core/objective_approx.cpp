// Placeholder: not implemented yet.
#include "dperm/objective_approx.hpp"

namespace dperm {

Plan ObjectiveApprox::MakePlan(const Options& options, LossKind, int64_t, int) const {
  ThrowInvalid(std::string("algorithm ") + AlgorithmName(options.algorithm) +
               " is not implemented yet");
}

Eigen::VectorXd ObjectiveApprox::Train(const Plan&, const Objective&, SecureRng&) const {
  throw Error(ErrorKind::kInternal, "algorithm is not implemented yet");
}

}  // namespace dperm
