// The core's entry point for training a planned release over rows in
// memory (train_model.cpp); the plan comes from plan_release.hpp. Plain
// types in, plain types out (the pgRouting "driver" shape).
#pragma once
#include "dperm/util/errors.hpp"
#include "dperm/losses/objective.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"

#include <memory>
#include <vector>

namespace dperm {

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
std::vector<double> TrainModel(const Plan& plan, const double* rows, SecureRng& rng,
                               std::vector<double>* offset = nullptr);

}  // namespace dperm
