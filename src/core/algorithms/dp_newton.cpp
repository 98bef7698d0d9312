// dp_newton: K private Newton passes for logistic regression, the noisy
// Newton method of Avella-Medina, Bradshaw & Loh ("Differentially private
// inference via noisy optimization", Annals of Statistics 2023, arXiv
// 2103.11003: Gaussian noise on the gradient and on the Hessian at every
// step; second-order steps for private ERM are also Ganesh, Haghifam,
// Steinke & Thakurta, NeurIPS 2023). Each pass is one release of ssp's packed sums (ssp.cpp),
// taken at the current model instead of at 0 and weighted by the curvature.
//
// THE PASS. Rows t = (x, 1) (x alone without an intercept), ||t|| <= R,
// labels y in {-1, +1}, margin m = w.t, per-row loss f(m, y) (logistic; with
// the private offset of offset.hpp the shifted loss, as in ssp), whose
// derivative obeys |f'| ||t|| <= L and curvature 0 <= f'' ||t||^2 <= beta
// (the plan's L = R and beta = R^2/4: loss.hpp). At w_k a pass computes
//   v = (gamma b, u(A)),  b = sum_i f'(m_i, y_i) t_i,  A = sum_i f''(m_i) t_i t_i^T,
// u(A) the upper triangle with the off-diagonal entries times sqrt 2 (so
// ||u(A)|| = ||A||_F), M = dim + dim (dim + 1)/2 values, gamma a public
// weight (THE WEIGHT). Only v depends on the rows; it is released with
// Gaussian noise, and the step
//   w_{k+1} = w_k - (A~/n + (l2 + rho) I)^{-1} (b~/n + l2 w_k),
// A~ the released matrix with its eigenvalues clipped to >= 0 (SolveMoments
// of ssp.cpp), is post-processing of the releases so far.
//
// THE SENSITIVITY (replace-one; n public). One row t, y replaced by t', y'.
// Write a = |t|, a' = |t'|, s = cos(t, t'), u = |s|, c = f'(m, y), c' =
// f'(m', y'), h = f''(m), h' = f''(m'); then p = |c| a <= L, p' = |c'| a' <=
// L, x = h a^2 and x' = h' a'^2 lie in [0, beta], and
//   ||Delta v||^2 = gamma^2 (p^2 + p'^2 -/+ 2 p p' s) + x^2 + x'^2 - 2 x x' s^2
//                <= 2 gamma^2 L^2 (1 + u) + beta^2 max(1, 2 - 2 u^2):
// the gradient part is largest at p = p' = L; the curvature part, convex in
// x and in x', is largest at a corner of [0, beta]^2 (0, beta^2, or
// 2 beta^2 (1 - s^2) when both are beta). Over u in [0, 1]: for u >=
// 1/sqrt 2 the bound is at most 4 gamma^2 L^2 + beta^2 (u = 1); below, it is
// concave in u with its maximum at u* = min(gamma^2 L^2 / (2 beta^2),
// 1/sqrt 2). So
//   Delta^2 = max(4 gamma^2 L^2 + beta^2, 2 gamma^2 L^2 (1 + u*) + 2 beta^2 (1 - u*^2)),
// attained over the rows these bounds allow (p = p' = L, x = x' = beta, at
// s = -1 or at the angle u*), so no smaller constant follows from L and
// beta alone. (The logistic loss cannot reach |f'| = 1 and f'' = 1/4 at
// once, so its own worst pair moves v less.) test_dp_newton.cpp checks the
// bound over a grid of pairs and real rows at several w against it
// (NewtonPassSensitivity). The rounding: each
// row's M entries are rounded to the public grid q = SumGrid(max(gamma L,
// beta)) (every entry is at most that: |gamma f' t_j| <= gamma L,
// f'' t_j^2 <= beta, sqrt 2 f'' |t_j t_k| <= beta/sqrt 2) and summed exactly
// (exact_sum.hpp), which adds 2 SumSlack(n, M, q), and the snapping to the
// noise's grid g adds 2 sqrt(M) g (ssp.cpp, same argument): Delta'.
//
// THE NOISE AND THE COST. Pass k adds the rounded exact Gaussian of
// noise.hpp ("THE BRIDGE": a rounding of the continuous Gaussian mechanism
// of sensitivity Delta'_k and noise sigma_k, so continuous accountants
// apply). K such passes, each adaptive on the earlier releases, compose
// exactly as one Gaussian mechanism of ratio mu = sqrt(sum_k (Delta'_k /
// sigma_k)^2) (Gaussian differential privacy: mu_k-GDP mechanisms compose
// to sqrt(sum mu_k^2)-GDP, Dong, Roth & Su 2022, Cor. 3.3; the Gaussian
// mechanism of ratio mu is mu-GDP, Thm 2.7). So
//   mu <= 1 / AnalyticGaussianSigma(epsilon, delta, 1)
// (Balle & Wang 2018, Thm 8: the exact (epsilon, delta) curve of a Gaussian
// of that ratio) makes the release (epsilon, delta)-DP (PlanPackedGaussian
// finds the smallest dyadic sigmas that reach it), and the ledger's curve
// is alpha mu^2/2 (Mironov 2017, Props. 1 and 7). Accountant 'paper' has no
// formula of its own here: the same sigmas.
//
// THE SCHEDULE. sigma_k = sqrt(2)^(K - 1 - k) sigma_{K-1}: pass k's share
// of mu^2 is 2^k / (2^K - 1), so the last pass, whose step sets the
// released model's error, gets about half of the budget, and the first
// steps, taken far from the minimiser where a rough direction suffices, get
// little. Measured (bench/scripts/algorithms/newton_schedule.cpp, bench/results/
// newton_schedule.md; against equal shares and shares growing as k + 1 and
// (k + 1)^2, 10 and 5 seeds): at 10^5 x 8 rows of
// bench/scripts/algorithms/dp_gd_schedule.cpp, 6 passes 1.8e-5 (equal shares 5.0e-5, dp_gd's
// 100-pass default 2.9e-5); on the unit tests' ErmRows (2 10^5 x 6, larger
// margins) 1.7e-6 (equal 5.0e-6; dp_gd 3.8e-6). K = 6 (kNewtonPasses) was
// the better of 5, 6 and 8 on the second set and within the seeds' spread
// on the first.
//
// THE WEIGHT gamma sets how one pass's noise splits between the two sums.
// A share s of 1/z^2 to the gradient (z = sigma/Delta) means gamma^2 4 L^2
// : 2 beta^2 = s : (1 - s) against the parts' separate maxima:
//   gamma = (beta/L) sqrt(s / (2 (1 - s))).
// kGradientShare = 0.9 (bench/scripts/algorithms/few_pass.cpp, "split B": 5 passes within 2x
// of dp_gd's default from n epsilon/d^2 ~ 28 up, and below it at d = 8;
// bench/results/few_pass.md). With s = 0.9, u* = 1/sqrt 2 and Delta^2 =
// 4 gamma^2 L^2 + beta^2, below the separate maxima's 4 gamma^2 L^2 +
// 2 beta^2.
//
// THE RIDGE rho (public). The released A's noise has sd sigma_k on the
// diagonal and sigma_k/sqrt 2 off it, spectral norm about sqrt(2 dim)
// sigma_k; rho_k = kRidgePerNoise sqrt(dim) sigma_k / n, in mean units, keeps the system
// positive definite by a margin of the noise's order and bounds a step in a
// direction the rows do not span (bench/scripts/algorithms/few_pass.cpp's ridge 1).
//
// COST. K passes over the rows, each M roundings a row, and one eigen-
// decomposition of a dim x dim matrix per pass (its running time depends
// on the released matrix only). The K is public (kNewtonPasses, or the
// `iterations` option), so no loop count depends on the data.
// Losses: logistic only (the Huber loss's curvature jumps, softmax has a
// block Hessian); no l1 (the step solves a ridge system).
#include "dperm/algorithms/dp_newton.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "dperm/accounting/analytic_gaussian.hpp"
#include "dperm/algorithms/audit_seam.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/algorithms/ssp.hpp"
#include "dperm/noise/noise.hpp"
#include "dperm/plan/plan_noise.hpp"
#include "dperm/plan/plan_steps.hpp"
#include "dperm/rows/exact_sum.hpp"
#include "dperm/rows/packed_row.hpp"

