// DP-SVRG (Wang, Ye & Xu, NIPS 2017, Algorithm 1; seeds/003): proximal SVRG
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
// Schedule (Theorem 4.2, constants made explicit):
//  * step eta <= 1/(12 L) (the theorem's bound, enforced on step_size);
//    inequality (4), 1/(mu eta (1 - 8 eta L) m) + 8 L eta (m + 1)/(m (1 -
//    8 L eta)) <= 1/2, halves the expected error per epoch. With a = 8 L eta
//    it reads m (1 - 3a) >= 2/(mu eta) + 2a, so it can hold only for
//    eta < 1/(24 L), and then m = ceil((2/(mu eta) + 2a)/(1 - 3a)). The
//    default eta = 1/(48 L) minimises that m (maximises eta (1 - 24 L eta)):
//    m = ceil(192 L/mu + 2/3), i.e. Theta(L/mu) as the theorem asks.
//  * T = ceil(log2(n^2 eps^2 / (dim G^2 ln(1/delta)))), at least 1: Theorem
//    4.2's T = O(log(n^2 eps^2 / (p G^2 ln(1/delta)))) with constant 1, in
//    base 2 since (4) halves the error per epoch. The iterations option
//    overrides T (epochs).
//
// Measured on BANK (n = 45211, d = 42, logistic, eps = 1, delta = 1e-6,
// l2 = 0.01): T = 21, m = 9601, K = 201621 inner steps, 1.35e6 gradient
// evaluations, plan 0.03 s, training 0.7 s; with one row per inner step the
// noise is sigma = 2.18 (see svrg_common.cpp for why, and for batch_size).
//
// Privacy: svrg_common.cpp (the split analysis; Theorem 4.1's sigma^2 = c
// G^2 T m ln(1/delta)/(n^2 eps^2) with c = 1 is the 'paper' accountant's
// sigma, raised to the calibrated one when it would not reach (epsilon,
// delta) under dperm's accountant).
#include "dperm/dp_svrg.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/plan_common.hpp"
#include "dperm/svrg_common.hpp"

namespace dperm {
namespace {

// Epoch lengths above max(kMaxEpochLength, 2n) are capped (with a note):
// for a tiny l2 the m of inequality (4) would run for hours (an inner step
// costs ~3 us at dim 43, mostly its dim Gaussians), while SVRG in practice
// uses m ~ 2n. Privacy holds for every m (the noise follows the number of
// inner steps).
const int64_t kMaxEpochLength = 100000;

}  // namespace

Plan DpSvrg::MakePlan(const Options& options, LossKind loss, int64_t n,
                      int d) const {
  const Algorithm a = Algorithm::kDpSvrg;
  SvrgCheckOptions(options, a);
  if (!(options.l2 > 0))
    ThrowInvalid("algorithm dp_svrg needs l2 > 0: Algorithm 1 (Theorem 4.2) assumes a strongly convex objective",
                 "Pass l2 => 0.01 (for example), or use algorithm dp_svrg_pp, which does not need strong convexity.");
  Plan p = BasePlan(options, loss, a, n, d);
  p.batch_size = SvrgBatch(options, n, a);
  const double smooth = p.beta;  // L of Theorem 4.2: the loss's smoothness (r is in the prox)
  p.max_step_size = 1 / (12 * smooth);  // Theorem 4.2: eta = Theta(1/L) <= 1/(12 L)
  p.step_size = options.step_size > 0 ? options.step_size : 1 / (48 * smooth);
  CheckStepSize(p, "1/(12 beta), Theorem 4.2");
  const double eta = p.step_size;
  const double a8 = 8 * smooth * eta;
  if (!(3 * a8 < 1))
    ThrowInvalid("step_size " + FormatNumber(eta) +
                     " leaves no epoch length satisfying inequality (4) of Theorem 4.2, which needs step_size < 1/(24 beta) = " +
                     FormatNumber(1 / (24 * smooth)),
                 "Omit step_size to use the default 1/(48 beta), which needs the shortest epochs.");
  // Inequality (4): m (1 - 3a) >= 2/(mu eta) + 2a.
  double m_real = (2 / (p.mu * eta) + 2 * a8) / (1 - 3 * a8);
  const int64_t cap = std::max<int64_t>(kMaxEpochLength, 2 * n);
  int64_t m;
  if (!(m_real <= double(cap))) {
    m = cap;
    AddNote(p, "epoch length capped at " + std::to_string(cap) +
                   " (inequality (4) of Theorem 4.2 asks for " + FormatNumber(m_real) +
                   "), so the per-epoch halving is not guaranteed; a larger l2 or dp_svrg_pp suits this problem better");
  } else {
    m = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(m_real)));
  }
  const double G = p.L;
  const double eps = options.epsilon, delta = options.delta;
  if (options.iterations > 0) {
    p.iterations = options.iterations;
    p.iterations_rule = "given (epochs)";
  } else {
    double ratio = double(n) * double(n) * eps * eps / (p.dim * G * G * std::log(1 / delta));
    p.iterations = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(std::log2(std::max(ratio, 1.0)))));
    p.iterations_rule = "T = ceil(log2(n^2 eps^2 / (dim L^2 ln(1/delta)))) epochs (Theorem 4.2, constant 1)";
  }
  // Theorem 4.1, c = 1: sigma^2 = G^2 T m ln(1/delta) / (n^2 eps^2).
  double paper = G * std::sqrt(double(p.iterations) * double(m) * std::log(1 / delta)) /
                 (double(n) * eps);
  PlanSvrgNoise(p, m, /*doubling=*/false, paper,
                "sigma^2 = L^2 T m ln(1/delta) / (n^2 epsilon^2) (Theorem 4.1 with c = 1)");
  return p;
}

Eigen::VectorXd DpSvrg::Train(const Plan& plan, const Objective& objective,
                              SecureRng& rng) const {
  return RunSvrg(plan, objective, rng, /*doubling=*/false);
}

}  // namespace dperm
