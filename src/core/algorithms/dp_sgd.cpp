// ANSGD: projected mini-batch noisy SGD with averaged iterates (Bassily,
// Feldman, Talwar & Thakurta, "Private Stochastic Convex Optimization with
// Optimal Rates", NeurIPS 2019; [BFTT19], Section 3, Algorithm 1):
//   for t = 0 .. T-1:  w_{t+1} = Proj_W(w_t - eta (1/m sum_{i in B_t}
//                                  grad l(w_t, z_i) + G_t)),  G_t ~ N(0, sigma^2 I)
//   release w_bar = 1/T sum_{t=1..T} w_t                          (line 7)
// with W the ball ||w|| <= M. The loop is src/core/algorithms/noisy_minibatch.cpp.
//
// Neighbouring relation: replace-one (same n, one row changed); n is public.
// Rows are clipped to ||x|| <= feature_bound, so every per-row loss is
// L-Lipschitz in w on all of R^dim (L from plan_steps.hpp: R for logistic,
// huber_delta R for Huber, sqrt(2) R for softmax).
//
// What each step releases: the batch mean gradient of the loss plus G_t.
// The stochastic gradient is that mean plus l2 w_t; the regulariser's
// gradient l2 w_t is a function of the previous (already private) iterate
// and is identical on neighbouring datasets, so it does not enter the
// sensitivity.
//
// Sensitivity: a replaced row changes the batch mean of m per-row gradients
// by at most 2L/m (each has norm <= L), and only when it is in the batch.
//
// Sampling (deviation from the paper): line 5 samples the batch uniformly
// WITH replacement and Theorem 3.1 takes its privacy from the moments
// accountant of Abadi et al. 2016 (Theorem 1), which is stated for Poisson
// sampling. dperm draws each batch as m distinct rows uniformly WITHOUT
// replacement, and accounts for exactly that: the RDP of the subsampled
// Gaussian mechanism under sampling without replacement and replace-one
// neighbours (Wang, Balle & Kasiviswanathan 2019, Thm 9, at sampling rate
// m/n and noise multiplier sigma / (L/m)), composed over the T steps
// (Mironov 2017, Prop. 1) and converted to (epsilon, delta) (Balle et al.
// 2020, Thm 21) -- PlanGradientNoise. Without replacement no row can appear
// twice in a batch, so the per-step sensitivity is 2L/m (with replacement a
// row drawn k times would move the mean by 2kL/m). The utility analysis
// (Lemma 3.3) only needs an unbiased batch gradient, which both give.
//
// Privacy cost, accountant => 'tight' (default): sigma is the smallest
// noise whose composed RDP gives (epsilon, delta) as above. Accountant =>
// 'paper': Algorithm 1, line 1, sigma^2 = 8 T L^2 log(1/delta) / (n^2
// epsilon^2), used when it is at least the calibrated sigma (so it is
// private under dperm's accountant too), the calibrated sigma otherwise.
// The paper assumes epsilon <= 1 and delta <= 1/n^2; the plan's note says
// when these do not hold.
//
// Projection: Proj_W is applied to the iterate after its noisy step, a
// function of the private output only -- post-processing, so M never
// affects privacy. The defaults for M:
//  * radius => M given;
//  * l2 > 0: M = L / l2. The minimiser w_hat of F = 1/n sum f_i + l2/2
//    ||w||^2 satisfies l2 w_hat = -1/n sum grad f_i(w_hat), whose norm is at
//    most L, so ||w_hat|| <= L/l2: the ball contains w_hat and the projected
//    problem has the same solution;
//  * l2 = 0 (convex): M = kDefaultConvexNormBound = 10 (noisy_minibatch.hpp,
//    with the measurements behind it). The unregularised minimiser need not
//    exist (separable data), so no public bound holds: the projected problem
//    may differ from the unconstrained one, and the plan's note says so;
//    radius => overrides it.
//
// Defaults (Theorem 3.2 and Algorithm 1, with dim = the model's coordinate
// count as the paper's d):
//   T   = min(n/8, epsilon^2 n^2 / (32 dim log(1/delta)))   (Theorem 3.2)
//   m   = max(n sqrt(epsilon / (4T)), 1), rounded up, at most n (line 2)
//   eta = M / (G sqrt(T))                                    (Theorem 3.2)
// where G = L + l2 M bounds the gradient of the regularised per-row loss
// f_i + l2/2 ||w||^2 on W (the paper's L is the Lipschitz constant of the
// loss it minimises). The extraction of Theorem 3.2 in [BFTT19] lost the
// formula for eta; M/(G sqrt(T)) is the value that balances the terms of the
// proof: Lemma 3.3 (M^2/(2 eta T) + eta G^2/2 (1 + 16 T d log(1/delta)/(n^2
// epsilon^2))) plus Lemma 3.4's stability G^2 eta T / n give, at this eta
// and the default T, at most 1.375 M G / sqrt(T) <= 7.8 M G max(1/sqrt(n),
// sqrt(d log(1/delta))/(epsilon n)), inside the theorem's 10 M G max(...).
//
// Lowering T (a deviation from Theorem 3.2, utility only): Theorem 3.2's T
// presumes line 1's sigma, which grows like sqrt(T). dperm's accountant
// agrees up to a factor of about 2 (replace-one sensitivity 2L/m against the
// moments accountant's L/m), except where the WBK bound floors (small
// epsilon, many steps): there the calibrated sigma is tens of times line
// 1's (n = 45211, d = 42, epsilon = 0.1, delta = 1e-3: 5.8 against 0.11 at
// T = 2151). So the default T is the T <= Theorem 3.2's T, on the grid
// T_max 2^{-k/2}, that minimises Lemma 3.3's bound M^2/(2 eta T) + eta G^2/2
// + eta sigma(T)^2 d with the sigma the plan really gets
// (noisy_minibatch.hpp, ChooseIterations); outside the floor that is
// Theorem 3.2's T itself (on that example T drops to 17, m = 1734; the
// excess risk it buys: bench/reports/algorithms.md).
//
// iterations, batch_size and step_size override T, m and eta; m then
// follows the given T. None of these choices affects privacy: the
// accountant takes whatever T and m the plan has.
#include "dperm/algorithms/dp_sgd.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dperm/algorithms/noisy_minibatch.hpp"
#include "dperm/plan/plan_steps.hpp"
#include "dperm/algorithms/registry.hpp"

