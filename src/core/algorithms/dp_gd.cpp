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
// the benchmark's datasets: bench/algorithms.py, bench/reports/algorithms.md.
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

#include "dperm/noise/noise.hpp"
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
    p.iterations = CapIterations(p, t, huber ? kHuberMaxDefaultIterations : kMaxDefaultIterations);
    p.iterations_rule = "T = " + (huber ? FormatNumber(scale) + " " : std::string()) +
                        "sqrt(beta) n eps / (sqrt(dim ln(1/delta)) L) (Theorem 6.3, constant " +
                        (huber ? FormatNumber(scale) + " for Huber)" : std::string("1)"));
  }
  p.batch_size = n;  // full batch: every step reads all rows
  p.noisy_steps = p.iterations;
  // Theorem 6.1, c = 1: sigma^2 = G^2 T ln(1/delta) / (n^2 eps^2).
  double paper = G * std::sqrt(double(p.iterations) * log_inv_delta) / (double(n) * eps);
  PlanGradientNoise(p, paper, "sigma^2 = L^2 T ln(1/delta) / (n^2 epsilon^2) (Theorem 6.1 with c = 1)");
  AddNote(p, "returns the last iterate x_T (Theorem 6.2's rule; the losses are convex); gradient evaluations: " +
                 FormatNumber(double(p.iterations) * double(n)) + " (T n)");
  return p;
}

Eigen::VectorXd DpGd::Train(const Plan& plan, const Objective& objective,
                            SecureRng& rng) const {
  const double eta = plan.step_size;
  Eigen::VectorXd x = Eigen::VectorXd::Zero(plan.dim);
  for (int64_t t = 0; t < plan.iterations; t++) {
    if ((t & 15) == 0) CheckInterrupt();
    ReportIterations(t, plan.iterations);
    Eigen::VectorXd g = objective.Gradient(x);  // grad F(x_{t-1}): mean loss gradient + l2 x
    AddPlannedNoise(plan, rng, g.data());  // + z_{t-1}, snapped (noise.hpp)
    x -= eta * g;
    ProxL1(x, eta * objective.l1());  // identity when l1 = 0
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
