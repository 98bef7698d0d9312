// Sufficient-statistics perturbation (SSP) for logistic regression: the
// Functional Mechanism (Zhang, Zhang, Xiao, Yang & Winslett, "Functional
// Mechanism: Regression Analysis under Differential Privacy", VLDB 2012,
// Sections 4-5: perturb the coefficients of a polynomial approximation of
// the objective, here its degree-2 Taylor expansion) with one Gaussian
// release of the moments, as in Ferrando & Sheldon ("Private regression via
// data-dependent sufficient statistic perturbation", 2024), who release
// X^T X and X^T y-type moments with Gaussian noise and solve in closed form.
//
// THE APPROXIMATION. Rows t_i = (x_i, 1) (x_i alone without an intercept),
// ||t_i|| <= R (the plan's R: rows clipped to feature_bound, plus the
// intercept column), labels y_i in {-1, +1}, per-row loss f(m, y) of the
// margin m = w.t (logistic: log(1 + e^{-y m}); with the private offset b0
// of offset.hpp the shifted loss f(m + b0, y)). Its Taylor polynomial at
// m = 0 is f(0, y) + f'(0, y) m + f''(0) m^2/2, and for the logistic loss
// f''(0) = s(b0) s(-b0) (s the sigmoid) does not depend on y (1/4 without
// an offset, where f'(0, y) = -y/2: the brief's log 2 - y m/2 + m^2/8). The
// approximate objective
//   G(w) = 1/n sum_i [f'(0, y_i) w.t_i + c2/2 (w.t_i)^2] + lambda/2 ||w||^2,
// c2 = f''(0), lambda = l2 + rho (rho the public ridge below), is minimised by
//   (c2 A/n + lambda I) w = -b/n,  A = sum_i t_i t_i^T,  b = sum_i f'(0, y_i) t_i.
// Only A and b depend on the rows: one pass (MomentSums, objective.hpp).
//
// THE RELEASE: ONE GAUSSIAN MECHANISM. Pack v = (gamma b, u(A)) in
// M = dim + dim (dim + 1)/2 coordinates, u(A) the upper triangle with the
// off-diagonal entries times sqrt 2, so that ||u(A)||_2 = ||A||_F, and
// gamma > 0 a public weight (below). Replace-one neighbours (n public), one
// row t, y replaced by t', y':
//  * ||Delta b|| = ||f'(0, y) t - f'(0, y') t'|| <= 2 R max|f'| = 2L (the
//    plan's L: |f'| <= 1 for the logistic loss, shifted or not);
//  * ||Delta A||_F^2 = ||t t^T - t' t'^T||_F^2 = tr((t t^T - t' t'^T)^2)
//    = |t|^4 + |t'|^4 - 2 (t.t')^2 <= 2 R^4, so ||Delta A||_F <= sqrt(2) R^2
//    (equality at t orthogonal to t', both of norm R);
//  * jointly (the two parts peak at different pairs: b at t' = -t, where A
//    does not move, A at t orthogonal to t'): write a = |t|, b' = |t'|,
//    s = cos(t, t'), c = f'(0, y), c' = f'(0, y'), |c|, |c'| <= m := L/R. Then
//      ||Delta v||^2 = gamma^2 (c^2 a^2 + c'^2 b'^2 - 2 c c' a b' s)
//                      + a^4 + b'^4 - 2 a^2 b'^2 s^2,
//    a concave quadratic in s whose maximum over all real s (at s* =
//    -gamma^2 c c'/(2 a b')) is gamma^2 (c^2 a^2 + c'^2 b'^2) + a^4 + b'^4 +
//    gamma^4 c^2 c'^2 / 2 (and at a b' = 0 the s-terms vanish), so for every
//    pair
//      ||Delta v||^2 <= 2 gamma^2 L^2 + 2 R^4 + gamma^4 L^4/(2 R^4) =: Delta^2
//    (increasing in a, b', |c|, |c'|). With gamma = R = L this is 4.5 R^4,
//    against 6 R^4 for the sum of the two parts' maxima (4 gamma^2 L^2 +
//    2 R^4): sigma 13 % smaller. test_ssp.cpp checks random and extreme
//    pairs against it.
// The sums are exact (exact_sum.hpp): each row's M entries are rounded to the
// public grid q = SumGrid(max(gamma L, R^2)) (every entry is at most that:
// |gamma f' t_j| <= gamma L, t_j^2 <= R^2, sqrt 2 |t_j t_k| <= R^2/sqrt 2)
// and summed as integers. Per entry and row the rounding error is at most
// q/2 + 3u|a| (a computed with at most two roundings before the grid, u =
// 2^-53, u |a| <= q/128 by the grid's choice), and reporting the exact
// integer sum as a double adds u |S_j| <= n q/128: the computed v lies
// within n sqrt(M) q = SumSlack(n, M, q) of the exact v (< n q per entry),
// on each side, so the computed v has L2 sensitivity
//   Delta_s = Delta + 2 SumSlack(n, M, q).
// Noise: the rounded exact Gaussian of noise.hpp ("THE BRIDGE"): the
// release is g (round(v/g) + round(2^b X)), X ~ N(0, I_M) drawn exactly,
// g = sigma 2^-b, a rounding of the continuous Gaussian mechanism
// g round(v/g) + sigma X whose sensitivity is Delta' = Delta_s + 2 sqrt(M) g
// (|g round(v/g) - v| <= g per entry on each side; b = ExactGaussianBits).
// Because it is a post-processing of a continuous Gaussian mechanism, the
// analytic Gaussian calibration applies: sigma = AnalyticGaussianSigma(
// epsilon, delta, Delta') (Balle & Wang 2018, Thm 8 -- the exact (epsilon,
// delta) curve, tighter than any RDP conversion), rounded up to a dyadic
// value. The ledger's curve is the same Gaussian's RDP alpha Delta'^2 /
// (2 sigma^2) (Mironov 2017, Prop. 7), valid for this release at every
// order (it converts to a slightly larger epsilon than the analytic one,
// which only matters when the ledger composes several releases).
// Accountant 'paper': the classic sigma sqrt(2 ln(1.25/delta)) Delta'/epsilon
// (Dwork & Roth 2014, Thm A.1) when that is larger (it is for epsilon < 1,
// where the theorem holds), else the analytic one.
// Everything after the release (symmetrising, clipping, the solve) is
// post-processing of v + noise: it costs no privacy, and its running time
// (Eigen's eigen-solver iterates a data-dependent number of times) reveals
// only the released v + noise. The pass itself does the same work for every
// row (M roundings), so no loop count depends on the data.
//
// THE WEIGHT gamma. The error of w from the b part is about (sigma/gamma)
// /n and from the A part about c2 sigma ||w||/n per coordinate; with the
// sum-of-maxima sensitivity 4 gamma^2 L^2 + 2 R^4 the product (4 gamma^2 L^2
// + 2 R^4) (1/gamma^2 + c2^2 ||w||^2/2) is smallest at gamma^2 = R^2/(L c2
// ||w||). With L = R, c2 <= 1/4 and a public guess of ||w||, gamma = kWeightPerRadius R
// (bench/reports/ssp.md: 1 against 0.5, 2 and 4 on the held-out sets).
//
// THE RIDGE rho (public). The noise matrix E of c2 A/n has independent
// entries, sd sigma on the diagonal and sigma/sqrt 2 off it (the packed
// weight), so ||E|| ~ 2 sqrt(dim) sigma/sqrt 2 = sqrt(2 dim) sigma (the
// semicircle law's edge). The noisy matrix is symmetric by construction
// (one draw per upper entry); its eigenvalues are clipped to >= 0 and
//   rho = kRidgeFactor c2 sqrt(2 dim) sigma / n
// is added, so the system's smallest eigenvalue is at least rho: a ridge of
// the order of the noise's own spectral norm, from public n, epsilon, delta
// (through sigma) and the public offset (through c2). It also bounds the
// solve: a direction the data does not span gets w = noise/rho, O(1).
// kRidgeFactor = 0.7 had the fewest held-out losses of {0.3, 0.5, 0.7, 1,
// 1.5} (and 0.1, 3, 10 on fewer seeds; bench/reports/ssp.md): a larger
// ridge pulls the model to the offset's majority class, a smaller one lets
// the noise through. The user's l2 (0
// when `algorithm => 'ssp'` is given without it) is added.
//
// COST. Rows are read once (the stage-0 offset reads them once more, as for
// every algorithm); the pass costs M roundings a row, then one eigen-
// decomposition of a dim x dim matrix. Losses: logistic only (the Huber
// loss's second derivative jumps, softmax has K-1 curvature blocks).
// GCC 12 reports products inside Eigen's eigen-solver as maybe-uninitialized
// (a false positive in Eigen's headers, inlined into this file's code).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "dperm/algorithms/ssp.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Eigenvalues>