namespace dperm {
namespace {

// Above this T a default plan is capped (with a note); given iterations are
// not. Privacy holds for every T: the noise is calibrated to the plan's T.
const int64_t kMaxDefaultIterations = 100000;

// G = L + l2 M: the gradient norm of f_i + l2/2 ||w||^2 on the ball W.
double GradientBound(const Plan& p) { return p.L + p.mu * p.radius; }

// Everything that follows from T: the batch size (line 2), the step size
// (Theorem 3.2) and the noise (line 1, or dperm's accountant).
void PlanSteps(Plan& p, int64_t iterations) {
  const Options& o = p.options;
  const double nn = double(p.n), eps = o.epsilon, T = double(iterations);
  p.iterations = iterations;
  if (o.batch_size > 0) {
    p.batch_size = o.batch_size;
  } else {
    // Algorithm 1, line 2: m = max(n sqrt(epsilon / (4T)), 1).
    double m = std::ceil(nn * std::sqrt(eps / (4 * T)));
    p.batch_size = static_cast<int64_t>(std::min(std::max(m, 1.0), nn));
  }
  // Theorem 3.2: eta = M / (G sqrt(T)).
  p.step_size = o.step_size > 0 ? o.step_size : p.radius / (GradientBound(p) * std::sqrt(T));
  // Algorithm 1, line 1: sigma^2 = 8 T L^2 log(1/delta) / (n^2 epsilon^2).
  p.noisy_steps = iterations;
  double paper_sigma = p.L * std::sqrt(8 * T * std::log(1 / o.delta)) / (nn * eps);
  PlanGradientNoise(p, paper_sigma,
                    "sigma^2 = 8 T L^2 log(1/delta) / (n^2 epsilon^2) (Algorithm 1, line 1)");
}

// Lemma 3.3's bound on the excess empirical risk at the plan's step size:
// M^2 / (2 eta T) + eta G^2 / 2 + eta sigma^2 d.
double Lemma33Bound(const Plan& p) {
  const double G = GradientBound(p), eta = p.step_size, T = double(p.iterations);
  return p.radius * p.radius / (2 * eta * T) + eta * G * G / 2 +
         eta * p.noise_scale * p.noise_scale * p.dim;
}

}  // namespace

Plan DpSgd::MakePlan(const Options& options, LossKind loss, int64_t n, int d) const {
  Plan p = BasePlan(options, loss, Algorithm::kDpSgd, n, d);
  const Options& o = p.options;
  const double eps = o.epsilon, nn = double(n);

  // The constraint ball W (post-processing; see the top of this file).
  if (o.radius > 0) {
    p.radius = o.radius;
  } else if (p.mu > 0) {
    p.radius = p.L / p.mu;
  } else {
    p.radius = kDefaultConvexNormBound;
    AddNote(p, "radius " + FormatNumber(p.radius) +
                   " is the default for l2 = 0; pass radius => ... if the model may be larger");
  }
  p.norm_bound = p.radius;
  p.max_step_size = std::numeric_limits<double>::infinity();  // any step is private
  if (p.accountant == Accountant::kPaper && (eps > 1 || o.delta > 1 / (nn * nn)))
    AddNote(p,
            "Algorithm 1 assumes epsilon <= 1 and delta <= 1/n^2; privacy is "
            "still checked by dperm's accountant");

  if (o.iterations > 0) {
    PlanSteps(p, o.iterations);
    p.iterations_rule = "given";
    return p;
  }
  // Theorem 3.2: T = min(n/8, epsilon^2 n^2 / (32 d log(1/delta))).
  double t = std::min(nn / 8, eps * eps * nn * nn / (32 * double(p.dim) * std::log(1 / o.delta)));
  int64_t t_paper = CapIterations(p, t, kMaxDefaultIterations);
  int64_t T = ChooseIterations(p, t_paper, PlanSteps, Lemma33Bound);
  PlanSteps(p, T);
  p.iterations_rule = "min(n/8, epsilon^2 n^2 / (32 d log(1/delta))) (Theorem 3.2)";
  if (T < t_paper)
    p.iterations_rule += " = " + std::to_string(t_paper) + ", lowered to the T minimising " +
                         "Lemma 3.3's bound under dperm's noise";
  return p;
}

Eigen::VectorXd DpSgd::Train(const Plan& plan, const Objective& objective, SecureRng& rng) const {
  // Lines 3-7 with w_0 = 0: noisy projected steps, then the average of
  // w_1 .. w_T (noisy_minibatch.hpp).
  return NoisyMinibatchSgd(plan, objective, rng);
}

// The algorithm table's entry (registry.hpp).
template <>
const AlgorithmSpec& SpecOf<Algorithm::kDpSgd>() {
  static const DpSgd mechanism;
  static const AlgorithmSpec spec = [] {
    AlgorithmSpec s(Algorithm::kDpSgd, mechanism);
    s.model_vectors = 4;  // w, g, the running sum, scratch; a batch and the sampler's n indices
    s.row_arrays = 2;
    s.options = {"radius", "iterations", "step_size", "batch_size"};
    s.refusals = {{"l1", "ANSGD has no proximal step; use l2"},
                  {"ls_sigma", "it does no Laplacian smoothing; use algorithm dp_lssgd"}};
    s.needs_delta = "it adds Gaussian noise to every step";
    return s;
  }();
  return spec;
}

}  // namespace dperm
