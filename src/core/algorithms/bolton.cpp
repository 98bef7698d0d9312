// Bolt-on private permutation SGD (Wu, Li, Kumar, Chaudhuri, Jha & Naughton,
// SIGMOD 2017, arXiv:1606.04722): draw one random permutation of the rows,
// make k passes over it in m consecutive mini-batches B_1 .. B_m, each step
//   w_t = Pi_W(w_{t-1} - a_t [ 1/|B| sum_{i in B} grad f_i(w_{t-1}) + mu w_{t-1} ]),
// from w_0 = 0 (Pi_W: projection onto the ball ||w|| <= radius, if any), and
// release w_T + z with one noise draw z scaled to the L2 sensitivity of w_T.
// Steps: a_t = eta (convex, mu = l2 = 0) or a_t = min(eta0, 1/(mu t))
// (strongly convex), t = 1 .. T = k m.
//
// Neighbouring relation: replace-one (same n, one row i* changed); n is
// public. Rows are clipped to ||x|| <= feature_bound, so every per-row loss
// (logistic, Huber, softmax) is L-Lipschitz and beta-smooth on all of R^dim.
//
// Batches. m = floor(n / b) consecutive batches of the permuted rows: the
// first n mod m hold b_min + 1 rows, the others b_min = floor(n/m) >= b.
// Every row is used once per pass and weighs at most 1/b_min in a batch mean
// (a short last batch would weigh its rows more).
//
// Sensitivity, accountant => 'tight' (the default). Fix the permutation: it
// is drawn independently of the data and is the same in both runs; a bound
// that holds for every permutation bounds the sensitivity conditioned on it,
// and the mixture over permutations of (Delta-sensitive map + noise) keeps
// the noise's guarantee. Write step t's map before projection as
//   G_t(w) = w - a_t grad C_t(w) - (a_t/|B_t|) [i* in B_t] grad f_i*(w),
//   C_t(w) = 1/|B_t| sum_{i in B_t, i != i*} f_i(w) + mu/2 ||w||^2,
// where C_t is common to both runs. The regulariser sits inside C_t, so its
// gradient mu w (unbounded on R^dim) never enters the difference.
//  * C_t = mu/2 ||w||^2 + h_t with h_t convex and beta-smooth (its weights
//    sum to <= 1), so grad h_t is 1/beta-co-coercive and, for g = grad
//    h_t(u) - grad h_t(v),
//      ||(u - a grad C_t(u)) - (v - a grad C_t(v))||^2
//        <= (1 - a mu)^2 ||u - v||^2 - a (2 (1 - a mu)/beta - a) ||g||^2,
//    a (1 - a mu)-contraction whenever a <= 2/(beta + 2 mu) (mu = 0: the map
//    is non-expansive for a <= 2/beta; Nesterov 2004, Thm 2.1.5 and the
//    contraction of output_gd.cpp).
//  * ||grad f_i*(w) - grad f'_i*(w')|| <= 2L for any w, w' (L-Lipschitz on
//    all of R^dim), and the projection onto a ball is non-expansive. So
//    delta_t = ||w_t - w'_t|| <= rho_t delta_{t-1} + [i* in B_t] 2 a_t L / b_min,
//    rho_t = 1 - mu a_t, delta_0 = 0.
//  * One permutation: i* sits at the same batch position p in every pass,
//    i.e. in steps t_j = (j-1) m + p, j = 1..k. Unrolling,
//      delta_T <= (2L / b_min) sum_j c(t_j),  c(t) = a_t prod_{s=t+1..T} rho_s.
//    c is nondecreasing in t (below) and the last batch is a smallest one,
//    so p = m is the worst position and the bound is the exact maximum of
//    the recursion over positions:
//      Delta = (2L / b_min) sum_{j=1..k} c(j m)   (BoltonSensitivity).
//  * Convex, a_t = eta <= 2/beta: c = eta and Delta = 2 k L eta / b_min.
//  * Strongly convex, a_t = min(eta0, 1/(mu t)), eta0 <= 2/(beta + 2 mu):
//    let t1 = min(T, floor(1/(mu eta0))), the last step at the cap. For
//    t >= t1 the later factors are 1 - 1/s and telescope:
//    prod_{s=t+1..T} (1 - 1/s) = t/T, so c(t) = 1/(mu T) for t > t1, and for
//    t <= t1, c(t) = eta0 (1 - mu eta0)^(t1 - t) t1/T <= eta0 t1/T <= 1/(mu T)
//    (if t1 = T: c(t) = eta0 (1 - mu eta0)^(T - t)), increasing in t. Hence
//    Delta <= 2 k L / (b_min mu T) = 2L / (mu m b_min), which is 2L/(mu n)
//    when b divides n, for any k, b and cap eta0; the exact sum is used and
//    is smaller when t1 > m (weak regularisation: the first pass runs at the
//    cap).
//
// Sensitivity, accountant => 'paper'. The bounds of Wu et al. as the seeds'
// README quotes them: convex, constant step eta, k passes, batch b:
// 2 k L eta / b; strongly convex, eta_t = min(1/beta, 1/(gamma t)):
// 2 L / (gamma n), where the paper's L is the Lipschitz constant of the whole
// per-row objective f_i + gamma/2 ||w||^2 over its hypothesis space, the
// ball W of radius R: L + gamma R. Public implementations read it the same
// way: TensorFlow Privacy, tensorflow_privacy/privacy/bolt_on/losses.py
// (lipchitz_constant = C + reg_lambda * radius(), radius = R/reg_lambda) and
// a permutation-SGD benchmark (L_reg = L + lambda R, sensitivity 2 L_reg /
// (gamma m); 2 k L eta / b for the constant step). (TensorFlow Privacy's
// optimizers.py also divides by the batch size, 2L/(gamma n b); our
// derivation, whose steps count batches, does not support that for b > 1,
// and dperm never uses it.) The paper's full text was not reachable from the
// stored corpora (only its abstract), so the quotes above are checked against
// those implementations and re-derived here, not read off the paper. Both
// paper bounds are at least dperm's for the same loop when b divides n; when
// it does not, dperm's bound can exceed 2 L/(gamma n) slightly (m b_min < n),
// and the 'paper' plan then uses dperm's (provable) bound and says so.
//
// Noise: delta = 0 gives the epsilon-DP vector noise with density
// ~ exp(-eps ||z|| / Delta) (Wu et al.'s output perturbation; as
// Zhang et al. 2017, Algorithm 1, line 5); delta > 0 gives Gaussian noise,
// with the analytic sigma (Balle & Wang 2018, Thm 8) or, with 'paper', the
// classic sigma = sqrt(2 ln(1.25/delta)) Delta / eps (Dwork & Roth 2014,
// Thm A.1), raised to the analytic sigma where that is larger.
//
// Defaults: b = 50 rows per batch (the strongly convex Delta does not depend
// on b, and the convex default step below grows like b, so Delta and the
// error model do not either: b trades steps for work per step), k = 10
// passes (fewer when n dim is large: passes n dim <= kMaxDefaultWork; the
// strongly convex Delta does not grow with k), radius L/mu when mu > 0:
// the minimiser w_hat of F satisfies mu w_hat = -1/n sum grad f_i(w_hat), so
// ||w_hat|| <= L/mu and the ball never cuts it off. No projection when
// mu = 0: neither bound uses a bounded domain (the losses are Lipschitz on
// all of R^dim), and for separable data no finite public ball need contain
// the minimiser; `radius` adds one. Step: strongly convex eta0 = 1/(beta +
// mu) (the paper's 1/beta, beta of the regularised loss); convex, the
// Theorem-3-style trade-off of output_gd.cpp, optimisation error
// D^2 b/(2 eta k n) against noise error beta/2 E||z||^2 with
// Delta = 2 k L eta / b, smallest at eta^3 = D^2 b^3 / (8 k^3 n beta c L^2)
// (c = E||z||^2 per unit of Delta, D = radius or 1), capped at 1/beta.
// `iterations` sets the number of passes k (plan.passes; plan.iterations is
// then the number of steps k m), `batch_size` b, `step_size` eta or eta0.
#include "dperm/algorithms/bolton.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "dperm/accounting/analytic_gaussian.hpp"
#include "dperm/plan/plan_noise.hpp"
#include "dperm/plan/plan_steps.hpp"
#include "dperm/algorithms/registry.hpp"

