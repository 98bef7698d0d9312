// Output-perturbation full-batch gradient descent (Zhang et al. 2017,
// Algorithm 1): run T steps of w <- w - eta grad F(w) from w_0 = 0, then
// release w_T + z with noise z scaled to the L2 sensitivity of w_T.
//
// Neighbouring relation: replace-one (same n, one row changed); n is public.
// Rows are clipped to ||x|| <= feature_bound, so every training row (with its
// intercept column) has norm <= R = sqrt(feature_bound^2 + fit_intercept).
//
// Sensitivity, accountant => 'tight' (the default). Let S, S' differ in row n
// and F_S = C + f_n/n, F_S' = C + f'_n/n, where C = 1/n sum_{i<n} f_i +
// mu/2 ||w||^2 is common to both runs. The regulariser sits inside C, so it
// never enters the sensitivity. One step is
//   w_{t+1} - w'_{t+1} = [G(w_t) - G(w'_t)] - eta/n [grad f_n(w_t) - grad f'_n(w'_t)]
// with G(w) = w - eta grad C(w). Logistic and Huber losses are L-Lipschitz on
// all of R^dim (|f'| is bounded, ||x|| <= R), so the last bracket is at most
// 2L whatever w_t, w'_t are: no projection is needed.
//  * mu > 0: C is mu-strongly convex and (beta + mu)-smooth, so for
//    eta <= 2/(beta + 2 mu) the gradient map G is a (1 - eta mu)-contraction
//    (Nesterov, Thm 2.1.15 / the standard contraction of GD on strongly convex
//    smooth functions: max(|1 - eta mu|, |1 - eta (beta + mu)|) = 1 - eta mu).
//    Hence Delta_{t+1} <= (1 - eta mu) Delta_t + 2 eta L / n, Delta_0 = 0, and
//    Delta_T = 2L/(n mu) (1 - (1 - eta mu)^T) <= 2L/(n mu).
//    (Lemma 3 of the paper gives 5L(mu + beta)/(n mu beta), at least 2.5x more.)
//  * mu = 0: C is convex and beta-smooth, so for eta <= 2/beta the map G is
//    non-expansive (co-coercivity of the gradient); Delta_{t+1} <= Delta_t +
//    2 eta L / n and Delta_T = 2 eta L T / n. (Lemma 2 gives 3 L T eta / n.)
//
// Sensitivity, accountant => 'paper': Lemma 2 (3 L T eta / n, eta <= 1/beta)
// and Lemma 3 (5 L (mu + beta_f)/(n mu beta_f), eta = 1/(mu + beta_f)), where
// the paper's f includes the regulariser so beta_f = beta + mu. Both are at
// least the tight bound for the same eta, so the paper mode is private by the
// tight analysis as well.
//
// Noise (Algorithm 1, lines 4-8): delta = 0 gives epsilon-DP noise with
// density ~ exp(-eps ||z|| / Delta) (radius ~ Gamma(dim, Delta/eps), uniform
// direction). delta > 0 gives Gaussian noise; 'tight' calibrates sigma with
// the analytic Gaussian mechanism (Balle & Wang, ICML 2018, Thm 8), exact for
// every epsilon; 'paper' uses line 7's density ~ exp(-eps^2 ||z||^2 /
// (4 log(2/delta) Delta^2)), i.e. sigma = sqrt(2 log(2/delta)) Delta / eps,
// raised to the analytic sigma in the rare case (large epsilon) where line 7
// would not reach (epsilon, delta)-DP.
#include "dperm/algorithms/output_gd.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/accounting/analytic_gaussian.hpp"
#include "dperm/plan/plan_noise.hpp"
#include "dperm/plan/plan_steps.hpp"
#include "dperm/algorithms/registry.hpp"

