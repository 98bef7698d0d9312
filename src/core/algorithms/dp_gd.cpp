// DP-GD (Wang, Ye & Xu, NIPS 2017, Algorithm 4; [WYX17]): full-batch
// gradient descent with Gaussian noise on every gradient,
//   x_t = prox_{eta l1}(x_{t-1} - eta (grad F(x_{t-1}) + z_{t-1})),
//   z ~ N(0, sigma^2 I), x_0 = 0, output x_T,
// where F = mean loss + l2/2 ||x||^2 is the smooth part (the paper's
// Algorithm 4 has no l1 term; the proximal step for l1 is data-independent
// post-processing, so the accounting is unchanged, and proximal gradient
// keeps the linear rate under the proximal PL condition: Karimi, Nutini &
// Schmidt 2016, whom Section 6.1 cites).
//
// Neighbouring relation: replace-one; n is public. Each step releases the
// mean gradient of all n rows plus N(0, sigma^2 I); a replaced row moves
// that mean by at most 2G/n (G = L, the per-row Lipschitz constant; the
// l2 x term is common to both datasets). T such releases compose:
// PlanGradientNoise with batch_size = n calibrates sigma by exact Gaussian
// RDP (WBK Thm 9 at gamma = 1 is the plain Gaussian's 2 alpha/z^2), and
// dp_explain also reports the PLD epsilon of the same T Gaussians.
// Accountant 'paper': Theorem 6.1's sigma^2 = c G^2 T ln(1/delta)/(n^2
// eps^2) with c = 1, raised to the calibrated sigma when it would not reach
// (epsilon, delta) under dperm's accountant (at c = 1 it does not for any
// usual delta: the T releases are then a Gaussian of total sensitivity/noise
// 2 eps / sqrt(ln(1/delta)), whose delta at eps is far above the target).
//
// Schedule: step eta = 1/L_smooth with L_smooth = beta + l2, the smoothness
// of F (Theorems 6.2 and 6.3; also the largest step_size accepted).
//  * l2 > 0: F is l2-strongly convex, hence satisfies the Polyak-Lojasiewicz
//    condition with mu = l2 (Definition 6.1; Karimi et al.'s chain of
//    implications). Theorem 6.2: T = O(log(n^2 eps^2 / (p G^2 ln(1/delta))))
//    where the O hides L/mu; with GD's PL rate (1 - mu/L)^T made explicit,
//    T = ceil((L_smooth/l2) ln(n^2 eps^2 / (dim G^2 ln(1/delta)))).
//  * l2 = 0: Theorem 6.3 (the general smooth case):
//    T = ceil(sqrt(L_smooth) n eps / (sqrt(dim ln(1/delta)) G)).
// The iterations option overrides T. The excess risk either rule gives on
// the benchmark's datasets: bench/scripts/algorithms/algorithms.py, bench/reports/algorithms.md.
//
// Accelerated schedule (l2 = 0, logistic and softmax, no `iterations`).
// Theorem 6.3's T grows linearly in n epsilon (20000 passes at n = 10^6,
// d = 8, epsilon = 1), although once the noise is that small the excess
// risk is set by the optimisation error alone. Where the theorem's T
// exceeds kAcceleratedSteps (dp_gd.hpp), dp_gd runs kAcceleratedSteps steps
// of Nesterov's accelerated method on the same noisy gradients:
//   y_k = x_{k-1} + (k - 1)/(k + 2) (x_{k-1} - x_{k-2}),
//   x_k = prox_{eta l1}(y_k - eta (grad F(y_k) + z_k)),   k = 1, ..., T,
// from x_0 = x_{-1} = 0, releasing x_T
// (Nesterov 1983; with the l1 prox it is FISTA, Beck & Teboulle 2009, in
// the momentum form of Chambolle & Dossal 2015), whose optimisation error
// after T exact steps is 2 L_smooth ||x*||^2/(T + 1)^2 against GD's
// L_smooth ||x*||^2/(2T), and with O'Donoghue & Candes' (2015) gradient
// restart: k starts over at 1 whenever <g_k, x_k - x_{k-1}> > 0 (the step
// went uphill along the released gradient), which recovers a linear rate
// where F is locally strongly convex, as the logistic loss is near its
// minimiser. Measured (bench/scripts/algorithms/dp_gd_schedule.cpp, bench/results/
// dp_gd_schedule.md): at 10^6 x 8, epsilon = 1, 100 steps end 5e-7 above the
// minimum (7e-5 without the restart, 0.013 for 100 plain steps); at
// 10^5 x 42, 3e-4 (the theorem's 2052 plain steps: 7e-4). Errors in the gradients
// accumulate more in accelerated methods (Devolder, Glineur & Nesterov
// 2014), which is why the plain schedule is kept wherever the theorem's T
// is small (n epsilon small: noise, not optimisation, dominates).
// Privacy is unchanged: the k-th release is the mean gradient at y_k plus
// N(0, sigma^2 I), y_k (and every restart) a function of the earlier
// releases alone, so the T releases compose adaptively exactly as plain
// DP-GD's (PlanGradientNoise calibrates sigma to this T). Huber keeps its
// own schedule (below).
//
// Output rule. Theorem 6.2 (PL) outputs x_T; Theorem 6.3, written for
// non-convex losses, outputs x_m with m uniform over the iterates, because a
// non-convex F gives no reason for the last iterate to be the best. Every
// dperm loss (logistic, Huber, softmax) is convex, where gradient descent
// (noiseless) never increases F, so dp_gd always returns x_T; there is no
// option to ask for the random iterate. Both outputs are post-processing of
// the same T releases: the privacy is the same either way.
#include "dperm/algorithms/dp_gd.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/plan/plan_noise.hpp"
#include "dperm/plan/plan_steps.hpp"
#include "dperm/algorithms/registry.hpp"

