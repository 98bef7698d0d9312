// A mechanism is one private training algorithm: it plans from public inputs
// and trains by following its plan. One class per file; MechanismFor
// (registry.hpp) is the registry (a new algorithm is a new file plus one line
// there). Training loops probe for interrupts (interrupt.hpp).
#pragma once
#include "dperm/core.hpp"
#include "dperm/interrupt.hpp"
#include "dperm/loss.hpp"
#include "dperm/objective.hpp"
#include "dperm/plan.hpp"
#include "dperm/random.hpp"

namespace dperm {

class Mechanism {
 public:
  virtual ~Mechanism() = default;
  // Everything training will do, from options and (n, d) only.
  virtual Plan MakePlan(const Options& options, LossKind loss, int64_t n,
                        int d) const = 0;
  // The released coefficients (feature weights, then the intercept).
  virtual Eigen::VectorXd Train(const Plan& plan, const Objective& objective,
                                SecureRng& rng) const = 0;
};

}  // namespace dperm
