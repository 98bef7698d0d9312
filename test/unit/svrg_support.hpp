// Shared by the DP-SVRG tests (test_dp_svrg.cpp, test_dp_svrg_train.cpp):
// the options of a release and the public constants of each loss.
#pragma once

#include <cmath>

#include "dperm/options/options.hpp"
#include "test_helpers.hpp"

namespace dperm::testing::svrg {

using dperm::Algorithm;
using dperm::LossKind;
using dperm::Options;
inline Options SvrgOpts(Algorithm a, double epsilon, double delta, double l2, double l1 = 0,
                        LossKind loss = LossKind::kLogistic) {
  Options o = dperm::testing::Opts(epsilon, delta, l2, true);
  o.algorithm = a;
  o.l1 = l1;
  if (loss == LossKind::kSoftmax) o.classes = 3;
  return o;
}

inline const char* Name(LossKind loss) {
  return loss == LossKind::kLogistic ? "logistic" : loss == LossKind::kHuber ? "huber" : "softmax";
}

// Public constants for feature_bound 1 with an intercept (R = sqrt(2)),
// huber_delta 1: Lipschitz L, smoothness beta (plan_steps.hpp), and D, the
// range of one row's gradient difference (svrg_common.cpp).
struct Constants {
  double L, beta, D;
};
inline Constants ConstantsOf(LossKind loss) {
  const double R = std::sqrt(2.0);
  switch (loss) {
    case LossKind::kLogistic: return {R, R * R / 4, R};
    case LossKind::kHuber: return {R, R * R, 2 * R};
    case LossKind::kSoftmax: return {std::sqrt(2.0) * R, R * R / 2, std::sqrt(2.0) * R};
    default: break;  // a loss with no written-out constants: NaN fails every check
  }
  return {NAN, NAN, NAN};
}

}  // namespace dperm::testing::svrg
