// Efficient objective perturbation (Bassily, Feldman, Talwar & Thakurta,
// NeurIPS 2019 -- seed 002 -- Section 5, "Efficient Objective Perturbation":
// "first obtain an approximate minimizer that is sufficiently close to the
// true minimizer, and then perturb it with only a small amount of Gaussian
// noise"; the solver is SVRG [JZ13, XZ14]).
//
//   1. b ~ N(0, sigma_1^2 I); P(w) = F(w) + lambda ||w||^2 + <b, w>/n exactly
//      as in objective (objective_perturbation.cpp: lambda, loss checks,
//      normalisation, and the RDP curve of the exact minimiser w*). b is
//      drawn exactly and rounded to sigma_1 2^-20 (objective_perturbation.cpp,
//      "Secure noise"); r below grows by the rounding's effect on w*.
//   2. Exactly K SVRG epochs on P from w = 0 (K from the plan: public),
//      then the certificate ||grad P(w)|| <= mu_P r/2 at the last snapshot,
//      mu_P = 2 lambda + l2 the strong convexity of P. Strong convexity
//      gives ||w - w*|| <= ||grad P(w)||/mu_P <= r/2 <= r: deterministic,
//      whatever SVRG's sampling did. (Half of r is left as a margin for
//      rounding in the computed gradient: its sums are exact on the plan's
//      grid, so the computed mean gradient is within sqrt(dim) sum_grid =
//      sum_slack/n of the exact one whatever n (exact_sum.hpp; a float sum's
//      error, up to n u L, passed mu_P r/2 = L/(80 n) near n = 3 10^7), and
//      the plan refuses sum_slack > L/160, i.e. that error above mu_P r/4.)
//      If the certificate fails (probability <= p_fail, below), nothing is
//      released.
//   3. Release w + z, z ~ N(0, sigma_2^2 I).
//
// Neighbouring relation: replace-one; n public. Losses and options: as
// objective (logistic only; softmax, Huber, l1 and delta = 0 are refused).
//
// Composition argument. Let w* = w*(S, b) be the exact minimiser. Given S,
// the map b -> w* is a bijection (objective_perturbation.cpp), so b =
// g_S(w*) and the solver's output is w = h_S(w*, xi) for SVRG's independent
// randomness xi, with ||h_S(w*, xi) - w*|| <= r for every S, w*, xi (step 2).
// Run the release as two adaptive steps: (i) publish w* -- objective
// perturbation, RDP curve eps_1(alpha); (ii) given w*, publish
// h_S(w*, xi) + z. For fixed (w*, xi), neighbouring S, S' give
// ||h_S - h_S'|| <= 2r, so (ii) is a Gaussian mechanism of L2 sensitivity 2r:
// alpha (2r)^2/(2 sigma_2^2) (Mironov 2017, Prop. 7), and mixing over xi
// does not increase a Renyi divergence's bound (quasi-convexity). Adaptive
// composition (Prop. 1) bounds (w*, w + z) by eps_1(alpha) + alpha (2r)^2 /
// (2 sigma_2^2), and w + z alone is post-processing. That sum is the plan's
// RDP curve; both sigmas are calibrated against it.
//
// The failure event. Step 2 refuses (releases nothing, after the same
// fixed work) when the certificate fails, and whether it fails depends on
// the table. Couple the release M with M~, which instead of refusing goes
// on until certified: M~ has the curve above, and M differs from M~ only
// on the failure event, of probability <= p_fail for every table (below).
// So for every set E of outputs, P(M(S) in E) <= P(M~(S) in E) + p_fail <=
// e^eps P(M~(S') in E) + delta' + p_fail <= e^eps P(M(S') in E) + delta' +
// (1 + e^eps) p_fail. dperm takes p_fail = 1e-3 delta/(1 + e^eps) and
// calibrates the curve at delta' = (1 - 1e-3) delta: the release is
// (eps, delta)-DP. (The ledger composes the curves alone, so across k
// releases it leaves out k 1e-3 delta_i; see bench/reports/timing.md.)
//
// Large epsilon. K below needs log2(1/p_fail) ~ epsilon/ln 2 epochs for the
// failure share, and 1 + e^epsilon overflows to +inf past 709 (p_fail = 0,
// K the cast of +inf: one epoch, the certificate failed and nothing was
// released at epsilon = 1e4). A mechanism that is (eps_c, delta)-DP is
// (epsilon, delta)-DP for every epsilon >= eps_c (the definition's bound
// only loosens), so the plan calibrates everything (lambda, both sigmas,
// p_fail, K) at eps_c = min(epsilon, 16) and is charged the epsilon given.
// At eps_c = 16 the failure share costs 23 epochs more than at epsilon = 0.
//
// Running time. Every loop's trip count is public or drawn from SVRG's own
// randomness xi (Option II's inner lengths, the sampled rows), which is
// independent of the table and of b: the composition argument above holds
// for every fixed xi, so revealing xi (e.g. through the time) costs
// nothing. No count depends on a test of the data. The residual channel is
// floating-point timing (exp/log1p of data-dependent arguments), as in
// objective (objective_perturbation.cpp; measured by
// bench/scripts/time/objective_timing.cpp, bench/reports/timing.md).
//
// Split between the two parts. The seed defers the efficient variant's
// parameters to the full version, so dperm states its own:
//  * r = L/(40 n mu_P), and sigma_2 = 8 r / kappa_1 where kappa_1 = 2L/sigma_1.
//    Then (a) the output part's ratio 2r/sigma_2 = kappa_1/4, so it costs
//    about 1/16 of the objective part's Gaussian term in RDP; (b) sigma_2 =
//    sigma_1/(10 n mu_P): the output noise is a tenth of the displacement
//    the objective noise causes (||b||/(n mu_P)), i.e. "a small amount".
//  * accountant => 'tight': kappa_1 is the largest one whose composed curve
//    converts to (epsilon, delta') (Balle et al. 2020, Thm 21), delta' =
//    (1 - 1e-3) delta (the rest pays for the failure event, below).
//  * accountant => 'paper': an even split with basic composition:
//    Algorithm 2's sigma_1^2 = 10 L^2 log(2/delta')/(epsilon/2)^2 for
//    (epsilon/2, delta'/2) and the classic Gaussian mechanism sigma_2 =
//    sqrt(2 log(1.25/(delta'/2))) 2r/(epsilon/2) (Dwork & Roth 2014, Thm
//    A.1); used when the composed curve at those sigmas gives (epsilon,
//    delta'), otherwise the tight sigmas (with a note).
//
// SVRG (Johnson & Zhang 2013, Thm 1, Option II): rows psi_i(w) = f_i(w) +
// (lambda + l2/2) ||w||^2 + <b, w>/n are (beta + mu_P)-smooth and P is
// mu_P-strongly convex; step eta = 0.1/(beta + mu_P) and m = ceil(50 (beta +
// mu_P)/mu_P) inner steps give the rate 1/(mu_P eta (1 - 2 (beta + mu_P) eta)
// m) + 2 (beta + mu_P) eta / (1 - 2 (beta + mu_P) eta) = 1/4 + 1/4 = 1/2 per
// epoch for E[P(w~_s) - P*]. Option II's next snapshot is the iterate after
// a uniform number t in {0, ..., m-1} of inner steps, so only t steps are
// run. The epoch count: E[gap_0] <= E(L + ||b||/n)^2/(2 mu_P) <= gap_0 :=
// (L + sigma_1 sqrt(dim)/n)^2/(2 mu_P) (E||b|| <= sigma_1 sqrt(dim), E||b||^2
// = sigma_1^2 dim), the rate holds given b, so E[gap_K] <= 2^-K gap_0 over
// b and xi; the certificate passes when gap_K <= target = mu_P^2 (r/2)^2 /
// (2 (beta + mu_P)) (then ||grad P||^2 <= 2 (beta + mu_P) gap_K). Markov's
// inequality: P(gap_K > target) <= 2^-K gap_0/target, so
//   K = ceil(log2(gap_0 / (target p_fail)))
// epochs certify with probability >= 1 - p_fail, on every table. Training
// runs exactly K epochs and one more full gradient (the certificate): n (K
// + 1) + 2 sum_s t_s per-row gradients, expected K (n + m - 1) + n, which
// the plan reports (the sum of the t_s is random, not data-dependent).
#include "dperm/algorithms/objective_approx.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/algorithms/audit_seam.hpp"
#include "dperm/noise/exact_normal.hpp"
#include "dperm/noise/noise.hpp"
#include "dperm/plan/plan_steps.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/accounting/rdp.hpp"
#include "dperm/accounting/budget.hpp"

