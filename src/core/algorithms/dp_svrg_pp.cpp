// DP-SVRG++ (Wang, Ye & Xu, NIPS 2017, Algorithm 2; [WYX17]): the
// non-strongly convex variant of DP-SVRG, after SVRG++ (Allen-Zhu & Yuan,
// ICML 2016): epoch lengths double and each epoch starts where the last one
// stopped.
//
//   x_0^1 = x~_0 = 0; for s = 1..T: v~ = grad F(x~_{s-1}); m_s = 2^s m;
//     for t = 1..m_s: pick i_t; v_t = grad f_i(x_{t-1}) - grad f_i(x~_{s-1})
//       + v~ + u_t, u_t ~ N(0, sigma^2 I); x_t = prox_{eta r}(x_{t-1} - eta v_t)
//     x~_s = 1/m_s sum_t x_t;  x_0^{s+1} = x_{m_s}^s
//   return x~_T
//
// Regulariser: r = l1 ||.||_1 + l2/2 ||.||^2 in the proximal step (l2 may be
// 0: no strong convexity is needed), so L_smooth = beta, the loss's.
//
// Schedule (Theorem 4.4, constants made explicit; b rows per inner step):
//  * b: batch_size, else SvrgChooseBatch (svrg_common.cpp, "THE BATCH
//    SIZE") among the b that keep the epochs of b = 16 (below);
//  * eta = 1/(13 L) for b = 1 (the theorem's choice, also the largest
//    step_size accepted), min(b/(13 L), 1/L) for b rows (the variance term
//    shrinks by 1/b, as for DP-SVRG in dp_svrg.cpp);
//  * m = Theta(L): m = max(1, ceil(L)) (constant 1; with rows of norm <= 1
//    that is 1 for logistic and softmax, 2 for Huber). Larger m buys little
//    (bench/reports/algorithms.md), because every inner step is noisy;
//    the snapshots (T full gradients) do most of the optimisation;
//  * T = ceil(log2(n eps / (sqrt(dim ln(1/delta)) G))), at least 1: Theorem
//    4.4's T = O(log(n eps / (sqrt(p) G sqrt(ln(1/delta))))) with constant 1,
//    base 2 since the epochs double; capped where the b K rows of inner
//    steps would pass 16 passes over the data. Batches of b >= 13 rows all
//    take the full step 1/L, so they progress alike per inner step; a
//    larger batch is a candidate only when the cap leaves it the epochs of
//    b = 16. The iterations option overrides T.
// The run has K = m (2^{T+1} - 2) noisy inner steps.
//  * eta, lowered for the noise (a dperm deviation, utility only: the noise
//    follows b, m and T, never the step): every inner step adds u ~ N(0,
//    sigma^2 I), whose E||u||^2 = dim sigma^2 = s^2 is the variance that
//    remains once the variance-reduced part vanishes near the optimum; with
//    Theorem 4.4's eta = 1/L (mini-batches) that noise, not the
//    optimisation, set the error, above the zero model's, where smaller
//    steps did far better (bench/reports/algorithms.md). The default is the step of Ghadimi & Lan (2013),
//    Cor. 2.2, for K noisy steps of variance s^2, min(1/beta, D_F / (s
//    sqrt(K))), with D_F = sqrt(2 F0 / (beta + l2)) and F0 the public bound
//    on F(0) - F* (ZeroModelLossBound), as rrpsgd's default (Theorem 6 of
//    Zhang et al. 2017); never above the step above. As epsilon grows, s
//    falls and the step returns to the paper's.
//
// Privacy: svrg_common.cpp (the split analysis). Theorem 4.3's sigma^2 =
// c G^2 2^T m ln(2/delta) / (n^2 eps^2) with c = 1 is the 'paper'
// accountant's sigma, raised to the calibrated one when it would not reach
// (epsilon, delta) under dperm's accountant.
#include "dperm/algorithms/dp_svrg_pp.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/plan/plan_steps.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/algorithms/svrg_common.hpp"

