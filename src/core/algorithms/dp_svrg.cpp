// DP-SVRG (Wang, Ye & Xu, NIPS 2017, Algorithm 1; [WYX17]): proximal SVRG
// on a strongly convex F^r = F + r, with Gaussian noise on every inner
// step's variance-reduced gradient.
//
//   for s = 1..T: v~ = grad F(x~); x_0 = x~;
//     for t = 1..m: pick i_t; v_t = grad f_i(x_{t-1}) - grad f_i(x~) + v~ + u_t,
//       u_t ~ N(0, sigma^2 I); x_t = prox_{eta r}(x_{t-1} - eta v_t)
//     x~ = 1/m sum_t x_t
//   return x~_T
//
// Regulariser: r = l1 ||.||_1 + l2/2 ||.||^2, both in the proximal step (so
// F is the mean loss and L_smooth = beta, the loss's smoothness); F^r is
// l2-strongly convex, which Algorithm 1 needs: l2 > 0 is required.
//
// Schedule (Theorem 4.2, constants made explicit; b rows per inner step):
//  * b: batch_size, else SvrgChooseBatch (svrg_common.cpp, "THE BATCH
//    SIZE"): the power of two with the least predicted noise error.
//  * step eta <= 1/(12 L) for b = 1 (the theorem's bound, enforced on
//    step_size), up to 1/L for b >= 12. Inequality (4), 1/(mu eta (1 - a) m)
//    + a (m + 1)/(m (1 - a)) <= 1/2 with a = 8 L eta, halves the expected
//    error per epoch. With b rows the variance term of Prox-SVRG (Xiao &
//    Zhang 2014, Cor. 3: E||v - grad F||^2 <= 4 L [...]) shrinks by
//    (n - b)/(b (n - 1)) <= 1/b for a batch drawn without replacement, so
//    a = 8 L eta / b (dperm's extension; b = 1 is the paper's (4)). It
//    reads m (1 - 3a) >= 2/(mu eta) + 2a, so it can hold only for
//    eta < b/(24 L), and then m = ceil((2/(mu eta) + 2a)/(1 - 3a)). The
//    default eta = min(b/(48 L), 1/L) minimises that m; b = 1 gives the
//    paper's m = ceil(192 L/mu + 2/3), b = 64 about 3.2 L/mu.
//  * T: T0 = ceil(log2(n^2 eps^2 / (dim G^2 ln(1/delta)))), at least 1, is
//    Theorem 4.2's T = O(log(n^2 eps^2 / (p G^2 ln(1/delta)))) with
//    constant 1, base 2 since (4) halves the error per epoch; the default
//    takes the T in 1..T0 minimising E0 2^-T + T e1 (the code below). The
//    iterations option overrides T (epochs).
//  Utility only: the noise follows whatever b, m and T the plan sets.
//
// bench/scripts/algorithms/default_risk.sh measures the schedule, its noise and its excess
// risk on the real datasets (bench/reports/algorithms.md).
//
// Privacy: svrg_common.cpp (the split analysis; Theorem 4.1's sigma^2 = c
// G^2 T m ln(1/delta)/(n^2 eps^2) with c = 1 is the 'paper' accountant's
// sigma, raised to the calibrated one when it would not reach (epsilon,
// delta) under dperm's accountant).
#include "dperm/algorithms/dp_svrg.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/plan/plan_steps.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/algorithms/svrg_common.hpp"