namespace dperm {
namespace {

// r = L / (kRadiusDivisor n mu_P); output ratio kappa_2 = kOutputShare kappa_1.
const double kRadiusDivisor = 40;
const double kOutputShare = 0.25;
// SVRG constants for the per-epoch rate 1/2 (Johnson & Zhang 2013, Thm 1).
const double kSvrgStep = 0.1;
const double kSvrgInner = 50;
// p_fail = kFailureShare delta / (1 + e^eps); the curve is calibrated at
// (1 - kFailureShare) delta (the failure event's coupling, above).
const double kFailureShare = 1e-3;
// Plans calibrate at eps_c = min(epsilon, kMaxCertifiedEpsilon) ("Large
// epsilon" above): at most 1.44 * 16 = 23 epochs pay for the failure event's
// e^eps_c, and at eps_c = 16 the noise is already far below the ridge's bias.
const double kMaxCertifiedEpsilon = 16;

}  // namespace

int64_t SvrgInnerSteps(double row_smoothness, double strong) {
  return std::max<int64_t>(1,
                           static_cast<int64_t>(std::ceil(kSvrgInner * row_smoothness / strong)));
}

double SvrgStepSize(double row_smoothness) { return kSvrgStep / row_smoothness; }

SvrgResult SvrgFixedEpochs(const PerturbedObjective& f, double beta, double tolerance,
                           int64_t epochs, SecureRng& rng) {
  const Objective& base = f.base();
  const double mu = f.strong_convexity();
  const double smooth = beta + mu;
  const double eta = SvrgStepSize(smooth);
  const int64_t m = SvrgInnerSteps(smooth, mu);
  const int64_t n = base.n();
  const int dim = f.dim();
  SvrgResult r;
  r.w = Eigen::VectorXd::Zero(dim);
  Eigen::VectorXd w(dim), v(dim), gi(dim), gs(dim);
  // Exactly `epochs` epochs: no test of the data decides to stop early.
  for (int64_t s = 0; s < epochs; s++) {
    Eigen::VectorXd full = f.Gradient(r.w);  // the snapshot's full gradient
    r.gradient_evaluations += n;
    r.epochs++;
    // Option II: the next snapshot is the iterate after t ~ U{0..m-1} steps
    // (SVRG's randomness, independent of the data).
    int64_t t_stop = static_cast<int64_t>(rng.UniformIndex(static_cast<uint64_t>(m)));
    w = r.w;
    for (int64_t t = 0; t < t_stop; t++) {
      if ((t & 1023) == 0) CheckInterrupt();
      int64_t i = static_cast<int64_t>(rng.UniformIndex(static_cast<uint64_t>(n)));
      gi.setZero();
      gs.setZero();
      base.AddRowGradients(w, &i, 1, gi);
      base.AddRowGradients(r.w, &i, 1, gs);
      // grad psi_i(w) - grad psi_i(w~) + grad P(w~); the linear term cancels.
      v = gi - gs + mu * (w - r.w) + full;
      w -= eta * v;
    }
    r.gradient_evaluations += 2 * t_stop;
    r.w = w;
  }
  // The certificate, once, after the fixed work.
  r.gradient_evaluations += n;
  r.certified = f.Gradient(r.w).norm() <= tolerance;
  return r;
}

Plan ObjectiveApprox::MakePlan(const Options& options, LossKind loss, int64_t n, int d) const {
  const Algorithm a = Algorithm::kObjectiveApprox;
  // Calibrate at eps_c = min(epsilon, kMaxCertifiedEpsilon) (derivation at
  // the top: "Large epsilon"); the plan keeps and is charged the epsilon given.
  Options certified = options;
  certified.epsilon = std::min(options.epsilon, kMaxCertifiedEpsilon);
  Plan p = BasePlan(certified, loss, a, n, d);
  const Options& o = p.options;
  PlanObjectiveLambda(p);
  const double mu = PerturbedStrongConvexity(p);
  const double eps_j = JacobianEpsilon(p);
  const double r = p.L / (kRadiusDivisor * double(n) * mu);
  // The certificate's margin covers the exact sums' rounding (top of file).
  if (p.sum_slack > p.L / (4 * kRadiusDivisor))
    ThrowInvalid("algorithm objective_approx cannot certify its solver at n = " +
                     std::to_string(n) + " with " + std::to_string(p.dim) + " coordinates",
                 "Use algorithm objective or output_gd.");
  // The failure event costs (1 + e^eps) p_fail = kFailureShare delta of delta
  // (coupling, above): the curve gets the rest.
  const double delta_curve = (1 - kFailureShare) * o.delta;
  const double p_fail = kFailureShare * o.delta / (1 + std::exp(o.epsilon));  // o.epsilon = eps_c
  // Tight: the largest kappa_1 whose composed curve gives (epsilon, delta').
  double kappa = CalibrateObjectiveKappa(p, eps_j, kOutputShare, delta_curve);
  double sigma1 = 2 * p.L / kappa;
  p.noise_rule =
      "output noise for sensitivity 2r, sigma_2 = 8r/kappa_1; sigma_1 = 2L/kappa_1 with kappa_1 the largest whose RDP curve (exact minimiser + output noise) gives (epsilon, 0.999 delta) (0.001 delta covers the certificate's failure)";
  double paper_output = 0;  // sigma_2 / (2r) of the even split, when it is used
  if (p.accountant == Accountant::kPaper) {
    double e = o.epsilon / 2, dl = delta_curve / 2;
    double paper1 = std::sqrt(10 * std::log(1 / dl)) * p.L / e;      // Algorithm 2, line 1
    double paper2 = std::sqrt(2 * std::log(1.25 / dl)) * 2 * r / e;  // Dwork & Roth, Thm A.1
    double eps_paper = RdpToEpsilon(
        LedgerOrders(), ObjectivePerturbationCurve(2 * p.L / paper1, eps_j, 2 * r / paper2),
        delta_curve);
    if (eps_paper <= o.epsilon) {
      sigma1 = paper1;
      paper_output = paper2 / (2 * r);
      p.noise_rule =
          "(epsilon/2, delta'/2) each, delta' = 0.999 delta: sigma_1^2 = 10 L^2 log(2/delta')/(epsilon/2)^2 (Algorithm 2), sigma_2 = sqrt(2 log(2.5/delta')) 2r/(epsilon/2) (Gaussian mechanism)";
    } else {
      AddNote(
          p,
          "the even split's sigmas (" + FormatNumber(paper1) + ", " + FormatNumber(paper2) +
              ") do not reach (epsilon, delta) under dperm's accountant; the calibrated sigmas are used");
    }
    if (o.epsilon > 1 || o.delta > 1 / (double(n) * double(n)))
      AddNote(p, "Algorithm 2 assumes epsilon <= 1 and delta <= 1/n^2");
  }
  // b's scale rounded up to 20 significant bits (exact_normal.hpp), and the
  // radius grown by b's rounding (||b - b_exact||/(n mu_P), derivation in
  // objective_perturbation.cpp, "Secure noise"): the certificate puts the
  // point within r/2 of w*(b), so within r_b = r + rounding of w*(b_exact).
  sigma1 = DyadicNoiseScale(sigma1);
  const double r_b = r + ObjectiveNoiseRounding(sigma1, p.dim) / (double(n) * mu);
  const double sigma2 =
      paper_output > 0 ? paper_output * 2 * r_b : 2 * r_b / (kOutputShare * 2 * p.L / sigma1);
  p.mechanism_fields.Set(kObjectiveNoise, sigma1);
  p.mechanism_fields.Set(kCertificateRadius, r_b);
  p.mechanism_fields.Set(kSolverTolerance, mu * r / 2);
  p.noise = NoiseKind::kGaussian;
  p.noise_scale = sigma2;
  p.sensitivity = 2 * r_b;
  p.sensitivity_rule =
      "2 r: the released point and a neighbour's are each within r of their exact minimiser, given it (r includes the rounding of b)";
  p.rdp_curve = ObjectivePerturbationCurve(2 * p.L / sigma1, eps_j, 2 * r_b / sigma2);
  // The ledger must not compose this curve: the certificate's failure event
  // (the 1e-3 delta share, above) is a total-variation term no RDP curve
  // carries, so summed curves converted at a relation's delta budget would
  // drop it. The release is charged its full (epsilon, delta) by basic sums
  // instead; the curve above serves only the calibration.
  p.has_rdp = false;
  if (!std::isfinite(sigma1) || !std::isfinite(sigma2))
    ThrowInvalid("epsilon " + FormatNumber(o.epsilon) + " is too small: the noise scale overflows",
                 "Use a larger epsilon.");
  // Step 3 is snapped (noise.hpp): given w*, the two neighbours' rounded
  // points differ by at most ||w_S - w_S'||/g + sqrt(dim) <= 2r/g + sqrt(dim)
  // grid units, so the output noise is calibrated to 2r + sqrt(dim) g at the
  // same sigma_2/sensitivity ratio the curve above was computed with.
  SnapPlan(p, sigma2 / (2 * r_b));
  DescribeObjectiveSampler(p);
  p.expected_noise_sq = ExpectedNoiseSq(NoiseKind::kGaussian, p.dim, p.noise_scale);
  if (!std::isfinite(p.expected_noise_sq))
    ThrowInvalid("epsilon " + FormatNumber(o.epsilon) + " is too small: the noise scale overflows",
                 "Use a larger epsilon.");
  // SVRG's schedule (derivation above).
  const double smooth = p.beta + mu;
  const int64_t m = SvrgInnerSteps(smooth, mu);
  p.step_size = SvrgStepSize(smooth);
  p.max_step_size = p.step_size;
  double g0 =
      p.L + (sigma1 * std::sqrt(double(p.dim)) + ObjectiveNoiseRounding(sigma1, p.dim)) / double(n);
  double gap0 = g0 * g0 / (2 * mu);
  double target = mu * mu * (r / 2) * (r / 2) / (2 * smooth);
  // Markov: P(gap_K > target) <= 2^-K gap0/target <= p_fail.
  p.iterations =
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil(std::log2(gap0 / (target * p_fail)))));
  p.iterations_rule =
      "exactly K SVRG epochs (Johnson & Zhang 2013, Thm 1, Option II, rate 1/2), K = ceil(log2(E[gap_0]/(target p_fail))), p_fail = " +
      FormatNumber(p_fail) +
      " = 1e-3 delta/(1 + e^epsilon) (Markov); each epoch: one full gradient + U{0.." +
      std::to_string(m - 1) +
      "} single-row steps; then the certificate ||grad P|| <= solver_tolerance (no release if it fails; no early exit)";
  p.gradient_evaluations = p.iterations * (n + m - 1) + n;
  if (options.epsilon > o.epsilon) {
    AddNote(
        p,
        "calibrated as an (" + FormatNumber(o.epsilon) + ", delta)-DP release, which is (" +
            FormatNumber(options.epsilon) + ", delta)-DP: above epsilon " +
            FormatNumber(kMaxCertifiedEpsilon) +
            " the certificate's failure share 1e-3 delta/(1 + e^epsilon) would need about 1.44 epsilon more epochs");
    p.options.epsilon = options.epsilon;  // what the release is charged (the guarantee it has)
  }
  // The certificate must be testable in double precision: a gradient norm
  // far below the rounding of P's gradient terms could never be certified.
  const double tolerance = p.mechanism_fields.Get(kSolverTolerance);
  if (tolerance < 1e-12 * g0)
    ThrowInvalid(
        "algorithm objective_approx cannot certify its solver in double precision at n = " +
            std::to_string(n) + " (tolerance " + FormatNumber(tolerance) + ")",
        "Use algorithm objective or dp_gd.");
  return p;
}

