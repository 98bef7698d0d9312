// DP-LSSGD: differentially private Laplacian smoothing SGD ([LSSGD],
// "DP-LSSGD: an optimization method to lift the utility in privacy-
// preserving ERM", Algorithm 1):
//   w^{k+1} = w^k - eta A_sigma^{-1} (1/b sum_{i in B_k} grad f_i(w^k) + n_k),
//   n_k ~ N(0, nu^2 I),  A_sigma = I - sigma L  (eq. (3), L the periodic 1-D
//   Laplacian; laplacian_smoothing.hpp applies A_sigma^{-1} in O(d)).
// The loop is src/core/algorithms/noisy_minibatch.cpp; ls_sigma = 0 is plain DP-SGD,
// exactly the dp_sgd step without projection.
//
// Neighbouring relation: replace-one (same n, one row changed; the paper's
// Definition 1 "differing by one element"); n is public. Rows are clipped
// to ||x|| <= feature_bound, so each f_i is G-Lipschitz with G = L
// (plan_steps.hpp), the paper's assumption in Algorithm 1.
//
// What each step releases: the batch mean gradient of the loss plus n_k.
// With l2 > 0 the stochastic gradient is that mean plus l2 w^k; the
// regulariser's gradient depends only on the previous (already private)
// iterate and is the same on neighbouring datasets, so it does not enter
// the sensitivity. Smoothing by A_sigma^{-1} is applied to the noisy
// gradient: post-processing, so sigma never affects privacy (the paper's
// proof of Theorem 1 says the same).
//
// Sampling: B_k is b distinct rows drawn uniformly without replacement,
// as in the paper ("a random subset of size b", eq. (2); Lemma 1 is the
// bound for sampling without replacement).
//
// Sensitivity: a replaced row changes the batch mean by at most 2G/b
// (proof of Theorem 1: Delta(q_k) <= 2G/b).
//
// Privacy cost, accountant => 'tight' (default): the smallest nu whose RDP
// under sampling without replacement and replace-one neighbours (Wang,
// Balle & Kasiviswanathan 2019, Thm 9 -- the full bound behind the paper's
// Lemma 1), composed over the T steps (Mironov 2017, Prop. 1; the paper's
// Lemma 2), converts to (epsilon, delta) (Balle et al. 2020, Thm 21; the
// paper's Lemma 3 is the classic conversion) -- PlanGradientNoise.
// Accountant => 'paper': Theorem 1, nu^2 = 8 T alpha G^2 / (n^2 epsilon),
// alpha = 2 log(1/delta)/epsilon + 1, valid when epsilon^2 <= 5 T
// log(1/delta) b^2 / n^2 (the note says whether that holds); it is used when
// it is at least the calibrated nu (so it is private under dperm's
// accountant too), the calibrated nu otherwise.
//
// Softmax models: w is K class blocks of d + fit_intercept coordinates;
// A_sigma^{-1} acts on each block separately (length d + fit_intercept),
// smoothing each class's coefficients over the feature index as for a
// binary model, never mixing classes, and the operator does not depend on K.
// Binary models are one block, the intercept in its last slot.
//
// Output: the average of the iterates (Theorem 2's ergodic average, for the
// convex analysis; Theorem 3 averages too). With the constant step of
// Theorem 2 its weights are uniform; dperm averages w^1 .. w^T rather than
// w^0 .. w^{T-1} (w^0 = 0 carries no information, and the dp_sgd loop is
// shared); Theorem 2's proof telescopes the same way from k = 1 and only
// gains a term eta (G^2 + gamma d nu^2) / (2T). Post-processing.
//
// Defaults:
//   ls_sigma = 1 (kDefaultLsSigma): the experiments (Section 4.1, Table 2)
//              use 1, 2 and 3, and each beats sigma = 0 on MNIST. On
//              Fashion-MNIST (d = 784) sigma = 1 did best of 0 .. 3, so 1,
//              the smallest value the paper recommends. On the
//              low-dimensional tables (features in no particular order)
//              smoothing does not help (bench/reports/algorithms.md).
//   b        = min(128, n)                   (Section 4.1: batch size 128)
//   T        = Theorem 2, T = (D_sigma + G^2) n^2 epsilon^2 / (24 d G^2
//              log(1/delta)), with D_sigma = ||w^0 - w*||^2_{A_sigma} <=
//              (1 + 4 sigma) D^2 (w^0 = 0, lambda_max(A_sigma) <= 1 + 4 sigma)
//              and D a public bound on ||w*||: when l2 > 0 the smaller of
//              L/l2 (l2 w* = -mean grad f_i(w*)) and sqrt(2 F0/l2) (l2-strong
//              convexity, F0 >= F(0) - F(w*) the public ZeroModelLossBound:
//              ln 2, ln K, h_delta(B)), otherwise kDefaultConvexNormBound (10,
//              noisy_minibatch.hpp); at most the experiments' 50 epochs,
//              50 n / b steps; then lowered where dperm's accountant floors
//              (below)
//   eta      = min(sqrt((1 + 4 sigma) D^2 / (T (G^2 + gamma d nu^2))),
//              1/beta_F): the eta minimising the bound in the proof of
//              Theorem 2, (D_sigma + T eta^2 (G^2 + gamma d nu^2)) / (2 eta
//              T), at the plan's T and nu, at most 1/beta_F (beta_F = beta +
//              l2, the descent step of a beta_F-smooth F; A_sigma^{-1} has
//              eigenvalues in (0, 1], so the smoothed step is no longer).
//              The true ||w*|| is not public: it lies below the bound D
//              above, and the scale of the problem is D_F = sqrt(2 F0 /
//              beta_F) (the distance over which a beta_F-smooth F can fall
//              by F0; Theorem 6 of rrpsgd's paper and Ghadimi & Lan's D_F).
//              With eta tuned for D^ while the truth is D', the bound is
//              (D'/D^ + D^/D')/2 times its optimum; over D' in [D_F, D]
//              the worst case is least at the geometric mean D^ = sqrt(D_F
//              D) (StepDistance). Theorem 2 itself takes eta = 1/sqrt(T),
//              which ignores the scale of D and G: it stopped short at large
//              epsilon; tuned for the upper bound D the step was right at
//              large epsilon but too long at small epsilon; tuned for D_F
//              too short at large epsilon; the geometric mean did well at
//              both ends (bench/scripts/algorithms/default_risk.sh, bench/reports/algorithms.md).
// iterations, batch_size, step_size and ls_sigma override them; none of
// them affects privacy (the accountant takes the plan's T and b).
//
// Lowering T (a deviation from Theorem 2, utility only): Theorem 2 picks T
// for Theorem 1's nu, which grows like sqrt(T). Where the bound of Wang,
// Balle & Kasiviswanathan (Thm 9) floors (small epsilon, many steps) dperm's
// calibrated nu is 20-40 times Theorem 1's and the iterates drift (excess
// risk above F(0) - F(w_hat) at small epsilon, bench/reports/algorithms.md). The
// default T is therefore the largest T <= T_max on the grid T_max 2^{-k/2}
// whose calibrated noise is at most twice Theorem 1's nu; if there is none,
// the T minimising Theorem 2's bound (D_sigma + T eta^2 (G^2 + gamma d
// nu(T)^2)) / (2 eta T) with dperm's nu (noisy_minibatch.hpp,
// ChooseIterations). Minimising that bound alone was tried first: with the
// loose D_sigma of l2 = 0 it kept T inside the floor.
#include "dperm/algorithms/dp_lssgd.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dperm/algorithms/laplacian_smoothing.hpp"
#include "dperm/algorithms/noisy_minibatch.hpp"
#include "dperm/plan/plan_steps.hpp"
#include "dperm/algorithms/registry.hpp"