#include "dperm/accounting/analytic_gaussian.hpp"
#include "dperm/algorithms/audit_seam.hpp"
#include "dperm/accounting/budget.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/noise/exact_normal.hpp"
#include "dperm/noise/noise.hpp"
#include "dperm/plan/plan_noise.hpp"
#include "dperm/plan/plan_steps.hpp"
#include "dperm/rows/exact_sum.hpp"
#include "dperm/rows/packed_row.hpp"

namespace dperm {
namespace {

// gamma = kWeightPerRadius R (derivation above, "THE WEIGHT").
const double kWeightPerRadius = 1.0;
// rho = kRidgeFactor c2 sqrt(2 dim) sigma / n ("THE RIDGE").
const double kRidgeFactor = 0.7;

}  // namespace

void CheckMomentDim(const Plan& p, const char* algorithm, const char* what, const char* hint) {
  if (p.dim > kMaxMomentDim)
    ThrowInvalid(std::string("algorithm ") + algorithm + " releases dim (dim + 3)/2 " + what +
                     " and takes at most " + std::to_string(kMaxMomentDim) +
                     " model coordinates; this model has " + std::to_string(p.dim),
                 hint);
}

double PackedReleaseSigma(double noise_scale, double ratio) {
  return DyadicNoiseScale(noise_scale * ratio);
}

void PlanPackedGaussian(Plan& p, double exact, double slack, int64_t coordinates, double per_unit,
                        const std::vector<double>& ratios, const char* algorithm) {
  // The rounded exact Gaussian (noise.hpp): release k's sigma_k =
  // Dyadic(sigma ratios[k]) and its sensitivity Delta'_k = Delta_s + 2
  // sqrt(M) sigma_k 2^-bits. The releases compose as one Gaussian of ratio
  // mu = sqrt(sum_k (Delta'_k/sigma_k)^2) (Dong, Roth & Su 2022, Cor. 3.3),
  // which must be at most 1/per_unit: sigma is a fixed point from below.
  // One release (ssp): sigma = Dyadic(per_unit Delta'), as before.
  const double root_m = std::sqrt(double(coordinates));
  double spread = 0, widest = 0;  // sum_k ratios[k]^-2, max_k ratios[k]
  for (double r : ratios) {
    spread += 1 / (r * r);
    widest = std::max(widest, r);
  }
  if (ratios.empty() || *std::min_element(ratios.begin(), ratios.end()) != 1)
    throw Error(ErrorKind::kInternal, "PlanPackedGaussian: the smallest ratio must be 1");
  // The grid's bits for the noisiest release's sigma per sensitivity, so
  // that every release's rounding is at most 2^-10 of its sensitivity.
  const int bits = ExactGaussianBits(per_unit * std::sqrt(spread) * widest,
                                     int(std::min<int64_t>(coordinates, 1 << 30)));
  const double base = exact + slack;
  double sens = base, sigma = 0, mu_sq = 0;
  for (int i = 0;; ++i) {
    sigma = DyadicNoiseScale(per_unit * std::sqrt(spread) * sens);
    double next = base;
    mu_sq = 0;
    for (double r : ratios) {
      const double sigma_k = PackedReleaseSigma(sigma, r);
      const double sens_k = base + 2 * root_m * std::ldexp(sigma_k, -bits);
      mu_sq += (sens_k / sigma_k) * (sens_k / sigma_k);
      next = std::max(next, sens_k);
    }
    if (per_unit * per_unit * mu_sq <= 1) break;
    if (i > 200 || !std::isfinite(sigma))
      ThrowInvalid(std::string("the noise of algorithm ") + algorithm + " at epsilon " +
                       FormatNumber(p.options.epsilon) +
                       " is too wide for dperm's exact Gaussian sampler",
                   "Use a larger epsilon.");
    sens = next;
  }
  // The plan's figures are those of the release of ratio 1 (the least
  // noise, so the largest sensitivity per sigma).
  sens = base + 2 * root_m * std::ldexp(sigma, -bits);
  p.batch_size = p.n;
  p.sampling = Sampling::kFullBatch;
  p.noisy_steps = 0;
  p.noise = NoiseKind::kGaussian;
  p.noise_bits = bits;
  p.noise_scale = sigma;
  p.grid = std::ldexp(sigma, -bits);
  p.sum_inflation = slack;
  p.rounding_inflation = slack + 2 * root_m * p.grid;
  p.sensitivity = sens;
  p.noise_multiplier = sigma / sens;
  p.sampler = "rounded exact Gaussian: grid * (round(v/grid) + round(2^" + std::to_string(bits) +
              " X)), X ~ N(0, I_M) drawn exactly (Karney 2016, Alg. N), grid = sigma 2^-" +
              std::to_string(bits) +
              ": a rounding of the continuous Gaussian mechanism (noise.hpp)";
  p.expected_noise_sq = double(coordinates) * sigma * sigma;
  // Each release is a Gaussian mechanism of sensitivity Delta'_k and noise
  // sigma_k: RDP alpha Delta'_k^2/(2 sigma_k^2) at every order (Mironov 2017,
  // Prop. 7), and the releases' curves add (Prop. 1): alpha mu^2/2.
  const std::vector<double>& orders = LedgerOrders();
  p.rdp_curve.resize(orders.size());
  for (size_t i = 0; i < orders.size(); i++) p.rdp_curve[i] = orders[i] * mu_sq / 2;
}

Plan SufficientStatistics::MakePlan(const Options& options, LossKind loss, int64_t n, int d) const {
  Plan p = BasePlan(options, loss, Algorithm::kSsp, n, d);
  const Options& o = p.options;
  CheckMomentDim(p, "ssp", "moments", "Use algorithm objective or dp_gd for wide models.");
  const int dim = p.dim;
  const int64_t coordinates = PackedCount(dim);
  const double gamma = kWeightPerRadius * p.R;
  // Delta^2 = 2 gamma^2 L^2 + 2 R^4 + gamma^4 L^4/(2 R^4) (derivation above).
  const double exact = std::sqrt(2 * gamma * gamma * p.L * p.L + 2 * std::pow(p.R, 4) +
                                 std::pow(gamma * p.L, 4) / (2 * std::pow(p.R, 4)));
  const double q = SumGrid(std::max(gamma * p.L, p.R * p.R));
  const double slack = 2 * SumSlack(n, int(coordinates), q);
  // sigma per unit of sensitivity: the analytic Gaussian (Balle & Wang 2018).
  double per_unit = AnalyticGaussianSigma(o.epsilon, o.delta, 1.0);
  p.noise_rule =
      "sigma = the analytic Gaussian's (Balle & Wang 2018, Thm 8) for the rounded sensitivity";
  if (p.accountant == Accountant::kPaper) {
    const double classic = ClassicGaussianSigma(o.epsilon, o.delta, 1.0);
    if (classic >= per_unit) {
      per_unit = classic;
      p.noise_rule = "sigma = sqrt(2 ln(1.25/delta)) Delta/epsilon (Dwork & Roth 2014, Thm A.1)";
    } else {
      AddNote(
          p,
          "the classic Gaussian's sigma does not reach (epsilon, delta) at epsilon >= 1; the analytic sigma is used");
    }
  }
  if (!std::isfinite(per_unit * exact))
    ThrowInvalid("epsilon " + FormatNumber(o.epsilon) + " is too small: the noise scale overflows",
                 "Use a larger epsilon.");
  PlanPackedGaussian(p, exact, slack, coordinates, per_unit, {1.0}, "ssp");
  p.iterations = 1;
  p.iterations_rule = "one pass: the moments of the quadratic approximation, released once";
  p.passes = 1;
  p.sensitivity_rule =
      "||Delta (gamma b, A)||^2 <= 2 gamma^2 L^2 + 2 R^4 + gamma^4 L^4/(2 R^4) (the joint maximum over the "
      "angle of t and t'; ||t t^T - t' t'^T||_F^2 = |t|^4 + |t'|^4 - 2 (t.t')^2) + the sums' rounding "
      "(exact_sum.hpp) + 2 sqrt(M) grid (rounding to the grid)";
  const double sigma = p.noise_scale;
  const double ridge = kRidgeFactor * std::sqrt(2.0 * dim) * sigma / double(n);
  p.mechanism_fields.Set(kMomentWeight, gamma);
  p.mechanism_fields.Set(kMomentCoordinates, double(coordinates));
  p.mechanism_fields.Set(kMomentSumGrid, q);
  p.mechanism_fields.Set(kRidgePerCurvature, ridge);
  p.mechanism_fields.Set("noise_draws", double(coordinates));
  p.gradient_evaluations = n;
  AddNote(p, "one pass over the rows (" + std::to_string(coordinates) +
                 " moments: b and the upper triangle of A); ridge = " + FormatNumber(ridge) +
                 " f''(0) (" + FormatNumber(kRidgeFactor) + " sqrt(2 dim) sigma / n) on top of l2");
  return p;
}

Eigen::VectorXd SolveMoments(const Eigen::VectorXd& v, int dim, double gamma, double c2, double n,
                             double l2, double ridge) {
  Eigen::VectorXd b = v.head(dim) / gamma;
  Eigen::MatrixXd a(dim, dim);
  const double root2 = std::sqrt(2.0);
  Eigen::Index at = dim;
  for (int j = 0; j < dim; j++) {
    a(j, j) = v(at++);
    for (int k = j + 1; k < dim; k++) a(j, k) = a(k, j) = v(at++) / root2;
  }
  // c2 A/n with its eigenvalues clipped to >= 0, plus lambda = l2 + ridge.
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(a * (c2 / n));
  Eigen::VectorXd values = eig.eigenvalues().cwiseMax(0.0).array() + (l2 + ridge);
  const Eigen::MatrixXd& vectors = eig.eigenvectors();
  Eigen::VectorXd w = vectors * ((vectors.transpose() * (-b / n)).cwiseQuotient(values));
  return w;
}

Eigen::VectorXd ReleaseMoments(const Plan& plan, const Objective& objective, SecureRng& rng,
                               double* curvature) {
  const double gamma = plan.mechanism_fields.Get(kMomentWeight);
  const double q = plan.mechanism_fields.Get(kMomentSumGrid);
  Eigen::VectorXd v = objective.MomentSums(gamma, q, curvature);
  const int64_t coordinates = int64_t(plan.mechanism_fields.Get(kMomentCoordinates));
  if (v.size() != coordinates || objective.dim() != plan.dim)
    throw Error(ErrorKind::kInternal, "ssp: the moments do not match the plan");
  // noise_scale = 0 only in tests and audits that measure the noiseless
  // output (no plan sets it), as AddPlannedNoise.
  // Test-only white-box audit seam (audit_seam.hpp; null in production).
  AuditOracle(plan.audit_seam, AuditSite::kSspMoments, nullptr, plan.n, v.data(), int(v.size()));
  if (plan.noise_scale > 0)
    SnapExactGaussian(rng, plan.noise_scale, plan.noise_bits, v.data(), int(v.size()));
  AuditObserve(plan.audit_seam, AuditSite::kSspMoments, v.data(), int(v.size()), plan.noise_scale);
  return v;
}

Eigen::VectorXd SufficientStatistics::Train(const Plan& plan, const Objective& objective,
                                            SecureRng& rng) const {
  ReportIterations(0, 1);
  double c2 = 0;
  const Eigen::VectorXd v = ReleaseMoments(plan, objective, rng, &c2);
  ReportIterations(1, 1);
  // From here on: post-processing of the release.
  const double gamma = plan.mechanism_fields.Get(kMomentWeight);
  const double ridge = c2 * plan.mechanism_fields.Get(kRidgePerCurvature);
  return SolveMoments(v, plan.dim, gamma, c2, double(plan.n), plan.mu, ridge);
}

// The algorithm table's entry (registry.hpp).
template <>
const AlgorithmSpec& SpecOf<Algorithm::kSsp>() {
  static const SufficientStatistics mechanism;
  static const AlgorithmSpec spec = [] {
    AlgorithmSpec s(Algorithm::kSsp, mechanism);
    s.loss_needs = {
        {LossProperty::kMarginLoss,
         "its moments are those of a binary margin loss (one curvature f''(0) for every row)",
         "Use algorithm dp_gd, dp_sgd or output_gd for softmax models."},
        {LossProperty::kLabelFreeCurvature,
         "its quadratic approximation is taken at margin 0, where the Huber loss's second "
         "derivative depends on the target",
         "Use algorithm dp_gd, output_gd or bolton for Huber regression."}};
    s.refusals = {{"l1", "it solves a ridge system in closed form; use l2"},
                  {"radius", "it minimises over all of R^d"},
                  {"batch_size", "it reads every row once"},
                  {"step_size", "it takes no steps"},
                  {"iterations", "it makes one pass"}};
    s.needs_delta = "its Gaussian noise on the moments gives (epsilon, delta)-DP";
    // The moments (M ~ dim^2/2 values, their exact-sum partials and totals:
    // 4 M words) and the eigen-decomposition's matrices (3 dim^2).
    s.model_vectors = 4;
    s.model_matrices = 5;
    s.row_arrays = 0;
    s.streams = false;
    s.no_streaming =
        "its pass sums dim (dim + 3)/2 moments, and the streaming pass state holds "
        "gradient sums only";
    return s;
  }();
  return spec;
}

}  // namespace dperm
