// Planning steps shared by the mechanisms (derivations in plan_steps.hpp).
#include "dperm/plan/plan_steps.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/accounting/analytic_gaussian.hpp"
#include "dperm/accounting/budget.hpp"
#include "dperm/accounting/calibrate.hpp"
#include "dperm/rows/exact_sum.hpp"
#include "dperm/losses/loss_spec.hpp"
#include "dperm/plan/plan_noise.hpp"
#include "dperm/accounting/pld_wor.hpp"
#include "dperm/accounting/rdp_wor.hpp"
#include "dperm/accounting/rdp.hpp"

namespace dperm {
namespace {

// More features than this are refused (the dimension plus the intercept
// must fit an int, and the model is held in memory).
const int64_t kMaxFeatures = 100000000;

}  // namespace

void RejectOption(Algorithm algorithm, const char* key, const std::string& why) {
  ThrowInvalid(std::string("option \"") + key + "\" does not apply to algorithm " +
               AlgorithmName(algorithm) + ": " + why);
}

void CheckStepSize(const Plan& p, const std::string& rule) {
  if (p.step_size > p.max_step_size * (1 + 1e-12))
    ThrowInvalid("step_size " + FormatNumber(p.step_size) + " exceeds " +
                     FormatNumber(p.max_step_size) +
                     ", the largest step the sensitivity analysis covers (" + rule + ")",
                 "Omit step_size to use the default, or choose a smaller one.");
}

void AddNote(Plan& p, const std::string& note) { p.note += (p.note.empty() ? "" : "; ") + note; }

double ZeroModelLossBound(const Plan& p) {
  return LossConstantsFor(p.loss, p.options, p.R).zero_model_bound;  // the loss's (loss_spec.hpp)
}

int64_t CapIterations(Plan& p, double t, int64_t cap) {
  if (!(t < double(cap))) {
    AddNote(p, "iterations capped at " + std::to_string(cap) +
                   "; pass iterations => ... to run longer");
    return cap;
  }
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(t)));
}

Plan BasePlan(const Options& options, LossKind loss, Algorithm algorithm, int64_t n, int d) {
  const char* name = AlgorithmName(algorithm);
  if (n < 1) ThrowInvalid(std::string(name) + " needs at least one row");
  if (d < 0) ThrowInvalid("the number of features must not be negative");
  if (d > kMaxFeatures)
    ThrowInvalid("at most " + std::to_string(kMaxFeatures) + " features are supported, not " +
                 std::to_string(d));
  CheckOptionsForLoss(options, loss);
  Plan p;
  p.loss = loss;
  p.algorithm = algorithm;
  p.accountant = options.accountant;
  p.neighbors = options.neighbors;
  p.options = options;
  // The effective huber_delta (the option, or the rule of options.hpp from
  // the public target_bound), stored once here so that every reader of
  // plan.options -- L below, the mechanisms, the streaming pass spec, the
  // model's JSON and dp_explain -- sees the same value.
  p.options.huber_delta = HuberDelta(options);
  if (loss == LossKind::kHuber)
    p.huber_delta_rule = options.huber_delta > 0
                             ? "given"
                             : "default: " + FormatNumber(kHuberDeltaPerTargetBound) +
                                   " target_bound (docs/sql-reference.md, Options)";
  p.n = n;
  p.d = d;
  p.classes = LossIsMulticlass(loss) ? options.classes : 0;
  int64_t per_class = int64_t(d) + (options.fit_intercept ? 1 : 0);
  if (per_class < 1) ThrowInvalid("a model without features needs fit_intercept => true");
  int64_t dim = per_class * std::max(p.classes, 1);
  if (dim > kMaxFeatures)
    ThrowInvalid("the model would have " + std::to_string(dim) + " coordinates; at most " +
                 std::to_string(kMaxFeatures) + " are supported");
  p.dim = static_cast<int>(dim);
  double fb = options.feature_bound;
  p.R = std::sqrt(fb * fb + (options.fit_intercept ? 1.0 : 0.0));
  // L and beta of the loss at this R, with the effective huber_delta: each
  // loss derives its own (loss_spec.hpp; logistic.cpp, huber.cpp, softmax.cpp).
  const LossConstants constants = LossConstantsFor(loss, p.options, p.R);
  p.L = constants.L;
  p.beta = constants.beta;
  p.mu = options.l2;
  p.batch_size = n;
  // The grid of the exact sums: every coordinate of a row's gradient is at
  // most L in magnitude (exact_sum.hpp).
  p.sum_grid = SumGrid(p.L);
  p.sum_slack = SumSlack(n, p.dim, p.sum_grid);
  return p;
}

