// Placeholder: not implemented yet.
#include "dperm/dp_svrg_pp.hpp"

namespace dperm {

Plan DpSvrgPp::MakePlan(const Options& options, LossKind, int64_t, int) const {
  ThrowInvalid(std::string("algorithm ") + AlgorithmName(options.algorithm) +
               " is not implemented yet");
}

Eigen::VectorXd DpSvrgPp::Train(const Plan&, const Objective&, SecureRng&) const {
  throw Error(ErrorKind::kInternal, "algorithm is not implemented yet");
}

}  // namespace dperm
