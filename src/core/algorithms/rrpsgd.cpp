// Random Round Private SGD (Zhang, Zheng, Mou & Wang, IJCAI 2017, [ZZMW17],
// Algorithm 2): draw R from the distribution of Theorem 5, then for
// t = 0 .. R-1 pick one row xi uniformly and step
//   w_{t+1} = w_t - eta (grad f_xi(w_t) + z_t + l2 w_t),  z_t ~ N(0, s^2 I),
// from w_0 = 0, and release w_R.
//
// Neighbouring relation: replace-one (same n, one row changed); n is public.
// Rows are clipped to ||x|| <= feature_bound, so every per-row loss gradient
// has norm <= L (plan_steps.hpp) whatever w is.
//
// What is noised. Step t releases, in effect, the noisy row gradient
// g_t = grad f_xi(w_t) + z_t: a batch of one row drawn uniformly (sampling
// without replacement with m = 1 is the paper's xi ~ U(S)), whose gradient
// moves by at most 2L when the row is replaced. The regulariser's gradient
// l2 w_t is a function of w_t, itself a function of g_0 .. g_{t-1}, so adding
// it is post-processing: it never enters the sensitivity, and the algorithm
// needs no projection (the paper's f would include l2/2 ||w||^2, whose
// gradient is unbounded on R^dim; ours is not part of the noised quantity).
//
// The random round is free. R is drawn from a public distribution,
// independently of the data. Let M be the mechanism that runs all T steps
// and releases (g_0, ..., g_{T-1}); w_R is h(R, g_0, ..., g_{R-1}) for a
// fixed function h, i.e. a post-processing of M's output with independent
// randomness R (computing the steps after R and discarding them gives the
// same distribution as not computing them). So w_R is at least as private as
// M, and the plan charges M: noisy_steps = T, the largest value R can take.
//
// Accountant 'tight' (default): PlanGradientNoise calibrates s for T
// compositions of the Gaussian mechanism on a uniformly sampled row (rate
// q = 1/n, sensitivity 2L) with the RDP bound of Wang, Balle &
// Kasiviswanathan 2019, Thm 9 (replace-one, sampling without replacement),
// converted to (epsilon, delta) (Balle et al. 2020, Thm 21).
// Accountant 'paper': Algorithm 2, line 4 samples z_t with density
// ~ exp(-eps^2 ||z||^2 / (8 L^2 log(3n/delta) log(2/delta))), i.e.
// s^2 = 4 L^2 log(3n/delta) log(2/delta) / eps^2 per coordinate (Theorem 5's
// sigma^2 = 4L^2 + 4 d L^2 log(3n/delta) log(2/delta)/eps^2 is 4L^2 + d s^2;
// the proof sketch and A.5 write 8 L^2 log(3n/delta) log(2/delta)/eps^2
// without d, apparently a typo). Theorem 4 proves it
// (epsilon, delta)-DP for eps <= 1 and R <= n^2 by amplification (Lemma 9)
// and strong composition (Lemma 10). dperm keeps the paper's s only when it
// reaches (epsilon, delta) under the tight accountant as well; otherwise the
// calibrated s is used and the plan says so.
//
// Deviation: the number of rounds. The paper draws R over [n^2]: 2e9 steps
// for n = 45211, far too many. dperm uses T = iterations (the option) or a
// public default of kDefaultPasses * n steps, capped so that T * dim noise
// draws stay under kMaxDefaultDraws. Theorem 5 holds for any
// T (Lemma 11 is stated for T in N); privacy is charged for the T used. More
// rounds do not hurt the utility bound here: Lemma 12's beta D_F^2/T +
// 2 D_F sigma/sqrt(T) keeps falling for tens of passes, because at q = 1/n
// the calibrated s hardly grows with T (dp_explain shows s for any T), so
// T is set by running time.
//
// Step size: constant eta < 2 / beta_F (Theorem 5; beta_F = beta + l2, the
// smoothness of F including the regulariser), by default Theorem 6's rule
// with T in place of n^2 (Lemma 12, Ghadimi & Lan Cor. 2.2):
// eta = min(1/beta_F, D_F / (sigma sqrt(T))), sigma^2 = 4 L^2 + dim s^2 with
// the plan's s, and D_F from a public bound on F(0) - F* (RrpsgdDistanceBound).
// The step never affects privacy; `step_size` overrides it (< 2/beta_F).
#include "dperm/algorithms/rrpsgd.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/plan/plan_noise.hpp"
#include "dperm/plan/plan_steps.hpp"
#include "dperm/algorithms/registry.hpp"

