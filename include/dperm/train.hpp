// The core's entry points for the boundary: plan a release, then train it.
// Plain types in, plain types out (the pgRouting "driver" shape).
#pragma once
#include "dperm/core.hpp"
#include "dperm/objective.hpp"
#include "dperm/plan.hpp"
#include "dperm/random.hpp"

#include <memory>
#include <vector>

namespace dperm {

// The algorithm dperm picks when `algorithm` is not given, from public
// options only, and a sentence saying why. The choice follows the
// benchmark in docs/algorithms.md (README, "Choosing an algorithm"):
//   l1 > 0            -> dp_gd (the only proximal method that is competitive)
//   logistic, delta > 0, 0 < n l2 <= 100 (and objective's fixed schedule
//                        within 2e8 row gradients)
//                     -> objective (best held-out AUC at small l2,
//                        docs/heldout.md: output perturbation's noise ~1/(n l2)
//                        leaves a near-constant model there)
//   l2 > 0            -> bolton (lowest excess risk on all five datasets)
//   l2 = 0, delta > 0 -> dp_gd (lowest on four of five)
//   l2 = 0, delta = 0 -> output_gd (dp_gd needs delta > 0)
Algorithm DefaultAlgorithm(LossKind loss, const Options& options, int64_t n, int d,
                           std::string* why);

// The plan of the options' algorithm (or the default one) for n rows of d
// features; with fit_intercept (and intercept_offset), stage 0 of
// offset.hpp takes epsilon0 = plan.offset.epsilon and the mechanism is
// planned at epsilon - epsilon0.
Plan PlanRelease(const Options& options, LossKind loss, int64_t n, int d);

// Streaming mode (dperm.train, issue 12 item 3): every iteration is a pass
// over the relation, so the default's number of passes must not grow with
// n. The default plan when no algorithm is given:
//   l1 > 0            -> dp_gd
//   l2 > 0            -> output_gd (bolton and objective read rows one by
//                        one; output_gd's tight contraction needs few passes)
//   l2 = 0, delta > 0 -> dp_gd
//   l2 = 0, delta = 0 -> output_gd
// with, unless `iterations` is given, T = min(the algorithm's own rule,
// kStreamingMaxPasses); the plan's noise follows its T as for any given T.
const int64_t kStreamingMaxPasses = 100;
Plan PlanStreamingDefault(const Options& options, LossKind loss, int64_t n, int d);

// The plan's objective over rows viewed in place (n rows of stride d + 1,
// the d clipped features followed by the label or class index); with an
// offset b0 (offset.hpp: one value, or K for softmax) the margins are
// shifted by it.
std::unique_ptr<Objective> MakeObjective(const Plan& plan, const double* rows,
                                         const std::vector<double>& offset = {});

// Trains by the plan over rows viewed in place: n rows of stride d + 1, the
// d clipped features followed by the label. Returns the released
// coefficients (feature weights, then the intercept when fitted). With an
// offset stage in the plan, stage 0 draws first (ReleaseOffset), the
// intercept released is w_int + b0, and b0 is stored in *offset when given.
std::vector<double> TrainModel(const Plan& plan, const double* rows,
                               SecureRng& rng, std::vector<double>* offset = nullptr);

}  // namespace dperm