namespace dperm {
namespace {

// Epoch lengths above max(kMaxEpochLength, 2n) are capped (with a note):
// for a tiny l2 the m of inequality (4) would run for hours (an inner step
// costs ~3 us at dim 43, mostly its dim Gaussians), while SVRG in practice
// uses m ~ 2n. Privacy holds for every m (the noise follows the number of
// inner steps).
const int64_t kMaxEpochLength = 100000;

// A public bound on F^r(0) - F^r(w*): ||grad F^r(0)||^2 / (2 mu) <= L^2/(2 mu)
// by mu-strong convexity (Polyak-Lojasiewicz), and F^r(0) itself (r(0) = 0,
// F^r >= 0): ln 2, ln K, or for Huber h_delta(B) with the public target
// bound B (ZeroModelLossBound). For Huber the latter replaced L^2/(2 mu) =
// 100 at l2 = 0.01, far above the real gap, which made the T balance below
// run too many noisy epochs (bench/reports/algorithms.md).
double InitialGapBound(const Plan& p) {
  return std::min(p.L * p.L / (2 * p.mu), ZeroModelLossBound(p));
}

}  // namespace

Plan DpSvrg::MakePlan(const Options& options, LossKind loss, int64_t n, int d) const {
  const Algorithm a = Algorithm::kDpSvrg;
  if (!(options.l2 > 0))
    ThrowInvalid(
        "algorithm dp_svrg needs l2 > 0: Algorithm 1 (Theorem 4.2) assumes a strongly convex objective",
        "Pass l2 => 0.01 (for example), or use algorithm dp_svrg_pp, which does not need strong convexity.");
  Plan p = BasePlan(options, loss, a, n, d);
  const double smooth = p.beta;  // L of Theorem 4.2: the loss's smoothness (r is in the prox)
  const double G = p.L;
  const double eps = options.epsilon, delta = options.delta;
  // The schedule at batch size b: step eta, epoch length m by inequality
  // (4) with a = 8 L eta / b, and the weight eta/(1 - 3a) of sigma^2 in
  // the noise error (svrg_common.cpp, "THE BATCH SIZE").
  const int64_t cap = std::max<int64_t>(kMaxEpochLength, 2 * n);
  struct Schedule {
    double eta = 0, a = 0, m_real = 0;
    int64_t m = 0;
  };
  auto schedule = [&](int64_t batch) {
    Schedule sc;
    const double b = double(batch);
    sc.eta = options.step_size > 0 ? options.step_size : std::min(b / (48 * smooth), 1 / smooth);
    sc.a = 8 * smooth * sc.eta / b;
    if (!(3 * sc.a < 1)) return sc;  // m = 0: no epoch length satisfies (4)
    // Inequality (4): m (1 - 3a) >= 2/(mu eta) + 2a.
    sc.m_real = (2 / (p.mu * sc.eta) + 2 * sc.a) / (1 - 3 * sc.a);
    sc.m = sc.m_real <= double(cap)
               ? std::max<int64_t>(1, static_cast<int64_t>(std::ceil(sc.m_real)))
               : cap;
    return sc;
  };
  auto choose_batch = [&](int64_t epochs) {
    return SvrgChooseBatch(p, /*doubling=*/false, [&](int64_t batch) {
      Schedule sc = schedule(batch);
      SvrgCandidate c;  // m = 0: no candidate
      if (sc.m > 0) c = {epochs, sc.m, sc.eta / (1 - 3 * sc.a)};
      return c;
    });
  };
  if (options.batch_size > 0) p.batch_size = SvrgBatch(options, n, a);
  if (options.iterations > 0) {
    p.iterations = options.iterations;
    p.iterations_rule = "given (epochs)";
    if (options.batch_size <= 0) p.batch_size = choose_batch(p.iterations).batch;
  } else {
    // Theorem 4.2's T = O(log(n^2 eps^2 / (dim G^2 ln(1/delta)))), constant
    // 1, base 2, is the most epochs the plan considers; the plan takes the
    // T in 1..T0 that balances the two errors of (4): the optimisation
    // error, halved per epoch from at most E0 (E0 2^-T), against the noise
    // error, which grows with T since sigma^2 grows with the K = T m steps
    // (T e1, e1 the noise error per epoch of the batch chosen at T0).
    // The plain T0 runs noisy epochs long after the optimisation error is
    // gone (bench/scripts/algorithms/algorithms.py, bench/reports/algorithms.md).
    const double ratio = double(n) * double(n) * eps * eps / (p.dim * G * G * std::log(1 / delta));
    const int64_t t0 =
        std::max<int64_t>(1, static_cast<int64_t>(std::ceil(std::log2(std::max(ratio, 1.0)))));
    SvrgBatchChoice at_t0;
    if (options.batch_size > 0) {
      const Schedule sc = schedule(p.batch_size);
      at_t0.batch = p.batch_size;
      at_t0.noise_error =
          sc.m > 0 ? SvrgNoiseError(p, false, p.batch_size, {t0, sc.m, sc.eta / (1 - 3 * sc.a)})
                   : 0;  // refused below
    } else {
      at_t0 = choose_batch(t0);
    }
    const double e0 = InitialGapBound(p);
    const double e1 = at_t0.noise_error / double(t0);
    int64_t t = 1;
    for (int64_t k = 2; k <= t0; k++)
      if (e0 * std::ldexp(1.0, -int(k)) + e1 * double(k) <
          e0 * std::ldexp(1.0, -int(t)) + e1 * double(t))
        t = k;
    p.iterations = t;
    p.iterations_rule =
        "T in 1.." + std::to_string(t0) +
        " (T0 = ceil(log2(n^2 eps^2 / (dim L^2 ln(1/delta)))), Theorem 4.2) minimising E0 2^-T + T e1: "
        "E0 = " +
        FormatNumber(e0) + " bounds F(0) - F(w*), e1 = " + FormatNumber(e1) +
        " the predicted noise error per epoch";
    if (options.batch_size <= 0) p.batch_size = t == t0 ? at_t0.batch : choose_batch(t).batch;
  }
  const double b = double(p.batch_size);
  // Theorem 4.2: eta <= 1/(12 L) for one row; 1/L with b >= 12 rows (the
  // descent step of the proximal gradient, Xiao & Zhang 2014, Lemma 3).
  p.max_step_size = std::min(b, 12.0) / (12 * smooth);
  CheckStepSize(p, "min(batch_size, 12)/(12 beta): Theorem 4.2, 1/beta for mini-batches");
  const Schedule sc = schedule(p.batch_size);
  p.step_size = sc.eta;
  CheckStepSize(p, "min(batch_size, 12)/(12 beta): Theorem 4.2, 1/beta for mini-batches");
  if (sc.m == 0)
    ThrowInvalid(
        "step_size " + FormatNumber(sc.eta) +
            " leaves no epoch length satisfying inequality (4) of Theorem 4.2, which needs step_size < batch_size/(24 beta) = " +
            FormatNumber(b / (24 * smooth)),
        "Omit step_size to use the default min(batch_size/(48 beta), 1/beta), which needs the shortest epochs.");
  if (sc.m == cap && !(sc.m_real <= double(cap)))
    AddNote(
        p,
        "epoch length capped at " + std::to_string(cap) +
            " (inequality (4) of Theorem 4.2 asks for " + FormatNumber(sc.m_real) +
            "), so the per-epoch halving is not guaranteed; a larger l2 or dp_svrg_pp suits this problem better");
  const int64_t m = sc.m;
  // Theorem 4.1, c = 1: sigma^2 = G^2 T m ln(1/delta) / (n^2 eps^2).
  double paper =
      G * std::sqrt(double(p.iterations) * double(m) * std::log(1 / delta)) / (double(n) * eps);
  PlanSvrgNoise(p, m, /*doubling=*/false, paper,
                "sigma^2 = L^2 T m ln(1/delta) / (n^2 epsilon^2) (Theorem 4.1 with c = 1)");
  return p;
}

Eigen::VectorXd DpSvrg::Train(const Plan& plan, const Objective& objective, SecureRng& rng) const {
  return RunSvrg(plan, objective, rng, /*doubling=*/false);
}

// The algorithm table's entry (registry.hpp).
template <>
const AlgorithmSpec& SpecOf<Algorithm::kDpSvrg>() {
  static const DpSvrg mechanism;
  static const AlgorithmSpec spec = [] {
    AlgorithmSpec s(Algorithm::kDpSvrg, mechanism);
    SvrgSpec(s);
    return s;
  }();
  return spec;
}

}  // namespace dperm
