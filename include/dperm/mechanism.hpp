// A mechanism is one private training algorithm: it plans from public inputs
// and trains by following its plan. One class per file; MechanismFor is the
// registry (a new algorithm is a new file plus one line there).
#pragma once
#include "dperm/core.hpp"
#include "dperm/loss.hpp"
#include "dperm/objective.hpp"
#include "dperm/plan.hpp"
#include "dperm/random.hpp"

#include <memory>

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

const Mechanism& MechanismFor(Algorithm algorithm);

// The margin loss of a binary model (logistic, Huber), from its options.
std::unique_ptr<Loss> MakeLoss(LossKind kind, const Options& options);

// Cooperative cancellation: the boundary installs a function that reports a
// pending interrupt; long loops call CheckInterrupt(), which throws
// Error(kCancelled) so that the boundary can raise the real interrupt once no
// C++ object is alive.
using InterruptProbe = bool (*)();
void SetInterruptProbe(InterruptProbe probe);
void CheckInterrupt();

}  // namespace dperm