PureNoiseSq PureNoiseComparison(int dim) {
  // K-norm mechanisms (Hardt & Talwar 2010): density exp(-eps ||z||_K / s)
  // on R^dim has ||z||_K ~ Gamma(dim, s) and z/||z||_K distributed by the
  // cone measure of the boundary of K, so E||z||^2 = dim (dim + 1) s^2
  // E||u||^2 with E||u||^2 = (dim + 2)/dim E_{x uniform in K} ||x||^2.
  // Each K must contain the L2 ball of radius Delta:
  //  * L2 ball: E||u||^2 = 1: dim (dim + 1);
  //  * L1 ball of radius sqrt(dim) Delta = i.i.d. Laplace of scale
  //    sqrt(dim) Delta/eps: 2 dim dim;
  //  * cube of half-side Delta: E||u||^2 = (dim + 2)/3: dim (dim + 1)(dim + 2)/3.
  // The packing lower bound (Hardt & Talwar 2010, Sec. 4: 2^Omega(dim)
  // outputs Delta/2 apart inside the ball) puts every epsilon-DP mechanism
  // for the ball at Omega(dim^2) (Delta/eps)^2: none avoids dim^2, and the
  // per-coordinate Laplace is within 2 dim/(dim + 1) of the L2-Laplace.
  const double d = double(dim);
  return {2 * d * d, d * (d + 1), d * (d + 1) * (d + 2) / 3};
}

void PlanOutputNoise(Plan& p, double paper_sigma, const std::string& paper_rule) {
  const Options& o = p.options;
  p.noisy_steps = 0;
  // The sums' rounding (exact_sum.hpp): every output-perturbation
  // sensitivity is linear in the per-row bound L -- output_gd's contraction
  // Delta_{t+1} <= c Delta_t + 2 eta L/n, bolton's (2L/b_min) sum_j c(jm),
  // and the papers' bounds -- and each step's computed batch mean lies within
  // sqrt(dim) sum_grid of the exact one on both sides, which the per-row
  // bound L + sum_slack absorbs (exact_sum.hpp, (b); for bolton the errors
  // of all T = k m steps, sum_t c(t) <= m sum_j c(jm) as c increases, are
  // covered by n/b_min >= m). So Delta(L + sum_slack) = Delta (1 + sum_slack/L).
  const double exact_base = p.sensitivity;  // the exact-arithmetic bound the papers state
  p.sum_inflation = exact_base * (p.sum_slack / p.L);
  p.sensitivity += p.sum_inflation;
  const double base = p.sensitivity;  // L2 sensitivity before rounding to the release grid
  const double root_dim = std::sqrt(double(p.dim));
  double per_unit = 0;  // noise scale per unit of (inflated) sensitivity
  if (o.delta == 0) {
    // Per-coordinate discrete Laplace at the L1 sensitivity: the rounded
    // release moves by ||.||_1 <= sqrt(dim) ||.||_2 <= sqrt(dim) Delta', so
    // scale sqrt(dim) Delta'/epsilon gives epsilon-DP (the discrete Laplace /
    // geometric mechanism: CKS20 §2.2; Ghosh, Roughgarden & Sundararajan
    // 2009). Cost against the L2-Laplace vector density exp(-eps||z||/Delta)
    // used before: E||z||^2 = 2 dim^2 (Delta/eps)^2 instead of dim (dim + 1)
    // (Delta/eps)^2, a factor 2 dim/(dim + 1) (1 at dim 1, -> 2).
    p.noise = NoiseKind::kLaplace;
    per_unit = root_dim / o.epsilon;
    p.noise_rule =
        "i.i.d. discrete Laplace of scale sqrt(dim) Delta / epsilon (L1 sensitivity <= sqrt(dim) Delta)";
    const PureNoiseSq c = PureNoiseComparison(p.dim);
    AddNote(
        p,
        "pure epsilon-DP noise, E||z||^2 in units of (Delta/epsilon)^2: per-coordinate Laplace (used) " +
            FormatNumber(c.coordinate) + ", L2-Laplace " + FormatNumber(c.l2) +
            " (no exact lattice sampler), Linf-Laplace " + FormatNumber(c.linf) +
            "; every epsilon-DP release of an L2 ball grows like dim^2 (packing lower bound)");
  } else {
    p.noise = NoiseKind::kGaussian;
    // The discrete Gaussian's privacy: for an integer-valued query with
    // L2 sensitivity Delta (in grid units), N_Z(0, sigma^2) per coordinate
    // is (1/2)(Delta/sigma)^2-concentrated DP, i.e. RDP alpha Delta^2 /
    // (2 sigma^2) at every order -- the continuous Gaussian's curve, with no
    // correction. Argument: in one dimension an integer shift mu of
    // N_Z(0, sigma^2) has Renyi divergence <= alpha mu^2/(2 sigma^2) (CKS20,
    // the discrete Gaussian's concentrated-DP proposition, from its
    // sub-Gaussian moment generating function); the coordinates are
    // independent, and Renyi divergence adds over product distributions, so
    // the sum is alpha ||mu||^2/(2 sigma^2) <= alpha Delta^2/(2 sigma^2)
    // (CKS20 state this multivariate form as their Thm 14/15). The
    // analytic Gaussian calibration (Balle & Wang) is an exact statement
    // about the continuous law and is not proven for the discrete one, so
    // sigma is the smallest whose RDP curve converts to (epsilon, delta)
    // (Balle et al. 2020, Thm 21). z = sigma/Delta depends on neither.
    const std::vector<double>& orders = LedgerOrders();
    auto epsilon_of = [&](double z) {
      std::vector<double> curve(orders.size());
      for (size_t i = 0; i < orders.size(); i++) curve[i] = orders[i] / (2 * z * z);
      return RdpToEpsilon(orders, curve, o.delta);
    };
    per_unit = CalibrateNoiseMultiplier(epsilon_of, o.epsilon);
    p.noise_rule =
        "smallest sigma whose discrete-Gaussian RDP alpha Delta^2/(2 sigma^2) (Canonne, Kamath & Steinke 2020, Thm 14) gives (epsilon, delta)";
    if (p.accountant == Accountant::kPaper) {
      // The paper's sigma per unit of its own (exact-arithmetic) Delta,
      // applied to the inflated one.
      const double paper_per_unit = paper_sigma / exact_base;
      if (paper_per_unit >= per_unit) {
        per_unit = paper_per_unit;
        p.noise_rule = paper_rule + ", at the rounded sensitivity";
      } else {
        AddNote(
            p,
            "the paper's sigma does not reach (epsilon, delta) for the discrete Gaussian's RDP; the calibrated sigma is used");
      }
    }
  }
  if (!std::isfinite(per_unit * base))
    ThrowInvalid("epsilon " + FormatNumber(o.epsilon) + " is too small: the noise scale overflows",
                 "Use a larger epsilon.");
  SnapPlan(p, per_unit);
  p.rounding_inflation += p.sum_inflation;
  p.sensitivity_rule += " + the sums' rounding (exact_sum.hpp)";
  p.expected_noise_sq = ExpectedNoiseSq(p.noise, p.dim, p.noise_scale);
  // Refused while planning, before any charge: a release that cannot add
  // its noise would be charged and then fail.
  if (!std::isfinite(p.noise_scale) || !std::isfinite(p.expected_noise_sq))
    ThrowInvalid("epsilon " + FormatNumber(o.epsilon) + " is too small: the noise scale overflows",
                 "Use a larger epsilon.");
}