Eigen::VectorXd ObjectiveApprox::Train(const Plan& plan, const Objective& objective,
                                       SecureRng& rng) const {
  // Step 1: the perturbed objective of Algorithm 2.
  // b drawn exactly and rounded to sigma_1 2^-20 (exact_normal.hpp).
  Eigen::VectorXd b = ObjectiveNoise(rng, plan.dim, plan.mechanism_fields.Get(kObjectiveNoise));
  // Test-only white-box audit seam (audit_seam.hpp; null in production): a
  // canary row's linear loss joins F as its coefficients added to b
  // (objective_perturbation.cpp, THE AUDIT CANARY).
  AuditOracle(plan.audit_seam, AuditSite::kObjectiveLinear, nullptr, plan.n, b.data(), plan.dim);
  PerturbedObjective f(objective, plan.mechanism_fields.Get(kObjectiveLambda), std::move(b));
  // Step 2: the plan's K SVRG epochs, then the certificate ||w - w*|| <= r.
  // A failure (probability <= p_fail, covered by delta above) is raised
  // after the same fixed work; the budget was charged before training.
  SvrgResult s = SvrgFixedEpochs(f, plan.beta, plan.mechanism_fields.Get(kSolverTolerance),
                                 plan.iterations, rng);
  if (!s.certified)
    throw Error(
        ErrorKind::kInternal,
        "objective_approx: the solver did not reach its distance certificate after the planned epochs "
        "(probability <= 1e-3 delta/(1 + e^epsilon)); nothing is released");
  // Step 3: discrete Gaussian noise for L2 sensitivity 2r (+ rounding),
  // the point snapped to the plan's grid.
  AddPlannedNoise(plan, rng, s.w.data());
  return s.w;
}

// The algorithm table's entry (registry.hpp).
template <>
const AlgorithmSpec& SpecOf<Algorithm::kObjectiveApprox>() {
  static const ObjectiveApprox mechanism;
  static const AlgorithmSpec spec = [] {
    AlgorithmSpec s(Algorithm::kObjectiveApprox, mechanism);
    ObjectivePerturbationSpec(s);
    s.needs_delta =
        "its Gaussian objective noise gives (epsilon, delta)-DP (Bassily et al. 2019, "
        "Theorem 5.2), and its certificate fails with a probability delta must cover";
    return s;
  }();
  return spec;
}

}  // namespace dperm