namespace dperm {
namespace {

// Above this T a plan is capped: the optimisation error it leaves is stated in
// the plan's note. Privacy holds for every T (the sensitivity follows T).
const int64_t kMaxDefaultIterations = 100000;
// Default T (l2 > 0) leaves an optimisation error below this fraction of
// the noise's, or below kStatisticalShare of the minimiser's own statistical
// error, whichever is larger (PlanTight).
const double kOptimisationShare = 0.01;
const double kStatisticalShare = 0.001;
// D, the norm bound of the minimiser used to pick T when mu = 0. It only
// tunes T (public); the `iterations` option overrides it.
const double kConvexNormBound = 1.0;

// E||z||^2 per unit of sensitivity, for choosing T before Delta is known.
double NoisePerUnitSq(const Plan& p) {
  if (p.options.delta > 0) {
    double s = p.accountant == Accountant::kPaper
                   ? std::sqrt(2 * std::log(2 / p.options.delta)) / p.options.epsilon
                   : AnalyticGaussianSigma(p.options.epsilon, p.options.delta, 1.0);
    return ExpectedNoiseSq(NoiseKind::kGaussian, p.dim, s);
  }
  return ExpectedNoiseSq(NoiseKind::kLaplaceVector, p.dim, 1.0 / p.options.epsilon);
}

int64_t DefaultIterations(Plan& p, double t) { return CapIterations(p, t, kMaxDefaultIterations); }

// Tight analysis: step size, iterations and sensitivity.
void PlanTight(Plan& p) {
  const Options& o = p.options;
  if (p.mu > 0) {
    p.max_step_size = 2 / (p.beta + 2 * p.mu);
    p.step_size = o.step_size > 0 ? o.step_size : p.max_step_size;
    CheckStepSize(p, "2/(beta + 2 l2)");
    double c = 1 - p.step_size * p.mu;  // contraction factor per step
    // ||w_hat|| <= L/mu: at the minimiser mu w_hat = -mean grad f_i, |.| <= L.
    p.norm_bound = p.L / p.mu;
    if (o.iterations > 0) {
      p.iterations = o.iterations;
      p.iterations_rule = "given";
    } else {
      // Theorem 2's choice, in our constants: GD contracts the distance to
      // w_hat by c per step, so F(w_T) - F(w_hat) <= (beta+mu)/2 c^{2T} D^2,
      // while the noise costs about (beta+mu)/2 E||z||^2 (E z = 0, F is
      // (beta+mu)-smooth). Take the smallest T whose optimisation error is at
      // most the larger of
      //  * 1% of the noise's (Delta bounded by 2L/(n mu)), and
      //  * 0.1% of L^2/(mu n), the order of the statistical excess risk that
      //    the exact minimiser itself carries (Shalev-Shwartz, Shamir, Srebro
      //    & Sridharan, "Stochastic Convex Optimization", COLT 2009, Thm 6:
      //    4 L^2/(mu n) for a mu-strongly convex, L-Lipschitz objective):
      //    below it the data cannot tell two models apart. Without this cap
      //    T grows like log n (the noise shrinks like 1/n^2), with it like
      //    (log n)/2 at large n (42 passes at 10M x 50).
      // D = ||w_0 - w_hat|| = ||w_hat|| <= min(L/mu, sqrt(F0/mu)), F0 >=
      // F(0) the public ZeroModelLossBound: F is mu-strongly convex with
      // 0 in its subdifferential at w_hat, so F(0) >= F(w_hat) + mu/2
      // ||w_hat||^2, and F(w_hat) >= mu/2 ||w_hat||^2 since every loss is
      // >= 0; hence ||w_hat||^2 <= F(0)/mu. With a private intercept offset
      // the margin is shifted and F(0) is not bounded by F0: there D = L/mu.
      // Privacy: T is a function of public inputs only (n, d, epsilon,
      // delta, the loss's constants), and the sensitivity below follows the
      // T actually run, so any such T is private; the rule tunes utility.
      double noise = NoisePerUnitSq(p) * std::pow(2 * p.L / (p.n * p.mu), 2);
      double smooth = p.beta + p.mu;
      double d2 = p.norm_bound * p.norm_bound;
      if (!(o.fit_intercept && o.intercept_offset)) d2 = std::min(d2, ZeroModelLossBound(p) / p.mu);
      double target = std::max(kOptimisationShare * smooth / 2 * noise,
                               kStatisticalShare * p.L * p.L / (p.mu * double(p.n)));
      double ratio = smooth / 2 * d2 / target;
      double t = ratio > 1 ? std::log(ratio) / (-2 * std::log(c)) : 1;
      p.iterations = DefaultIterations(p, t);
      p.iterations_rule =
          "smallest T with optimisation error <= max(1% of noise error, 0.1% of L^2/(n l2)) "
          "(Theorem 2)";
    }
    // Delta_T = 2L/(n mu) (1 - c^T) -- derivation at the top of this file.
    p.sensitivity = TightGdSensitivity(p.L, p.mu, p.step_size, p.iterations, p.n);
    p.sensitivity_rule = "2 L / (n l2) * (1 - (1 - eta l2)^T)";
  } else {
    p.max_step_size = 2 / p.beta;
    p.step_size = o.step_size > 0 ? o.step_size : 1 / p.beta;
    CheckStepSize(p, "2/beta");
    p.norm_bound = kConvexNormBound;
    if (o.iterations > 0) {
      p.iterations = o.iterations;
      p.iterations_rule = "given";
    } else {
      // Theorem 3's trade-off with our constant: optimisation error
      // D^2/(2 eta T) against noise error beta/2 k (2 eta L T/n)^2, where
      // k = E||z||^2 per unit sensitivity; the sum is smallest at
      // T^3 = D^2 n^2 / (8 beta k eta^3 L^2).
      double k = NoisePerUnitSq(p);
      double eta = p.step_size;
      double t3 = p.norm_bound * p.norm_bound * double(p.n) * double(p.n) /
                  (8 * p.beta * k * eta * eta * eta * p.L * p.L);
      p.iterations = DefaultIterations(p, std::cbrt(t3));
      p.iterations_rule = "Theorem 3 trade-off with Delta = 2 eta L T / n, D = 1";
    }
    // Delta_T = 2 eta L T / n -- derivation at the top of this file.
    p.sensitivity = TightGdSensitivity(p.L, 0, p.step_size, p.iterations, p.n);
    p.sensitivity_rule = "2 eta L T / n";
  }
}

// The paper's analysis (Lemmas 2 and 3, Theorems 2 and 3, constants 1).
void PlanPaper(Plan& p) {
  const Options& o = p.options;
  double eps = o.epsilon;
  double dim = p.dim;
  // Theorems 2/3 put d^2 (epsilon-DP) or d log(1/delta) in their choice of T.
  double dim_term = o.delta > 0 ? dim * std::log(1 / o.delta) : dim * dim;
  if (p.mu > 0) {
    if (p.n < 2)
      ThrowInvalid(
          "accountant \"paper\" needs at least 2 rows when l2 > 0 (Lemma 3 assumes n >= 2)");
    double beta_f = p.beta + p.mu;  // the paper's f includes mu/2 ||w||^2
    p.max_step_size = 1 / (p.mu + beta_f);
    p.step_size = o.step_size > 0 ? o.step_size : p.max_step_size;
    CheckStepSize(p, "1/(l2 + beta_f), Lemma 3");
    p.norm_bound = p.L / p.mu;
    if (o.iterations > 0) {
      p.iterations = o.iterations;
      p.iterations_rule = "given";
    } else {
      // Theorem 2: T = (mu^2 + beta^2)/(mu beta) log(mu^2 n^2 eps^2 D^2 / (L^2 dim_term)).
      double arg = p.mu * p.mu * double(p.n) * double(p.n) * eps * eps * p.norm_bound *
                   p.norm_bound / (p.L * p.L * dim_term);
      double t = (p.mu * p.mu + beta_f * beta_f) / (p.mu * beta_f) * std::log(std::max(arg, 1.0));
      p.iterations = DefaultIterations(p, t);
      p.iterations_rule = "Theorem 2";
    }
    // Lemma 3: Delta = 5 L (mu + beta)/(n mu beta), beta = beta_f.
    p.sensitivity = 5 * p.L * (p.mu + beta_f) / (double(p.n) * p.mu * beta_f);
    p.sensitivity_rule = "5 L (l2 + beta_f) / (n l2 beta_f), Lemma 3";
  } else {
    p.max_step_size = 1 / p.beta;
    p.step_size = o.step_size > 0 ? o.step_size : p.max_step_size;
    CheckStepSize(p, "1/beta, Lemma 2");
    p.norm_bound = kConvexNormBound;
    if (o.iterations > 0) {
      p.iterations = o.iterations;
      p.iterations_rule = "given";
    } else {
      // Theorem 3: T = (beta^2 n^2 eps^2 D^2 / (L^2 dim_term))^(1/3).
      double t3 = p.beta * p.beta * double(p.n) * double(p.n) * eps * eps * p.norm_bound *
                  p.norm_bound / (p.L * p.L * dim_term);
      p.iterations = DefaultIterations(p, std::cbrt(t3));
      p.iterations_rule = "Theorem 3";
    }
    // Lemma 2: Delta = 3 L T eta / n.
    p.sensitivity = 3 * p.L * double(p.iterations) * p.step_size / double(p.n);
    p.sensitivity_rule = "3 L T eta / n, Lemma 2";
  }
}

// Noise for the plan's sensitivity (Algorithm 1, lines 4-8); with
// accountant 'paper', line 7: sigma = sqrt(2 log(2/delta)) Delta / epsilon.
void PlanNoise(Plan& p) {
  const Options& o = p.options;
  double paper = o.delta > 0 ? std::sqrt(2 * std::log(2 / o.delta)) * p.sensitivity / o.epsilon : 0;
  PlanOutputNoise(p, paper, "sigma = sqrt(2 log(2/delta)) Delta / epsilon (Algorithm 1, line 7)");
}

}  // namespace

double TightGdSensitivity(double L, double mu, double eta, int64_t T, int64_t n) {
  if (mu > 0) {
    // 1 - (1 - eta mu)^T computed as -expm1(T log1p(-eta mu)) for accuracy.
    double shrink = -std::expm1(double(T) * std::log1p(-eta * mu));
    return 2 * L / (double(n) * mu) * shrink;
  }
  return 2 * eta * L * double(T) / double(n);
}

Plan OutputGd::MakePlan(const Options& options, LossKind loss, int64_t n, int d) const {
  Plan p = BasePlan(options, loss, Algorithm::kOutputGd, n, d);
  if (p.accountant == Accountant::kPaper) PlanPaper(p);
  else PlanTight(p);
  PlanNoise(p);
  return p;
}

Eigen::VectorXd OutputGd::Train(const Plan& plan, const Objective& objective,
                                SecureRng& rng) const {
  Eigen::VectorXd w = Eigen::VectorXd::Zero(plan.dim);
  for (int64_t t = 0; t < plan.iterations; t++) {
    if ((t & 15) == 0) CheckInterrupt();
    ReportIterations(t, plan.iterations);
    w -= plan.step_size * objective.Gradient(w);  // Algorithm 1, line 2
  }
  ReportIterations(plan.iterations, plan.iterations);
  AddPlannedNoise(plan, rng, w.data());  // snapped discrete noise (noise.hpp)
  return w;
}

// The algorithm table's entry (registry.hpp).
template <>
const AlgorithmSpec& SpecOf<Algorithm::kOutputGd>() {
  static const OutputGd mechanism;
  static const AlgorithmSpec spec = [] {
    AlgorithmSpec s(Algorithm::kOutputGd, mechanism);
    s.model_vectors = 2;  // w and its gradient
    s.row_arrays = 0;
    s.options = {"iterations", "step_size"};
    s.streams = true;
    return s;
  }();
  return spec;
}

}  // namespace dperm