namespace dperm {
namespace {

const int64_t kDefaultBatch = 50;
const int64_t kDefaultPasses = 10;
// Default passes keep passes * n * dim at most this (a bound on the time).
const double kMaxDefaultWork = 2e9;
// D, the norm bound of the minimiser used by the convex default step.
const double kConvexNormBound = 1.0;

// The classic Gaussian mechanism's multiplier sqrt(2 ln(1.25/delta)) / eps.
double ClassicSigmaPerUnit(const Options& o) {
  return std::sqrt(2 * std::log(1.25 / o.delta)) / o.epsilon;
}

// E||z||^2 per unit of sensitivity, for choosing the step before Delta.
double NoisePerUnitSq(const Plan& p) {
  const Options& o = p.options;
  if (o.delta > 0) {
    double s = AnalyticGaussianSigma(o.epsilon, o.delta, 1.0);
    if (p.accountant == Accountant::kPaper) s = std::max(s, ClassicSigmaPerUnit(o));
    return ExpectedNoiseSq(NoiseKind::kGaussian, p.dim, s);
  }
  return ExpectedNoiseSq(NoiseKind::kLaplaceVector, p.dim, 1.0 / o.epsilon);
}

}  // namespace

int64_t BoltonBatches(int64_t n, int64_t b) { return std::max<int64_t>(1, n / b); }

int64_t BoltonBatchStart(int64_t n, int64_t m, int64_t j) {
  // The first n mod m batches have one row more than the others, so the
  // last batch (the worst position, see the top of this file) is a smallest.
  return j * (n / m) + std::min(j, n % m);
}

double BoltonStep(double eta0, double mu, int64_t t) {
  return mu > 0 ? std::min(eta0, 1 / (mu * double(t))) : eta0;
}

double BoltonSensitivity(double L, double mu, double eta0, int64_t passes, int64_t batches,
                         int64_t min_batch) {
  const double scale = 2 * L / double(min_batch);
  if (!(mu > 0)) return scale * double(passes) * eta0;
  // c(t) = a_t prod_{s>t} (1 - mu a_s), closed form (top of this file).
  const double T = double(passes) * double(batches);
  const double u = 1 / (mu * eta0);  // a_t = eta0 exactly for t <= u
  const double t1 = u >= T ? T : std::floor(u);
  const double log_rho = std::log1p(-mu * eta0);
  double sum = 0;
  for (int64_t j = 1; j <= passes; j++) {
    double t = double(j) * double(batches);
    if (t > t1) sum += 1 / (mu * T);
    else sum += eta0 * std::exp((t1 - t) * log_rho) * (t1 < T ? t1 / T : 1.0);
  }
  return scale * sum;
}

Plan Bolton::MakePlan(const Options& options, LossKind loss, int64_t n, int d) const {
  Plan p = BasePlan(options, loss, Algorithm::kBolton, n, d);
  const Options& o = p.options;
  p.sampling = Sampling::kPermutation;

  // Batches: b rows nominal, m = floor(n/b) balanced batches per pass.
  if (o.batch_size > n)
    ThrowInvalid("batch_size " + std::to_string(o.batch_size) +
                 " must be between 1 and n = " + std::to_string(n));
  p.batch_size = o.batch_size > 0 ? o.batch_size : std::min(kDefaultBatch, n);
  const int64_t m = BoltonBatches(n, p.batch_size);
  const int64_t b_min = n / m;  // every batch has floor(n/m) or ceil(n/m) rows

  // Passes (the `iterations` option) and steps.
  if (o.iterations > 0) {
    p.passes = o.iterations;
    p.iterations_rule = "option iterations = passes k over one permutation; iterations = k m steps";
  } else {
    double work = double(n) * double(p.dim);
    p.passes =
        std::max<int64_t>(1, std::min<int64_t>(kDefaultPasses, int64_t(kMaxDefaultWork / work)));
    p.iterations_rule = "k = 10 passes (fewer if 10 n dim > 2e9); iterations = k m steps";
    if (p.passes < kDefaultPasses)
      AddNote(p, "passes capped at " + std::to_string(p.passes) +
                     " for running time; pass iterations => k for k passes");
  }
  p.iterations = p.passes * m;

  // Projection radius.
  if (o.radius > 0) p.radius = o.radius;
  else if (p.mu > 0) p.radius = p.L / p.mu;  // ||w_hat|| <= L/mu
  p.norm_bound = p.radius > 0 ? p.radius : kConvexNormBound;

  // Step size and sensitivity (derivation at the top of this file).
  const double k = double(p.passes), b = double(p.batch_size);
  double paper_sensitivity = 0;
  std::string paper_rule;
  if (p.mu > 0) {
    p.max_step_size = 2 / (p.beta + 2 * p.mu);
    p.step_size = o.step_size > 0 ? o.step_size : 1 / (p.beta + p.mu);
    CheckStepSize(p, "2/(beta + 2 l2)");
    p.sensitivity = BoltonSensitivity(p.L, p.mu, p.step_size, p.passes, m, b_min);
    p.sensitivity_rule =
        "(2 L / b_min) sum_j a_{jm} prod_{s>jm} (1 - l2 a_s), a_t = min(eta0, 1/(l2 t)); <= 2 L / (l2 m b_min)";
    paper_sensitivity = 2 * (p.L + p.mu * p.radius) / (p.mu * double(n));
    paper_rule =
        "2 (L + l2 radius) / (l2 n): Wu et al., strongly convex, L of the regularised loss on the ball";
  } else {
    p.max_step_size = 2 / p.beta;
    if (o.step_size > 0) {
      p.step_size = o.step_size;
    } else {
      double c = NoisePerUnitSq(p);
      double D = p.norm_bound;
      double eta3 = D * D * b * b * b / (8 * k * k * k * double(n) * p.beta * c * p.L * p.L);
      p.step_size = std::min(1 / p.beta, std::cbrt(eta3));
    }
    CheckStepSize(p, "2/beta");
    p.sensitivity = BoltonSensitivity(p.L, 0, p.step_size, p.passes, m, b_min);
    p.sensitivity_rule = "2 k L eta / b_min";
    paper_sensitivity = 2 * k * p.L * p.step_size / b;
    paper_rule = "2 k L eta / b: Wu et al., convex, constant step";
  }
  if (p.accountant == Accountant::kPaper) {
    if (paper_sensitivity >= p.sensitivity) {
      p.sensitivity = paper_sensitivity;
      p.sensitivity_rule = paper_rule;
    } else {
      AddNote(p, "the paper's sensitivity " + FormatNumber(paper_sensitivity) +
                     " is below the provable bound for this loop (batches of >= " +
                     std::to_string(b_min) + " rows); the provable bound is used");
    }
  }
  const int64_t larger = n % m;
  if (larger > 0)
    AddNote(p, std::to_string(m) + " batches per pass: " + std::to_string(larger) + " of " +
                   std::to_string(b_min + 1) + " rows, then " + std::to_string(m - larger) +
                   " of " + std::to_string(b_min));
  else if (b_min != p.batch_size)
    AddNote(p, std::to_string(m) + " batches per pass of " + std::to_string(b_min) + " rows");

  // One noise draw on the output.
  double paper_sigma = o.delta > 0 ? ClassicSigmaPerUnit(o) * p.sensitivity : 0;
  PlanOutputNoise(p, paper_sigma,
                  "sigma = sqrt(2 ln(1.25/delta)) Delta / epsilon (Dwork & Roth 2014, Thm A.1)");
  return p;
}

Eigen::VectorXd Bolton::Train(const Plan& plan, const Objective& objective, SecureRng& rng) const {
  const int64_t n = objective.n();
  const int64_t m = BoltonBatches(n, plan.batch_size);
  const double mu = objective.l2();
  const std::vector<int64_t> perm = RandomPermutation(rng, n);  // one permutation
  Eigen::VectorXd w = Eigen::VectorXd::Zero(plan.dim);
  Eigen::VectorXd g(plan.dim);
  int64_t t = 0;
  for (int64_t pass = 0; pass < plan.passes; pass++) {
    for (int64_t j = 0; j < m; j++) {
      if ((t & 63) == 0) CheckInterrupt();
      ReportIterations(t, plan.passes * m);
      t++;
      const int64_t begin = BoltonBatchStart(n, m, j), end = BoltonBatchStart(n, m, j + 1);
      // The next batch's rows are fetched while this one is computed (issue
      // 12: at 4.5M rows a step waited on memory for each permuted row).
      // Values are unchanged: a prefetch is only a hint.
      const int64_t next = j + 1 < m ? j + 1 : 0;
      objective.PrefetchRows(perm.data() + BoltonBatchStart(n, m, next),
                             BoltonBatchStart(n, m, next + 1) - BoltonBatchStart(n, m, next));
      g.setZero();
      objective.AddRowGradients(w, perm.data() + begin, end - begin, g);
      g /= double(end - begin);  // mean gradient of the batch
      g += mu * w;               // the regulariser, common to both runs
      w -= BoltonStep(plan.step_size, mu, t) * g;
      if (plan.radius > 0) {
        double norm = w.norm();
        if (norm > plan.radius) w *= plan.radius / norm;  // Pi_W, non-expansive
      }
    }
  }
  ReportIterations(t, plan.passes * m);
  AddPlannedNoise(plan, rng, w.data());  // snapped discrete noise (noise.hpp)
  return w;
}

// The algorithm table's entry (registry.hpp).
template <>
const AlgorithmSpec& SpecOf<Algorithm::kBolton>() {
  static const Bolton mechanism;
  static const AlgorithmSpec spec = [] {
    AlgorithmSpec s(Algorithm::kBolton, mechanism);
    s.model_vectors = 2;  // w and g; the permutation
    s.row_arrays = 1;
    s.options = {"radius", "iterations", "step_size", "batch_size"};
    return s;
  }();
  return spec;
}

}  // namespace dperm