namespace dperm {
namespace {

// Above this default T a plan is capped with a note (a tiny l2 makes the PL
// rule's L/mu factor huge). Privacy holds for every T.
const int64_t kMaxDefaultIterations = 20000;

// Huber's default T is Theorem 6.3's times kHuberIterationsScale, at most
// kHuberMaxDefaultIterations: with huber_delta's small gradient bound G
// (0.1 of the target range) the theorem's T ~ 1/G ran to 20000 passes;
// 0.4 of it, capped at 3000, had lower or equal held-out RMSE on WINE and
// BIKE in a third of the time (bench/reports/heldout_huber.md). Constants
// of the schedule, public; privacy holds for every T.
const double kHuberIterationsScale = 0.4;
const int64_t kHuberMaxDefaultIterations = 3000;

}  // namespace

Plan DpGd::MakePlan(const Options& options, LossKind loss, int64_t n, int d) const {
  Plan p = BasePlan(options, loss, Algorithm::kDpGd, n, d);
  const double smooth = p.beta + p.mu;  // L_smooth of F = mean loss + l2/2 ||x||^2
  p.max_step_size = 1 / smooth;         // Theorems 6.2, 6.3: eta = 1/L
  p.step_size = options.step_size > 0 ? options.step_size : p.max_step_size;
  CheckStepSize(p, "1/(beta + l2), Theorems 6.2 and 6.3");
  const double G = p.L;
  const double eps = options.epsilon, delta = options.delta;
  const double log_inv_delta = std::log(1 / delta);
  if (options.iterations > 0) {
    p.iterations = options.iterations;
    p.iterations_rule = "given";
  } else if (p.mu > 0) {
    double ratio = double(n) * double(n) * eps * eps / (p.dim * G * G * log_inv_delta);
    double t = smooth / p.mu * std::log(std::max(ratio, 1.0));
    p.iterations = CapIterations(p, t, kMaxDefaultIterations);
    p.iterations_rule =
        "T = (beta + l2)/l2 * ln(n^2 eps^2 / (dim L^2 ln(1/delta))) (Theorem 6.2, PL with mu = l2, constant 1)";
  } else {
    const bool huber = loss == LossKind::kHuber;
    const double scale = huber ? kHuberIterationsScale : 1;
    double t = scale * std::sqrt(smooth) * double(n) * eps / (std::sqrt(p.dim * log_inv_delta) * G);
    const std::string theorem =
        "T = " + (huber ? FormatNumber(scale) + " " : std::string()) +
        "sqrt(beta) n eps / (sqrt(dim ln(1/delta)) L) (Theorem 6.3, constant " +
        (huber ? FormatNumber(scale) + " for Huber)" : std::string("1)"));
    if (!huber && t > double(kAcceleratedSteps)) {
      p.iterations = kAcceleratedSteps;
      p.mechanism_fields.Set(kNesterov, 1);
      p.iterations_rule =
          std::to_string(kAcceleratedSteps) + " steps with Nesterov's momentum where " + theorem +
          " = " + FormatNumber(std::ceil(t)) + " plain steps would be more (accelerated schedule)";
    } else {
      p.iterations =
          CapIterations(p, t, huber ? kHuberMaxDefaultIterations : kMaxDefaultIterations);
      p.iterations_rule = theorem;
    }
  }
  p.batch_size = n;  // full batch: every step reads all rows
  p.noisy_steps = p.iterations;
  // Theorem 6.1, c = 1: sigma^2 = G^2 T ln(1/delta) / (n^2 eps^2).
  double paper = G * std::sqrt(double(p.iterations) * log_inv_delta) / (double(n) * eps);
  PlanGradientNoise(p, paper,
                    "sigma^2 = L^2 T ln(1/delta) / (n^2 epsilon^2) (Theorem 6.1 with c = 1)");
  AddNote(
      p,
      "returns the last iterate x_T (Theorem 6.2's rule; the losses are convex); gradient evaluations: " +
          FormatNumber(double(p.iterations) * double(n)) + " (T n)");
  return p;
}

Eigen::VectorXd DpGd::Train(const Plan& plan, const Objective& objective, SecureRng& rng) const {
  const double eta = plan.step_size;
  const bool nesterov = plan.mechanism_fields.Get(kNesterov) > 0;
  Eigen::VectorXd x = Eigen::VectorXd::Zero(plan.dim), previous = x, y = x;
  int64_t since_restart = 0;  // k - 1 of the momentum (k - 1)/(k + 2)
  for (int64_t t = 0; t < plan.iterations; t++) {
    if ((t & 15) == 0) CheckInterrupt();
    ReportIterations(t, plan.iterations);
    // y: the point whose gradient is released (x itself, or the momentum
    // step: post-processing of earlier releases).
    if (nesterov) {
      y = x + (double(since_restart) / double(since_restart + 3)) * (x - previous);
      previous = x;
    } else {
      y = x;
    }
    Eigen::VectorXd g = objective.Gradient(y);  // grad F(y): mean loss gradient + l2 y
    AddPlannedNoise(plan, rng, g.data());       // + z, snapped (noise.hpp)
    x = y - eta * g;
    ProxL1(x, eta * objective.l1());  // identity when l1 = 0
    // The gradient restart: the momentum starts over when the step went
    // against the released gradient (a function of releases only).
    since_restart = nesterov && g.dot(x - previous) > 0 ? 0 : since_restart + 1;
  }
  ReportIterations(plan.iterations, plan.iterations);
  return x;
}

// The algorithm table's entry (registry.hpp).
template <>
const AlgorithmSpec& SpecOf<Algorithm::kDpGd>() {
  static const DpGd mechanism;
  static const AlgorithmSpec spec = [] {
    AlgorithmSpec s(Algorithm::kDpGd, mechanism);
    s.model_vectors = 2;  // x and its noisy gradient
    s.row_arrays = 0;
    s.options = {"l1", "iterations", "step_size"};
    s.refusals = {{"batch_size", "it uses the full batch at every step"}};
    s.needs_delta = "it adds Gaussian noise to every step";
    s.streams = true;
    return s;
  }();
  return spec;
}

}  // namespace dperm