namespace dperm {

namespace {
// Default inner steps stay below this many passes over the data.
const double kMaxDefaultInnerPasses = 16;
}  // namespace

Plan DpSvrgPp::MakePlan(const Options& options, LossKind loss, int64_t n, int d) const {
  const Algorithm a = Algorithm::kDpSvrgPp;
  Plan p = BasePlan(options, loss, a, n, d);
  const double smooth = p.beta;  // L of Theorem 4.4: the loss's smoothness (r is in the prox)
  // Theorem 4.4: m = Theta(L); constant 1.
  const int64_t m = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(smooth)));
  const double G = p.L;
  const double eps = options.epsilon, delta = options.delta;
  double ratio = double(n) * eps / (std::sqrt(p.dim * std::log(1 / delta)) * G);
  const int64_t paper_epochs =
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil(std::log2(std::max(ratio, 1.0)))));
  // The schedule at batch size b: eta = min(b/(13 L), 1/L) and the epochs
  // T, capped where the b m (2^(T+1) - 2) rows of inner steps would pass
  // kMaxDefaultInnerPasses passes over the data (utility only: fewer steps
  // cost no privacy).
  auto step = [&](int64_t batch) {
    return options.step_size > 0 ? options.step_size
                                 : std::min(double(batch) / (13 * smooth), 1 / smooth);
  };
  auto epochs = [&](int64_t batch) {
    if (options.iterations > 0) return options.iterations;
    const double budget = kMaxDefaultInnerPasses * double(n);
    int64_t t = std::min<int64_t>(paper_epochs, 39);
    while (t > 1 && double(batch) * double(m) * (std::ldexp(1.0, int(t + 1)) - 2) > budget) t--;
    return t;
  };
  if (options.batch_size > 0) {
    p.batch_size = SvrgBatch(options, n, a);
  } else {
    // Batches of b >= 13 rows take the full step 1/L, so they progress
    // alike per inner step; a larger batch qualifies only when it keeps the
    // epochs of b = 16 (the budget, not the paper's T, would cut them).
    const int64_t min_epochs = epochs(std::min<int64_t>(16, n));
    p.batch_size = SvrgChooseBatch(p, /*doubling=*/true, [&](int64_t batch) {
                     const int64_t t = epochs(batch);
                     return t < min_epochs ? SvrgCandidate{} : SvrgCandidate{t, m, step(batch)};
                   }).batch;
  }
  const double b = double(p.batch_size);
  // Theorem 4.4: eta = 1/(13 L) for one row; 1/L with b >= 13 rows.
  p.max_step_size = std::min(b, 13.0) / (13 * smooth);
  p.step_size = step(p.batch_size);
  CheckStepSize(p, "min(batch_size, 13)/(13 beta): Theorem 4.4, 1/beta for mini-batches");
  if (options.iterations > 0) {
    p.iterations = options.iterations;
    p.iterations_rule = "given (epochs)";
  } else {
    p.iterations = epochs(p.batch_size);
    p.iterations_rule =
        "T = ceil(log2(n eps / (sqrt(dim ln(1/delta)) L))) epochs (Theorem 4.4, constant 1)";
    if (p.iterations < paper_epochs)
      AddNote(p, "epochs capped at " + std::to_string(p.iterations) + " (at most " +
                     FormatNumber(kMaxDefaultInnerPasses) +
                     " passes of inner steps); pass iterations => ... to run longer");
  }
  // Theorem 4.3, c = 1: sigma^2 = G^2 2^T m ln(2/delta) / (n^2 eps^2).
  double paper = G *
                 std::sqrt(std::ldexp(double(m), int(std::min<int64_t>(p.iterations, 1000))) *
                           std::log(2 / delta)) /
                 (double(n) * eps);
  PlanSvrgNoise(p, m, /*doubling=*/true, paper,
                "sigma^2 = L^2 2^T m ln(2/delta) / (n^2 epsilon^2) (Theorem 4.3 with c = 1)");
  if (!(options.step_size > 0)) {
    // The noisy step (the top of the file, "eta"): Ghadimi & Lan 2013, Cor.
    // 2.2, min(1/beta, D_F / (s sqrt(K))) with s^2 = dim sigma^2 and D_F =
    // sqrt(2 F0 / beta_F), never above Theorem 4.4's step. Utility only.
    const double s_total = p.noise_scale * std::sqrt(double(p.dim));
    const double d_f = std::sqrt(2 * ZeroModelLossBound(p) / (smooth + p.mu));
    if (s_total > 0)
      p.step_size = std::min(p.step_size, d_f / (s_total * std::sqrt(double(p.noisy_steps))));
  }
  return p;
}

Eigen::VectorXd DpSvrgPp::Train(const Plan& plan, const Objective& objective,
                                SecureRng& rng) const {
  return RunSvrg(plan, objective, rng, /*doubling=*/true);
}

// The algorithm table's entry (registry.hpp).
template <>
const AlgorithmSpec& SpecOf<Algorithm::kDpSvrgPp>() {
  static const DpSvrgPp mechanism;
  static const AlgorithmSpec spec = [] {
    AlgorithmSpec s(Algorithm::kDpSvrgPp, mechanism);
    SvrgSpec(s);
    return s;
  }();
  return spec;
}

}  // namespace dperm
