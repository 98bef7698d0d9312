// A Plan turns options and the public size (n, d) into everything training
// will do: iterations, step size, sensitivity, noise. dp_explain prints it;
// the mechanism follows it. Nothing in a Plan depends on the data.
#pragma once
#include "dperm/util/errors.hpp"
#include "dperm/noise/noise_kind.hpp"
#include "dperm/options/options.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dperm {

struct AuditSeam;  // algorithms/audit_seam.hpp (test-only)

// How a step picks its rows.
enum class Sampling {
  kFullBatch,           // every step reads all n rows
  kWithoutReplacement,  // each step: batch_size rows drawn uniformly without replacement
  kPermutation,         // passes over one random permutation, in consecutive batches
};
const char* SamplingName(Sampling sampling);

// Figures a mechanism plans for itself (dp_lssgd's ls_sigma, the SVRG noise
// split, objective perturbation's lambda, ...): named numbers the plan
// carries and PlanJson prints in the order they were set, so a mechanism
// with figures of its own needs no field in Plan. Each mechanism names its
// keys in its own header. A figure not set reads 0.
class MechanismFields {
 public:
  void Set(const char* key, double value);
  double Get(const char* key) const;
  const std::vector<std::pair<std::string, double>>& items() const { return items_; }

 private:
  std::vector<std::pair<std::string, double>> items_;
};

// Stage 0 of a model with an intercept (offset.hpp): a noisy base statistic
// (positive count, class histogram, clipped target sum) released with pure
// epsilon0-DP before training; the mechanism's figures in Plan are planned
// at options.epsilon = epsilon - epsilon0 with the same delta.
struct OffsetPlan {
  double epsilon = 0;      // epsilon0; 0: no offset stage
  double sensitivity = 0;  // L1 sensitivity of the released sums, grid rounding included
  double noise_scale = 0;  // discrete Laplace scale per sum (the sums' units)
  double grid = 0;         // the sums are snapped to this grid (the sums' units)
  double bound = 0;        // |b0| <= bound (a public clamp)
  std::string statistic;   // what stage 0 releases
  std::string rule;        // how epsilon0 was chosen
};

// Stage 2 of a binary logistic model fitted on a private offset
// (decision.hpp): the decision threshold, chosen on the training rows by
// report noisy max over a public grid with pure epsilon-DP; the released
// intercept is shifted by it.
struct DecisionPlan {
  double epsilon = 0;              // its share of the release's epsilon; 0: no stage 2
  double noise_scale = 0;          // discrete Laplace scale of each candidate's count: 2/epsilon
  double bonus = 0;                // the public head start of threshold 0 (the model as trained)
  std::vector<double> thresholds;  // the public grid of margins, ascending (0 among them)
  std::string rule;                // how epsilon and the grid were chosen
};

struct Plan {
  LossKind loss = LossKind::kLogistic;
  Algorithm algorithm = Algorithm::kOutputGd;
  std::string algorithm_rule;  // why this algorithm, when the user did not name one
  // How options.l2 was derived when neither l2 nor the algorithm was given
  // (DefaultL2, plan_release.hpp); empty: l2 as given (or 0 with a given algorithm).
  std::string l2_rule;
  Accountant accountant = Accountant::kTight;
  Neighbors neighbors = Neighbors::kReplaceOne;
  // As given, except huber_delta (the effective value, BasePlan) and, with
  // stages 0 or 2, epsilon: the mechanism's share epsilon - StagesEpsilon
  // (TotalEpsilon gives the release's).
  Options options;
  std::string huber_delta_rule;  // Huber: where huber_delta came from

  int64_t n = 0;  // rows: public under replace-one neighbours
  // A release at the level of a privacy unit (unit_level.hpp): the rows are
  // exactly unit_rows slots per unit (n = units * unit_rows), and the plan
  // is the row-level plan at RowLevelOptions' (epsilon, delta), which group
  // privacy over unit_rows slots turns into (unit_epsilon, unit_delta) per
  // unit. unit_rows = 0: a row-level release.
  int64_t unit_rows = 0;
  int64_t units = 0;
  double unit_epsilon = 0;
  double unit_delta = 0;
  // A unit-level plan charged by its per-unit curve instead (unit_level.hpp,
  // UnitCurveApplies): every unit's k slots move the mechanism's outputs by
  // at most k times a row's, so its per-unit RDP is at most k^2 times the
  // row-level curve, which the plan keeps under alpha unit_zcdp at every
  // ledger order; the ledger curve is alpha unit_zcdp. 0: group privacy.
  double unit_zcdp = 0;
  int d = 0;        // features per row
  int classes = 0;  // softmax: K classes (0 for binary models)
  int dim = 0;      // model coordinates: max(K, 1) * (d + fit_intercept)
  double R = 0;     // bound on a training row's norm, intercept column included
  double L = 0;     // Lipschitz constant of the per-row loss in w
  double beta = 0;  // smoothness of the per-row loss in w
  double mu = 0;    // strong convexity: the l2 option
  // Exact sums over rows (exact_sum.hpp): every per-row gradient
  // contribution is rounded to sum_grid and summed in integers, and every
  // argument that bounds one row's gradient by L holds with L + sum_slack
  // (sum_slack = n sqrt(dim) sum_grid). The mechanisms' sensitivities count
  // it; sum_inflation is what it adds to `sensitivity` (also counted in
  // rounding_inflation, below).
  double sum_grid = 0;
  double sum_slack = 0;
  double sum_inflation = 0;