namespace dperm {
namespace {

const double kDefaultLsSigma = 1.0;
const int64_t kDefaultBatch = 128;
const double kDefaultEpochs = 50;
// Hard cap of a default T (given iterations are not capped).
const int64_t kMaxDefaultIterations = 1000000;
// A default T is kept while dperm's noise is at most this times Theorem 1's.
const double kNoiseRatio = 2;

// D_sigma = ||w^0 - w*||^2_{A_sigma} <= (1 + 4 sigma) D^2 (w^0 = 0).
double DSigma(const Plan& p) {
  return (1 + 4 * p.mechanism_fields.Get(kLsSigma)) * p.norm_bound * p.norm_bound;
}

// Theorem 1: nu^2 = 8 T alpha G^2 / (n^2 epsilon), alpha = 2 log(1/delta)/epsilon + 1.
double PaperNu(const Plan& p, int64_t iterations) {
  const double eps = p.options.epsilon, nn = double(p.n), G = p.L;
  double alpha = 2 * std::log(1 / p.options.delta) / eps + 1;
  return std::sqrt(8 * double(iterations) * alpha * G * G / (nn * nn * eps));
}

// The distance the default step is tuned for: the geometric mean of the
// public upper bound D = norm_bound and the smooth scale sqrt(2 F0 /
// beta_F) (the top of the file, "eta").
double StepDistance(const Plan& p) {
  const double smooth_scale = std::sqrt(2 * ZeroModelLossBound(p) / (p.beta + p.mu));
  return std::sqrt(std::min(smooth_scale, p.norm_bound) * p.norm_bound);
}

// gamma of Lemma 4 for the smoothed blocks (length d + fit_intercept each).
double Gamma(const Plan& p) {
  const int block = p.dim / std::max(p.classes, 1);
  return LaplacianSmoothingGamma(p.mechanism_fields.Get(kLsSigma), block);
}

// Everything that follows from T: the noise (Theorem 1, or dperm's
// accountant), then the step size from it (the top of the file, "eta").
void PlanSteps(Plan& p, int64_t iterations) {
  const Options& o = p.options;
  p.iterations = iterations;
  p.noisy_steps = iterations;
  PlanGradientNoise(
      p, PaperNu(p, iterations),
      "nu^2 = 8 T alpha G^2 / (n^2 epsilon), alpha = 2 log(1/delta)/epsilon + 1 (Theorem 1)");
  if (o.step_size > 0) {
    p.step_size = o.step_size;
    return;
  }
  // The eta minimising the proof of Theorem 2's bound (D_sigma + T eta^2
  // (G^2 + gamma d nu^2)) / (2 eta T) at this T and the plan's nu for the
  // minimax distance StepDistance (the top of the file, "eta"), at most
  // 1/beta_F (beta_F = beta + l2: the descent step of a beta_F-smooth F).
  const double T = double(iterations), G = p.L, nu = p.noise_scale;
  const double d = StepDistance(p);
  const double d_sigma = (1 + 4 * p.mechanism_fields.Get(kLsSigma)) * d * d;
  const double balanced = std::sqrt(d_sigma / (T * (G * G + Gamma(p) * p.dim * nu * nu)));
  p.step_size = std::min(balanced, 1 / (p.beta + p.mu));
}

}  // namespace

Plan DpLssgd::MakePlan(const Options& options, LossKind loss, int64_t n, int d) const {
  Plan p = BasePlan(options, loss, Algorithm::kDpLssgd, n, d);
  const Options& o = p.options;
  const double eps = o.epsilon, log_inv_delta = std::log(1 / o.delta);
  const double nn = double(n), G = p.L;

  p.mechanism_fields.Set(kLsSigma, o.ls_sigma >= 0 ? o.ls_sigma : kDefaultLsSigma);
  p.batch_size = o.batch_size > 0 ? o.batch_size : std::min<int64_t>(kDefaultBatch, n);
  // D >= ||w*|| (w^0 = 0): with l2 > 0 both L/l2 (l2 w* = -mean grad f_i(w*))
  // and sqrt(2 F(0)/l2) (l2-strong convexity: l2/2 ||w*||^2 <= F(0) - F(w*))
  // hold; the smaller is used.
  p.norm_bound = p.mu > 0 ? std::min(p.L / p.mu, std::sqrt(2 * ZeroModelLossBound(p) / p.mu))
                          : kDefaultConvexNormBound;
  p.max_step_size = std::numeric_limits<double>::infinity();  // any step is private

  if (o.iterations > 0) {
    PlanSteps(p, o.iterations);
    p.iterations_rule = "given";
  } else {
    // Theorem 2: T = (D_sigma + G^2) n^2 eps^2 / (24 d G^2 log(1/delta)).
    double t =
        (DSigma(p) + G * G) * nn * nn * eps * eps / (24 * double(p.dim) * G * G * log_inv_delta);
    p.iterations_rule = "(D_sigma + G^2) n^2 epsilon^2 / (24 d G^2 log(1/delta)) (Theorem 2)";
    double epochs = std::ceil(kDefaultEpochs * nn / double(std::min(p.batch_size, n)));
    if (t > epochs) {
      t = epochs;
      p.iterations_rule = "50 epochs of batch_size rows (Section 4.1), below Theorem 2's T";
    }
    int64_t t_max = CapIterations(p, t, kMaxDefaultIterations);
    // Theorem 2's bound (D_sigma + T eta^2 (G^2 + gamma d nu^2)) / (2 eta T),
    // with gamma of the smoothed blocks (Lemma 4).
    const double gamma = Gamma(p);
    auto bound = [&](const Plan& q) {
      double eta = q.step_size, T = double(q.iterations), nu = q.noise_scale;
      return (DSigma(q) + T * eta * eta * (G * G + gamma * q.dim * nu * nu)) / (2 * eta * T);
    };
    // Theorem 2 chose T for Theorem 1's noise; keep the largest T at which
    // dperm's accountant needs at most kNoiseRatio times that noise.
    auto accept = [](const Plan& q) {
      return q.noise_scale <= kNoiseRatio * PaperNu(q, q.iterations);
    };
    int64_t T = ChooseIterations(p, t_max, PlanSteps, bound, accept);
    PlanSteps(p, T);
    if (T < t_max) {
      p.iterations_rule += " = " + std::to_string(t_max) + ", lowered to ";
      p.iterations_rule += p.noise_scale <= kNoiseRatio * PaperNu(p, T)
                               ? "the largest T whose noise is within 2x Theorem 1's"
                               : "the T minimising Theorem 2's bound under dperm's noise";
    }
  }

  if (p.accountant == Accountant::kPaper) {
    // Theorem 1's condition on epsilon.
    const double T = double(p.iterations), b = double(p.batch_size);
    double limit = 5 * T * log_inv_delta * b * b / (nn * nn);
    bool holds = eps * eps <= limit;
    AddNote(p, std::string("Theorem 1's condition epsilon^2 <= 5 T log(1/delta) b^2 / n^2 ") +
                   (holds ? "holds (" : "does not hold (") + FormatNumber(eps * eps) +
                   (holds ? " <= " : " > ") + FormatNumber(limit) + ")");
  }
  return p;
}

Eigen::VectorXd DpLssgd::Train(const Plan& plan, const Objective& objective, SecureRng& rng) const {
  // Algorithm 1 from w^0 = 0, then the average of w^1 .. w^T
  // (noisy_minibatch.hpp).
  return NoisyMinibatchSgd(plan, objective, rng);
}

// The algorithm table's entry (registry.hpp).
template <>
const AlgorithmSpec& SpecOf<Algorithm::kDpLssgd>() {
  static const DpLssgd mechanism;
  static const AlgorithmSpec spec = [] {
    AlgorithmSpec s(Algorithm::kDpLssgd, mechanism);
    s.model_vectors =
        4;  // w, g, the running sum, the smoother's scratch; a batch and the sampler's n indices
    s.row_arrays = 2;
    s.options = {"iterations", "step_size", "batch_size", "ls_sigma"};
    s.refusals = {{"l1", "DP-LSSGD has no proximal step; use l2"},
                  {"radius", "DP-LSSGD (Algorithm 1) does not project; use algorithm dp_sgd"}};
    s.needs_delta = "it adds Gaussian noise to every step";
    return s;
  }();
  return spec;
}

}  // namespace dperm
