// The noisy mini-batch gradient loop shared by dp_sgd (ANSGD, [BFTT19]
// Algorithm 1) and dp_lssgd (DP-LSSGD, [LSSGD] Algorithm 1). Each
// mechanism's file states its own neighbouring relation, sampling,
// sensitivity and privacy cost; this loop only follows a plan:
//
//   w_0 = 0; for t = 0 .. T-1:
//     B_t  = plan.batch_size rows drawn uniformly without replacement
//            (all n rows when batch_size = n)
//     g_t  = 1/m sum_{i in B_t} grad f_i(w_t) + l2 w_t + z_t,
//            z_t: discrete Gaussian of scale noise_scale, the sum
//            snapped to plan.grid (plan_noise.hpp: AddPlannedNoise)
//     g_t <- A_sigma^{-1} g_t on each class block   (plan.ls_sigma > 0)
//     w_{t+1} = Proj_{||w|| <= radius}(w_t - step_size g_t)  (plan.radius > 0)
//   return (1/T) sum_{t=1..T} w_t
//
// T = plan.iterations = plan.noisy_steps. The only access to the rows is
// the batch mean gradient, which gets its noise before anything else reads
// it: smoothing, projection and averaging are post-processing.
#pragma once
#include "dperm/util/errors.hpp"
#include "dperm/losses/objective.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"

#include <Eigen/Dense>
#include <cstdint>
#include <functional>

namespace dperm {

// The average of the iterates w_1 .. w_T of the loop above.
Eigen::VectorXd NoisyMinibatchSgd(const Plan& plan, const Objective& objective, SecureRng& rng);

// The public bound D on the norm of the model used by both mechanisms when
// l2 = 0 and the user gave none (dp_sgd: the projection radius M; dp_lssgd:
// D in D_sigma). Rows have norm <= feature_bound (1 by default); margins
// then stay within +-10 R. No public bound on the unregularised minimiser
// exists (it need not exist), and the benchmark's datasets pull both ways
// (bench/reports/algorithms.md): logistic minimisers can be far out (the
// loss is flat there, and larger balls help), Huber minimisers are near 0
// (and large balls hurt). 10 is the compromise; radius => overrides it.
constexpr double kDefaultConvexNormBound = 10.0;

// The number of steps of a default plan. The papers choose T by minimising
// their utility bound under their own noise formula, in which sigma^2 grows
// linearly with T. dperm's accountant (Wang-Balle-Kasiviswanathan Thm 9)
// has a floor: its higher-order terms do not vanish as the noise grows, so
// past some T (small epsilon, many steps) the calibrated sigma jumps far
// above the paper's. This scans T = t_max, t_max/sqrt(2), t_max/2, ...
// (>= 1); `plan_steps(p, T)` completes a copy of the plan for T steps
// (batch size, step size, PlanGradientNoise). With `accept`, it returns the
// first (largest) T whose plan `accept`s; without it, or when no T is
// accepted, the T whose plan has the smallest `bound` (the paper's utility
// bound evaluated with the noise the plan really gets). Public inputs only:
// the choice depends on (options, n, d), never on the data. A T for which
// no noise reaches (epsilon, delta) counts as an infinite bound; if every T
// fails, the first error is thrown.
int64_t ChooseIterations(const Plan& base, int64_t t_max,
                         const std::function<void(Plan&, int64_t)>& plan_steps,
                         const std::function<double(const Plan&)>& bound,
                         const std::function<bool(const Plan&)>& accept = nullptr);

}  // namespace dperm
