// A mechanism is one private training algorithm: it plans from public inputs
// and trains by following its plan. One class per file, declared with its
// options and losses in the same file as SpecOf<Algorithm::kX>()
// (registry.hpp); a new algorithm is a new file plus one line in
// algorithms.def. Training loops probe for interrupts (interrupt.hpp).
#pragma once
#include "dperm/util/errors.hpp"
#include "dperm/util/interrupt.hpp"
#include "dperm/losses/loss.hpp"
#include "dperm/losses/objective.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"

namespace dperm {

Plan PlanFor(Algorithm algorithm, const Options& options, LossKind loss, int64_t n, int d);

class Mechanism {
 public:
  virtual ~Mechanism() = default;
  // The released coefficients (feature weights, then the intercept).
  virtual Eigen::VectorXd Train(const Plan& plan, const Objective& objective,
                                SecureRng& rng) const = 0;

 private:
  // Everything training will do, from options and (n, d) only. Reached
  // through PlanFor only, which first checks the options against the
  // algorithm's spec (the options it takes, its losses, delta = 0).
  friend Plan PlanFor(Algorithm, const Options&, LossKind, int64_t, int);
  virtual Plan MakePlan(const Options& options, LossKind loss, int64_t n, int d) const = 0;
};

}  // namespace dperm