  double step_size = 0;
  double max_step_size = 0;  // the largest step the sensitivity analysis covers
  int64_t iterations = 0;
  double norm_bound = 0;  // D, the bound on ||w_hat|| used to choose T
  std::string iterations_rule;
  Sampling sampling = Sampling::kFullBatch;
  int64_t batch_size = 0;  // rows per step (n for the full batch)
  int64_t passes = 0;      // permutation methods: passes over the data
  double radius = 0;       // projection onto the ball ||w|| <= radius (0: none)
  MechanismFields mechanism_fields;

  // Output perturbation (noisy_steps = 0): `sensitivity` is the L2
  // sensitivity of the noiseless output and the noise is added once.
  // Gradient perturbation (noisy_steps > 0): each of `noisy_steps` steps
  // releases a batch's mean gradient, snapped to `grid`, plus discrete
  // Gaussian noise of scale noise_scale (noise.hpp); a row adds at
  // most C = sensitivity / 2 to that mean (rounding included: C = L/m +
  // sqrt(dim) grid/2), so one replaced row moves it by at most
  // `sensitivity` = 2C, and noise_multiplier = noise_scale / C.
  int64_t noisy_steps = 0;
  double sampling_rate = 1;  // batch_size / n
  double noise_multiplier = 0;
  double sensitivity = 0;
  std::string sensitivity_rule;
  NoiseKind noise = NoiseKind::kGaussian;
  double noise_scale = 0;  // sigma (Gaussian) or Delta/epsilon (Laplace vector)
  std::string noise_rule;
  double expected_noise_sq = 0;  // E ||z||^2
  // Snapping (noise.hpp): every noisy release is grid * (round(v/grid) + Z)
  // with Z exact discrete noise (CKS20) of scale noise_scale/grid; grid is a
  // power of two (0: no snapping). `sensitivity` above already includes the
  // rounding terms, `rounding_inflation`: sqrt(dim) grid for the release's
  // grid plus sum_inflation for the sums' grid.
  double grid = 0;
  double rounding_inflation = 0;
  std::string sampler;
  // Gradient perturbation: the noise is the rounded exact Gaussian of
  // noise.hpp (continuous-Gaussian accountants apply), grid = noise_scale
  // 2^-noise_bits; 0: CKS20's discrete noise on the power-of-two grid.
  int noise_bits = 0;
  // Privacy cost in Renyi DP, for the ledger and dp_explain. A mechanism
  // whose cost is not one of the two shapes above (e.g. a composite of
  // Gaussian releases) fills rdp_curve itself, on LedgerOrders(); one with
  // no RDP guarantee at all (only (epsilon, delta)) sets has_rdp = false,
  // and the ledger then composes its row by plain sums.
  std::vector<double> rdp_curve;
  bool has_rdp = true;
  // The planned number of per-row gradient evaluations (0: not stated).
  int64_t gradient_evaluations = 0;
  std::string note;       // anything the user should know (capped T, ...)
  OffsetPlan offset;      // stage 0 (offset.hpp); offset.epsilon = 0: none
  DecisionPlan decision;  // stage 2 (decision.hpp); decision.epsilon = 0: none
  // TEST-ONLY white-box audit seam (algorithms/audit_seam.hpp): null in
  // every plan dperm makes, never serialised; only the audit harness and its
  // unit test point a copy of a plan at one. Null: no behaviour change.
  const AuditSeam* audit_seam = nullptr;
};

// The pure epsilon-DP stages around the mechanism: stage 0 and stage 2.
inline double StagesEpsilon(const Plan& p) { return p.offset.epsilon + p.decision.epsilon; }

// The release's epsilon: the mechanism's plus stages 0 and 2 (basic composition).
inline double TotalEpsilon(const Plan& p) { return p.options.epsilon + StagesEpsilon(p); }

// The (epsilon, delta) the release states: per unit for a unit-level plan,
// else TotalEpsilon and the options' delta.
inline double ReleaseEpsilon(const Plan& p) {
  return p.unit_rows > 0 ? p.unit_epsilon : TotalEpsilon(p);
}
inline double ReleaseDelta(const Plan& p) {
  return p.unit_rows > 0 ? p.unit_delta : p.options.delta;
}

// The plan as a JSON object (a model's "plan"), then the `extra` members:
// key and serialised JSON value.
std::string PlanJson(const Plan& plan,
                     const std::vector<std::pair<std::string, std::string>>& extra = {});

// E||z||^2 of the noise: dim sigma^2 for Gaussian noise; dim (dim + 1) scale^2
// for the Laplace-vector noise, whose radius is Gamma(dim, scale).
double ExpectedNoiseSq(NoiseKind noise, int dim, double scale);

}  // namespace dperm