void PlanGradientNoise(Plan& p, double paper_sigma, const std::string& paper_rule) {
  const Options& o = p.options;
  const char* name = AlgorithmName(p.algorithm);
  if (!(o.delta > 0))
    ThrowInvalid(
        std::string("algorithm ") + name + " needs delta > 0: it adds Gaussian noise to every step",
        "Pass delta => 1e-6 (or smaller than 1/n), or use algorithm output_gd or bolton for pure epsilon-DP.");
  if (p.noisy_steps < 1) ThrowInvalid("internal: a gradient-perturbation plan needs steps");
  if (p.batch_size < 1 || p.batch_size > p.n)
    ThrowInvalid("batch_size " + std::to_string(p.batch_size) +
                 " must be between 1 and n = " + std::to_string(p.n));
  p.sampling = p.batch_size == p.n ? Sampling::kFullBatch : Sampling::kWithoutReplacement;
  p.sampling_rate = double(p.batch_size) / double(p.n);
  // C: one row's share of the mean, L/m, plus the sums' rounding: the
  // computed batch mean at the released point lies within sqrt(dim)
  // sum_grid of the exact mean (exact_sum.hpp, (a)), which sum_slack/m
  // covers (m <= n).
  p.sum_inflation = 2 * p.sum_slack / double(p.batch_size);
  const double contribution = (p.L + p.sum_slack) / double(p.batch_size);
  p.sensitivity = 2 * contribution;
  p.sensitivity_rule =
      "2 L / batch_size: a replaced row moves the batch mean gradient by at most 2L/m"
      " (+ the sums' rounding, exact_sum.hpp)";
  p.noise = NoiseKind::kGaussian;
  const int64_t steps = p.noisy_steps;
  const double q = p.sampling_rate;
  // The step noise is the rounded exact Gaussian (noise.hpp): a
  // post-processing of the continuous Gaussian mechanism with per-row
  // contribution C' (sensitivity 2C'), so the continuous-Gaussian
  // accountants apply. A step is the Gaussian mechanism on a batch of m = qn
  // rows drawn uniformly without replacement, replace-one neighbours: its
  // tight accountant is the dominating pair of Zhu, Dong & Wang 2022 (Prop.
  // 30; pld_wor.hpp). z is the smallest multiplier sigma/C' whose `steps`
  // compositions are (epsilon, delta)-DP by that pair's PLD (pessimistic
  // discretisation: an upper bound on delta(eps)), or, when the PLD cannot be
  // computed (too many grid points), by the pair's RDP (Balle et al. 2020,
  // Thm 21). q = 1 (full batch) is the Gaussian mechanism itself.
  // Above kWorPldMaxEpsilon (where the noise hardly matters) the PLD is too
  // slow to plan with, and the multiplier comes from WBK 2019 Thm 9 (valid
  // for any base mechanism's RDP curve, the Gaussian's here) as before.
  const bool pld = o.epsilon <= kWorPldMaxEpsilon;
  const std::vector<double>& orders = LedgerOrders();
  auto thm9_curve = [&](double z) {
    std::vector<double> curve(orders.size());
    for (size_t i = 0; i < orders.size(); i++)
      curve[i] = double(steps) * RdpSampledWithoutReplacementGaussian(q, z, orders[i]);
    return curve;
  };
  const double z =
      pld ? CalibrateWorGaussian(q, steps, o.epsilon, o.delta)
          : CalibrateNoiseMultiplier(
                [&](double m) { return RdpToEpsilon(orders, thm9_curve(m), o.delta); }, o.epsilon);
  double multiplier = z;
  p.noise_rule =
      pld ? "smallest sigma whose privacy loss over all steps, by the PLD of the dominating pair for "
            "Gaussian steps on batches drawn without replacement (Zhu, Dong & Wang 2022, Prop. 30; "
            "the pair's RDP when the PLD is too wide), gives (epsilon, delta)"
          : "smallest sigma whose RDP over all steps (Wang, Balle & Kasiviswanathan 2019, Thm 9; "
            "epsilon above 10) gives (epsilon, delta)";
  if (p.accountant == Accountant::kPaper) {
    if (paper_sigma >= z * contribution) {
      multiplier = paper_sigma / contribution;
      p.noise_rule = paper_rule;
    } else {
      AddNote(
          p,
          "the paper's sigma " + FormatNumber(paper_sigma) +
              " does not reach (epsilon, delta) under dperm's accountant; the calibrated sigma is used");
    }
  }
  if (!std::isfinite(multiplier * contribution))
    ThrowInvalid("epsilon " + FormatNumber(o.epsilon) + " is too small: the noise scale overflows",
                 "Use a larger epsilon.");
  // The release rounds the mean to the grid u = sigma 2^-b: a replaced row
  // moves the rounded mean by at most 2C' = 2(C + sqrt(dim) u) (noise.hpp),
  // and sigma >= multiplier C' keeps the calibrated multiplier.
  PlanExactGaussianSteps(p, multiplier);
  p.rounding_inflation += p.sum_inflation;
  // The ledger's curve: the dominating pair's RDP at the multiplier used
  // (rdp_wor.hpp; capped by the Gaussian's 2 alpha/z^2), times the steps
  // (Mironov 2017, Prop. 1). It is an RDP bound for the same mechanism as the
  // PLD (both are bounds on the one dominating pair, and the real multiplier
  // sigma/C' is >= `multiplier`, which only lowers the true curve), so
  // composing it with other rows is sound. Converted alone it gives an
  // epsilon slightly above the PLD's (RDP-to-DP conversion is lossy); the
  // ledger (ComposeCharges) reports the smaller of the summed (epsilon,
  // delta) claims and the RDP composition, so a single release is still
  // charged exactly its (epsilon, delta).
  // (Above kWorPldMaxEpsilon: the Thm 9 curve that calibrated it.)
  p.rdp_curve = pld ? RdpWorGaussianCurve(q, multiplier, steps, orders) : thm9_curve(multiplier);
  p.expected_noise_sq = ExpectedNoiseSq(NoiseKind::kGaussian, p.dim, p.noise_scale);
  if (!std::isfinite(p.noise_scale) || !std::isfinite(p.expected_noise_sq))
    ThrowInvalid("epsilon " + FormatNumber(o.epsilon) + " is too small: the noise scale overflows",
                 "Use a larger epsilon.");
}

}  // namespace dperm