namespace dperm {
namespace {

// Default T: this many passes worth of single-row steps ...
const double kDefaultPasses = 10;
// ... unless T * dim (Gaussian draws) would exceed this.
const double kMaxDefaultDraws = 5e7;

}  // namespace

double RrpsgdVarianceBound(const Plan& p, double noise_scale) {
  return 4 * p.L * p.L + double(p.dim) * noise_scale * noise_scale;
}

double RrpsgdDistanceBound(const Plan& p) {
  // F(0) = 1/n sum f_i(0) (the regulariser is 0 at w = 0) and F* >= 0.
  return std::sqrt(2 * ZeroModelLossBound(p) / (p.beta + p.mu));
}

Plan Rrpsgd::MakePlan(const Options& options, LossKind loss, int64_t n, int d) const {
  // batch_size 1 is the only one it takes (the table lets it through).
  if (options.batch_size > 1)
    RejectOption(Algorithm::kRrpsgd, "batch_size", "Algorithm 2 steps on one row at a time");
  Plan p = BasePlan(options, loss, Algorithm::kRrpsgd, n, d);
  const Options& o = p.options;

  // Rounds: R ranges over {1, ..., T}.
  if (o.iterations > 0) {
    p.iterations = o.iterations;
    p.iterations_rule = "given: R is drawn from {1, ..., iterations}";
  } else {
    double t = std::min(kDefaultPasses * double(n), kMaxDefaultDraws / double(p.dim));
    p.iterations = std::max<int64_t>(1, static_cast<int64_t>(t));
    p.iterations_rule =
        "min(10 n, 5e7 / dim) in place of the paper's n^2 (R is drawn from {1, ..., T})";
    if (kMaxDefaultDraws / double(p.dim) < kDefaultPasses * double(n))
      AddNote(
          p,
          "T capped at 5e7/dim noise draws for running time; pass iterations => ... to run longer");
  }

  // Noise: one row per step, charged for all T steps (see the top of the file).
  p.batch_size = 1;
  p.noisy_steps = p.iterations;
  double paper_sigma = 0;
  if (o.delta > 0)  // Algorithm 2, line 4
    paper_sigma =
        2 * p.L * std::sqrt(std::log(3 * double(n) / o.delta) * std::log(2 / o.delta)) / o.epsilon;
  PlanGradientNoise(p, paper_sigma,
                    "s = 2 L sqrt(log(3n/delta) log(2/delta)) / epsilon (Algorithm 2, line 4)");
  if (p.accountant == Accountant::kPaper && o.epsilon > 1)
    AddNote(p, "Theorem 4 covers epsilon <= 1 only; privacy rests on dperm's accountant");

  // Step size (Theorem 5: eta < 2/beta_F; Theorem 6 / Lemma 12 for the default).
  const double beta_f = p.beta + p.mu;
  p.max_step_size = 2 / beta_f;
  p.norm_bound = RrpsgdDistanceBound(p);  // D_F
  if (o.step_size > 0) {
    p.step_size = o.step_size;
    if (!(p.step_size < p.max_step_size))
      ThrowInvalid("step_size " + FormatNumber(p.step_size) +
                       " must be below 2/beta_F = " + FormatNumber(p.max_step_size) +
                       " (Theorem 5: the round weights 2 eta - beta_F eta^2 must be positive)",
                   "Omit step_size to use the default, or choose a smaller one.");
  } else {
    double sigma = std::sqrt(RrpsgdVarianceBound(p, p.noise_scale));
    p.step_size = std::min(1 / beta_f, p.norm_bound / (sigma * std::sqrt(double(p.iterations))));
  }
  AddNote(p,
          "R is uniform on {1, ..., T} (Theorem 5's weights 2 eta - beta_F eta^2 are equal for a "
          "constant step); privacy is charged for all T rounds");
  return p;
}

int64_t DrawRandomRound(const Plan& plan, SecureRng& rng) {
  // Theorem 5: P(R = k + 1) = (2 eta_k - beta_F eta_k^2) / sum_r (2 eta_r -
  // beta_F eta_r^2), k = 0 .. T-1. Every eta_k is plan.step_size < 2/beta_F,
  // so the weights are equal and positive: R is uniform on {1, ..., T}.
  return 1 + static_cast<int64_t>(rng.UniformIndex(static_cast<uint64_t>(plan.iterations)));
}

Eigen::VectorXd Rrpsgd::Train(const Plan& plan, const Objective& objective, SecureRng& rng) const {
  const int64_t rounds = DrawRandomRound(plan, rng);  // Algorithm 2, line 1
  const double eta = plan.step_size;
  const uint64_t n = static_cast<uint64_t>(objective.n());
  Eigen::VectorXd w = Eigen::VectorXd::Zero(plan.dim);
  Eigen::VectorXd g(plan.dim);
  for (int64_t t = 0; t < rounds; t++) {
    if ((t & 63) == 0) CheckInterrupt();
    const int64_t row = static_cast<int64_t>(rng.UniformIndex(n));  // xi ~ U(S)
    g.setZero();
    objective.AddRowGradients(w, &row, 1, g);
    AddPlannedNoise(plan, rng, g.data());  // + z_t: discrete Gaussian of scale s, snapped
    g += objective.l2() * w;               // post-processing: not part of the noised gradient
    w -= eta * g;                          // Algorithm 2, line 5
  }
  return w;  // w_R
}

// The algorithm table's entry (registry.hpp).
template <>
const AlgorithmSpec& SpecOf<Algorithm::kRrpsgd>() {
  static const Rrpsgd mechanism;
  static const AlgorithmSpec spec = [] {
    AlgorithmSpec s(Algorithm::kRrpsgd, mechanism);
    s.model_vectors = 2;  // w and g
    s.row_arrays = 0;
    s.options = {"iterations", "step_size", "batch_size"};
    s.refusals = {{"radius", "Algorithm 2 does not project; the regulariser needs no bound on w"}};
    s.needs_delta = "it adds Gaussian noise to every step";
    return s;
  }();
  return spec;
}

}  // namespace dperm