namespace dperm {
namespace {

// The gradient's share of each pass's noise ("THE WEIGHT").
const double kGradientShare = 0.9;
// rho = kRidgePerNoise sqrt(dim) sigma / n ("THE RIDGE").
const double kRidgePerNoise = 1.0;

}  // namespace

double NewtonNoiseRatio(int64_t pass, int64_t passes) {
  return std::pow(2.0, 0.5 * double(passes - 1 - pass));
}

double NewtonPassSensitivity(double gamma, double L, double beta) {
  const double g2 = gamma * gamma * L * L, b2 = beta * beta;
  const double u = std::min(g2 / (2 * b2), 1 / std::sqrt(2.0));
  return std::sqrt(std::max(4 * g2 + b2, 2 * g2 * (1 + u) + 2 * b2 * (1 - u * u)));
}

Plan DpNewton::MakePlan(const Options& options, LossKind loss, int64_t n, int d) const {
  Plan p = BasePlan(options, loss, Algorithm::kDpNewton, n, d);
  const Options& o = p.options;
  CheckMomentDim(p, "dp_newton", "sums a pass",
                 "Use algorithm dp_gd or objective for wide models.");
  const int dim = p.dim;
  const int64_t passes = o.iterations > 0 ? o.iterations : kNewtonPasses;
  const int64_t coordinates = PackedCount(dim);
  const double gamma = p.beta / p.L * std::sqrt(kGradientShare / (2 * (1 - kGradientShare)));
  const double exact = NewtonPassSensitivity(gamma, p.L, p.beta);
  const double q = SumGrid(std::max(gamma * p.L, p.beta));
  const double slack = 2 * SumSlack(n, int(coordinates), q);
  // sigma per unit of sensitivity of the K passes together: they compose as
  // one Gaussian ("THE NOISE AND THE COST").
  const double per_unit = AnalyticGaussianSigma(o.epsilon, o.delta, 1.0);
  if (!std::isfinite(per_unit * exact * std::pow(2.0, 0.5 * double(passes))))
    ThrowInvalid("epsilon " + FormatNumber(o.epsilon) + " is too small: the noise scale overflows",
                 "Use a larger epsilon.");
  p.noise_rule =
      "the K passes' sigmas grow by sqrt 2 a pass to the last one's noise_scale, the smallest "
      "with sqrt(sum_k (Delta'_k/sigma_k)^2) <= 1/(the analytic Gaussian's sigma per unit) "
      "(Balle & Wang 2018, Thm 8): K Gaussian passes compose as one (Dong, Roth & Su 2022, Cor. 3.3)";
  if (p.accountant == Accountant::kPaper)
    AddNote(
        p, "accountant 'paper' gives dp_newton no formula of its own; sigma is the calibrated one");
  std::vector<double> ratios(static_cast<size_t>(passes));
  for (int64_t k = 0; k < passes; k++) ratios[size_t(k)] = NewtonNoiseRatio(k, passes);
  PlanPackedGaussian(p, exact, slack, coordinates, per_unit, ratios, "dp_newton");
  p.iterations = passes;
  p.passes = passes;
  p.iterations_rule = o.iterations > 0
                          ? "given"
                          : std::to_string(kNewtonPasses) +
                                " passes (a public constant: bench/results/few_pass.md)";
  p.sensitivity_rule =
      "one pass: ||Delta (gamma b, A)||^2 <= max(4 gamma^2 L^2 + beta^2, 2 gamma^2 L^2 (1 + u) + 2 beta^2 "
      "(1 - u^2)), u = min(gamma^2 L^2/(2 beta^2), 1/sqrt 2) (dp_newton.cpp) + the sums' rounding "
      "(exact_sum.hpp) + 2 sqrt(M) grid (rounding to the grid)";
  const double ridge = kRidgePerNoise * std::sqrt(double(dim)) * p.noise_scale / double(n);
  p.mechanism_fields.Set(kMomentWeight, gamma);
  p.mechanism_fields.Set(kMomentCoordinates, double(coordinates));
  p.mechanism_fields.Set(kMomentSumGrid, q);
  p.mechanism_fields.Set(kNewtonRidge, ridge);
  p.mechanism_fields.Set("noise_draws", double(passes) * double(coordinates));
  p.gradient_evaluations = passes * n;
  AddNote(
      p,
      std::to_string(passes) + " passes over the rows, each releasing " +
          std::to_string(coordinates) +
          " sums (the gradient and the upper triangle of the Hessian), pass k's sigma sqrt(2)^(K - 1 - k) "
          "noise_scale; the last pass's ridge = " +
          FormatNumber(ridge) + " (sqrt(dim) sigma_k / n for pass k) on top of l2");
  return p;
}

Eigen::VectorXd ReleaseCurvatureSums(const Plan& plan, const Objective& objective,
                                     const Eigen::VectorXd& w, int64_t pass, SecureRng& rng) {
  if (objective.dim() != plan.dim)
    throw Error(ErrorKind::kInternal, "dp_newton: the objective does not match the plan");
  Eigen::VectorXd v = objective.CurvatureSums(w, plan.mechanism_fields.Get(kMomentWeight),
                                              plan.mechanism_fields.Get(kMomentSumGrid));
  if (v.size() != int64_t(plan.mechanism_fields.Get(kMomentCoordinates)))
    throw Error(ErrorKind::kInternal, "dp_newton: the sums do not match the plan");
  // noise_scale = 0 only in tests and audits that measure the noiseless
  // output (no plan sets it), as AddPlannedNoise.
  // Test-only white-box audit seam (audit_seam.hpp; null in production).
  AuditOracle(plan.audit_seam, AuditSite::kNewtonPass, nullptr, plan.n, v.data(), int(v.size()));
  const double sigma =
      plan.noise_scale > 0
          ? PackedReleaseSigma(plan.noise_scale, NewtonNoiseRatio(pass, plan.iterations))
          : 0.0;
  if (plan.noise_scale > 0) SnapExactGaussian(rng, sigma, plan.noise_bits, v.data(), int(v.size()));
  AuditObserve(plan.audit_seam, AuditSite::kNewtonPass, v.data(), int(v.size()), sigma);
  return v;
}

Eigen::VectorXd DpNewton::Train(const Plan& plan, const Objective& objective,
                                SecureRng& rng) const {
  const double gamma = plan.mechanism_fields.Get(kMomentWeight);
  const double ridge = plan.mechanism_fields.Get(kNewtonRidge);
  const double n = double(plan.n);
  Eigen::VectorXd w = Eigen::VectorXd::Zero(plan.dim);
  for (int64_t k = 0; k < plan.iterations; k++) {
    ReportIterations(k, plan.iterations);
    Eigen::VectorXd v = ReleaseCurvatureSums(plan, objective, w, k, rng);
    // From here on post-processing: the l2 term's gradient (public w), then
    // the Newton step on the released sums (curvature weights are in A)
    // with the ridge of this pass's noise.
    v.head(plan.dim) += (gamma * n * plan.mu) * w;
    w += SolveMoments(v, plan.dim, gamma, 1.0, n, plan.mu,
                      ridge * NewtonNoiseRatio(k, plan.iterations));
  }
  ReportIterations(plan.iterations, plan.iterations);
  return w;
}

// The algorithm table's entry (registry.hpp).
template <>
const AlgorithmSpec& SpecOf<Algorithm::kDpNewton>() {
  static const DpNewton mechanism;
  static const AlgorithmSpec spec = [] {
    AlgorithmSpec s(Algorithm::kDpNewton, mechanism);
    s.options = {"iterations"};
    s.loss_needs = {
        {LossProperty::kMarginLoss, "its passes release the Hessian of a binary margin loss",
         "Use algorithm dp_gd, dp_sgd or output_gd for softmax models."},
        {LossProperty::kSmoothCurvature,
         "its passes and ridge were chosen for the logistic loss's smooth curvature",
         "Use algorithm dp_gd, output_gd or bolton for Huber regression."}};
    s.refusals = {{"l1", "each step solves a ridge system; use l2"},
                  {"radius", "it minimises over all of R^d"},
                  {"batch_size", "every pass reads every row"},
                  {"step_size", "its steps are Newton's"}};
    s.needs_delta = "its Gaussian noise on every pass gives (epsilon, delta)-DP";
    // ssp's: the packed sums (4 M words) and the eigen-decomposition's
    // matrices (3 dim^2), plus w.
    s.model_vectors = 5;
    s.model_matrices = 5;
    s.row_arrays = 0;
    // Each pass is one curvature pass of the per-pass aggregate
    // (streaming.hpp): its dim (dim + 3)/2 sums, exact, in the state's limbs.
    s.streams = true;
    return s;
  }();
  return spec;
}

}  // namespace dperm
