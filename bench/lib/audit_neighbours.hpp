// The audit harness's releases and neighbours (audit_harness.hpp): the
// audited case, the worst-case and canary pairs, the statistic.
#pragma once

#include <algorithm>
#include <chrono>
#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <memory>
#include <thread>
#include <vector>

#include "dperm/algorithms/audit_seam.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/algorithms/ssp.hpp"
#include "dperm/algorithms/svrg_common.hpp"
#include "dperm/accounting/analytic_gaussian.hpp"
#include "dperm/noise/exact_normal.hpp"
#include "dperm/algorithms/objective_perturbation.hpp"
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/planning/release_plan.hpp"
#include "dperm/release/train_model.hpp"

#include "audit_stats.hpp"

namespace dperm::audit {

// ---------------------------------------------------------------------------
// Mechanism, neighbours and runs.

// One audited release. noise_divisor > 1 breaks the mechanism on purpose: the
// plan's noise scales are divided by it (as if the sensitivity had been).
struct Case {
  std::string name;
  LossKind loss = LossKind::kLogistic;
  Options options;
  int n = 50;
  int d = 2;
  double noise_divisor = 1;
  int64_t unit_rows = 1;  // slots in which the neighbours differ (one unit's k)
  // The canary's base (CanaryNeighbours): 0 = inert rows (features 0);
  // > 0 = this many rows of a balanced, well-conditioned base (ssp,
  // see ConditionedBase), n = conditioned_base + unit_rows.
  int conditioned_base = 0;
  // White-box canary (WhiteBoxNeighbours; dp_svrg, dp_svrg_pp, ssp,
  // dp_newton, objective, objective_approx): the canary's contribution comes
  // from a per-row oracle that attains the calibrated sensitivity, and the
  // statistic is read from the noisy intermediate releases (Plan::audit_seam;
  // objective perturbation has none: from w).
  bool white_box = false;
  // The statistic is Gaussian under both sides (WhiteBoxCase of objective,
  // objective_approx): the model threshold comes from GaussianModelTest.
  bool gaussian_statistic = false;
};

// Appends ", noise / k (broken)" to a broken case's name.
inline void NameBroken(Case& c) {
  if (c.noise_divisor == 1) return;
  char buf[64];
  snprintf(buf, sizeof buf, ", noise / %g (broken)", c.noise_divisor);
  c.name += buf;
}

// An output_gd case on n = 50 rows of d = 2 features (fit_intercept, feature
// bound 1, default T and step), named like "huber l2=0.1 tight Gaussian".
inline Case MakeCase(LossKind loss, double l2, Accountant accountant, double epsilon, double delta,
                     double noise_divisor = 1) {
  Case c;
  c.loss = loss;
  c.options.algorithm = Algorithm::kOutputGd;
  c.options.epsilon = epsilon;
  c.options.delta = delta;
  c.options.l2 = l2;
  c.options.accountant = accountant;
  c.noise_divisor = noise_divisor;
  char buf[160];
  snprintf(buf, sizeof buf, "%s l2=%g %s %s", LossName(loss), l2, AccountantName(accountant),
           delta > 0 ? "Gaussian" : "Laplace");
  c.name = buf;
  NameBroken(c);
  return c;
}

// The same release broken: its noise divided by divisor.
inline Case Broken(Case c, double divisor) {
  c.noise_divisor = divisor;
  NameBroken(c);
  return c;
}

// Rows of ssp's conditioned canary base (ConditionedBase).
constexpr int kConditionedBaseRows = 1000;

// Whether the algorithm trains the loss, as its spec says (objective
// perturbation, ssp and dp_newton: logistic only).
inline bool Supports(Algorithm algorithm, LossKind loss) {
  return dperm::TakesLoss(algorithm, loss);
}

// The audit's release of one algorithm and loss on n = 50 rows (rrpsgd: 10,
// dp_svrg: 20) of d = 2
// features (softmax: K = 3 classes), tight accountant, the algorithm's
// default schedule except where noted. Output perturbation (output_gd,
// bolton) fits an intercept, has l2 = 0.1 and is audited with the searched
// pair; the other methods drop the intercept column so that the canary's
// base rows are inert (CanaryNeighbours). Option choices, all public and
// legal, made where a default would leave the audit nothing to see:
//  * the noisy methods run with l2 = 0: a contraction (1 - eta l2) per step
//    weighs early steps' noise and signal unequally, and the final iterate
//    then carries less than the composition of the steps;
//  * dp_sgd: batch_size = n (q = 1: its default q = 1/2 and T = 1 at this n
//    hide the canary in half the runs, which leaves a noise / 10 release
//    hard to tell from an honest one);
//  * rrpsgd: T = 1 (R = 1: one noisy step on one uniformly drawn row; with
//    more steps the canary's one step drowns in the others' noise) and
//    n = 10 rows, so that the canary is the drawn row in 1 run of 10;
//  * dp_svrg (needs l2 > 0): n = 20, l2 = 1 (inner loop m = 193), one epoch, and
//    like dp_svrg_pp batch_size = n (the canary's row term cancels in h_t,
//    so only the snapshot part of svrg_common.cpp's split is attacked; full
//    batches put the least noise on the part the canary does not reach);
//  * dp_accmd: radius 10 (the L1 ball);
//  * objective, objective_approx: l2 = 0.1. At l2 = 0 the privacy ridge is
//    the smallest keeping the Jacobian term at epsilon/2 (a term the
//    linear test cannot use), and the canary's minimiser sits where the
//    logistic gradient saturates, so b -> w* is far from linear: a noise / 10
//    release then audits at epsilon_lb ~ 0.45. With l2 = 0.1 no ridge is
//    added and the Gaussian part carries almost all of epsilon.
//  * rrpsgd: n = 1 and T = 1 (one noisy step on the only row, the canary).
//    The accountant charges the step as a Gaussian on a row sampled at rate
//    q = 1/n; at n = 1 the canary is the drawn row in every run, so the
//    release is the Gaussian mechanism of sensitivity 2L the noise is
//    calibrated for, with nothing mixed in (at n = 10 it was drawn in 1 run
//    of 10: a noise / 2 release audited at ~0.3, issue 44 item 13).
//  * ssp: a conditioned base of 1000 rows (ConditionedBase), so that the
//    released w is close to linear in the noise of the sums. Not dp_newton:
//    there a conditioned base makes each Newton step nearly exact, which
//    erases the earlier passes from w (noise / 10 audited at 1.42 with it at
//    20000 runs, 3.08 without at 100000); with the inert base A~ is mostly
//    noise plus ridge and the passes accumulate like gradient steps.
inline Case AlgorithmCase(Algorithm algorithm, LossKind loss, double epsilon, double delta,
                          double noise_divisor = 1) {
  Case c;
  c.loss = loss;
  const int n = algorithm == Algorithm::kRrpsgd ? 1 : algorithm == Algorithm::kDpSvrg ? 20 : 50;
  c.n = n;
  if (algorithm == Algorithm::kSsp) {
    c.conditioned_base = kConditionedBaseRows;
    c.n = kConditionedBaseRows + 1;
  }
  Options& o = c.options;
  o.algorithm = algorithm;
  o.epsilon = epsilon;
  o.delta = delta;
  const bool output = algorithm == Algorithm::kOutputGd || algorithm == Algorithm::kBolton;
  o.l2 = output ? 0.1 : 0.0;
  o.fit_intercept = output;
  if (loss == LossKind::kSoftmax) o.classes = 3;
  if (algorithm == Algorithm::kDpSgd) o.batch_size = n;
  if (algorithm == Algorithm::kRrpsgd) o.iterations = 1;
  if (algorithm == Algorithm::kDpSvrg) o.l2 = 1, o.iterations = 1, o.batch_size = n;
  if (algorithm == Algorithm::kDpSvrgPp) o.batch_size = n;
  if (algorithm == Algorithm::kDpAccmd) o.radius = 10;
  if (algorithm == Algorithm::kObjective || algorithm == Algorithm::kObjectiveApprox) o.l2 = 0.1;
  c.noise_divisor = noise_divisor;
  char buf[160];
  snprintf(buf, sizeof buf, "%s %s%s", AlgorithmName(algorithm), LossName(loss),
           delta > 0 ? "" : " Laplace");
  c.name = buf;
  NameBroken(c);
  return c;
}

// Whether the plan releases its noiseless output plus noise once (output
// perturbation), so that the noiseless outputs are the exact means. ssp
// and dp_newton add their noise to sums, and w is a nonlinear function of
// them: canary cases, like objective perturbation.
inline bool OutputPerturbation(const Plan& plan) {
  return plan.noisy_steps == 0 && plan.mechanism_fields.Get(dperm::kObjectiveNoise) == 0 &&
         plan.algorithm != Algorithm::kSsp && plan.algorithm != Algorithm::kDpNewton;
}

// Divides every noise scale of the plan by divisor (a broken release).
inline void DivideNoise(Plan& plan, double divisor) {
  plan.noise_scale /= divisor;
  // The steps' rounded exact Gaussian needs a dyadic sigma on the grid
  // sigma 2^-noise_bits (noise.hpp); the broken grid shrinks with it.
  if (plan.noise_bits > 0) {
    plan.noise_scale = dperm::DyadicNoiseScale(plan.noise_scale);
    plan.grid = std::ldexp(plan.noise_scale, -plan.noise_bits);
  }
  // b's sampler needs a scale of 20 significant bits (exact_normal.hpp).
  const double b_scale = plan.mechanism_fields.Get(dperm::kObjectiveNoise);
  plan.mechanism_fields.Set(dperm::kObjectiveNoise, dperm::DyadicNoiseScale(b_scale / divisor));
}

// The output of the plan's training on rows without noise (w_T itself).
inline std::vector<double> NoiselessOutput(Plan plan, const std::vector<double>& rows) {
  plan.noise_scale = 0;  // both samplers return zeros at scale 0
  SecureRng unused = SecureRng::FromSeed(0);
  return TrainModel(plan, rows.data(), unused);
}

// Euclidean distance of two outputs.
inline double Distance(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); i++) s += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(s);
}

// The chosen neighbours: rows of D and D' (stride d + 1) and the means of
// their outputs (noiseless outputs, or pilot means; see the top of the file).
struct Neighbours {
  std::vector<double> rows_d, rows_dp;
  std::vector<double> a, b;         // E w(D), E w(D')
  std::vector<double> direction;    // s = <w - a, direction>; empty: (b - a)/||b - a||
  double shift = 0;                 // ||a - b||
  std::string base, row_d, row_dp;  // what was chosen, for the report
  // White-box pairs (WhiteBoxNeighbours): rows_d = rows_dp, and the two
  // sides differ only in the oracle of their seam (SidePlan).
  std::shared_ptr<const AuditSeam> seam_d, seam_dp;
  double oracle_shift = 0;  // ||contribution(D) - contribution(D')|| of the attaining pair
  double site_shift[kAuditSites] = {};  // per AuditSite: the pair's shift of one release there
};

// The plan one side of the pair runs: the plan itself, or a copy pointing
// at that side's white-box seam.
inline Plan SidePlan(const Plan& plan, const Neighbours& pair, bool dprime) {
  Plan p = plan;
  const AuditSeam* seam = dprime ? pair.seam_dp.get() : pair.seam_d.get();
  if (seam != nullptr) p.audit_seam = seam;
  return p;
}

// Huber targets this far out keep every residual in the linear part of the
// loss for the whole run (|h'| = huber_delta, h'' = 0).
constexpr double kFarTarget = 1e6;

// The labels tried for a differing row: +-1 (logistic), -Y, 0, +Y (Huber),
// every class (softmax).
inline std::vector<double> CandidateLabels(const Plan& plan) {
  if (plan.loss == LossKind::kLogistic) return {1.0, -1.0};
  if (plan.loss == LossKind::kHuber) return {kFarTarget, 0.0, -kFarTarget};
  std::vector<double> classes;
  for (int k = 0; k < plan.classes; k++) classes.push_back(k);
  return classes;
}

// Extreme rows (d features then label): features 0 or +-feature_bound on an
// axis or a diagonal, crossed with CandidateLabels.
inline std::vector<std::vector<double>> ExtremeRows(const Plan& plan) {
  const int d = plan.d;
  const double fb = plan.options.feature_bound;
  std::vector<std::vector<double>> points(1, std::vector<double>(d, 0.0));
  for (int j = 0; j < d; j++)
    for (double s : {1.0, -1.0}) {
      points.emplace_back(d, 0.0);
      points.back()[j] = s * fb;
    }
  if (d >= 2)
    for (double s1 : {1.0, -1.0})
      for (double s2 : {1.0, -1.0}) {
        points.emplace_back(d, 0.0);
        points.back()[0] = s1 * fb / std::sqrt(2.0);
        points.back()[1] = s2 * fb / std::sqrt(2.0);
      }
  std::vector<std::vector<double>> rows;
  for (const auto& x : points)
    for (double y : CandidateLabels(plan)) {
      rows.push_back(x);
      rows.back().push_back(y);
    }
  return rows;
}

// A row as text: "(x1, x2; y)".
inline std::string RowText(const std::vector<double>& row) {
  std::string s = "(";
  for (size_t i = 0; i < row.size(); i++) {
    char buf[32];
    snprintf(buf, sizeof buf, "%g", row[i]);
    s += (i == 0 ? "" : i + 1 == row.size() ? "; " : ", ") + std::string(buf);
  }
  return s + ")";
}

// Base sets of n - k rows: every extreme row repeated, and a synthetic sample
// (features uniform in the ball, labels from a fixed linear model).
inline std::vector<std::pair<std::string, std::vector<double>>> BaseSets(const Plan& plan,
                                                                         int64_t k = 1) {
  const int n1 = int(plan.n - k), stride = plan.d + 1;
  std::vector<std::pair<std::string, std::vector<double>>> bases;
  for (const auto& row : ExtremeRows(plan)) {
    std::vector<double> rows;
    for (int i = 0; i < n1; i++) rows.insert(rows.end(), row.begin(), row.end());
    bases.emplace_back(std::to_string(n1) + " x " + RowText(row), rows);
  }
  std::mt19937_64 gen(7);
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> rows(size_t(n1) * stride);
  for (int i = 0; i < n1; i++) {
    double* r = &rows[size_t(i) * stride];
    double norm = 0, m = 0.3;
    for (int j = 0; j < plan.d; j++) {
      r[j] = normal(gen);
      norm += r[j] * r[j];
    }
    double scale = plan.options.feature_bound *
                   std::pow(std::generate_canonical<double, 53>(gen), 1.0 / std::max(plan.d, 1)) /
                   std::max(std::sqrt(norm), 1e-300);
    for (int j = 0; j < plan.d; j++) m += (r[j] *= scale) * (j % 2 ? -1.0 : 1.0);
    if (plan.loss == LossKind::kLogistic) r[plan.d] = m + 0.5 * normal(gen) > 0 ? 1.0 : -1.0;
    else if (plan.loss == LossKind::kHuber) r[plan.d] = m + 0.3 * normal(gen);
    else r[plan.d] = double(std::min(plan.classes - 1, int(std::fabs(m) * plan.classes)));
  }
  bases.emplace_back("synthetic sample", rows);
  return bases;
}

// The neighbouring pair (over base sets and extreme differing rows, the row
// in k slots) whose noiseless outputs are farthest apart.
inline Neighbours WorstNeighbours(const Plan& plan, int64_t k = 1) {
  const auto candidates = ExtremeRows(plan);
  Neighbours best;
  best.shift = -1;
  for (const auto& [base_name, base] : BaseSets(plan, k)) {
    std::vector<std::vector<double>> datasets, outputs;
    for (const auto& row : candidates) {
      datasets.push_back(base);
      for (int64_t j = 0; j < k; j++)
        datasets.back().insert(datasets.back().end(), row.begin(), row.end());
      outputs.push_back(NoiselessOutput(plan, datasets.back()));
    }
    for (size_t i = 0; i < candidates.size(); i++)
      for (size_t j = i + 1; j < candidates.size(); j++) {
        double shift = Distance(outputs[i], outputs[j]);
        if (shift > best.shift) {
          const std::string times = k > 1 ? std::to_string(k) + " x " : "";
          best = Neighbours();
          best.rows_d = datasets[i], best.rows_dp = datasets[j];
          best.a = outputs[i], best.b = outputs[j];
          best.shift = shift;
          best.base = base_name;
          best.row_d = times + RowText(candidates[i]), best.row_dp = times + RowText(candidates[j]);
        }
      }
  }
  return best;
}

// The canary pair of the noisy methods (top of the file): n - k rows of
// zero features, and k slots of x = feature_bound e_1 with labels +Y / -Y
// (Huber), +1 / -1 (logistic) or classes 0 / 1 (softmax). The means are left
// to the pilot runs.
//
// ConditionedBase (conditioned > 0; ssp, logistic, d >= 2):
// the base is `conditioned` rows cycling through (e_1; +1), (e_1; -1),
// (e_2; +1), (e_2; -1), times feature_bound. Why: both release noisy sums
// (b, A) and w = -(A~/n + lambda)^-1 b~/n. With inert base rows A is the
// canary's rank-one t t^T (entry 1) under noise of sd ~8 per entry, and w
// is a ratio of noises, far from linear. Here A = (conditioned/2) (e_1
// e_1^T + e_2 e_2^T) (500 against the noise's ~8 at 1000 rows), while the
// base's gradient sum is 0 at w = 0 (each row has its label-flipped twin:
// f'(0, +1) t + f'(0, -1) t = 0), so the optimum stays at w ~ 0 and w is,
// to first order, linear in b's noise: the Fisher discriminant on w sees
// the canary's gradient gap gamma L (same t, labels +-1) undiluted.
inline Neighbours CanaryNeighbours(const Plan& plan, int64_t k = 1, int conditioned = 0) {
  const int stride = plan.d + 1;
  const double base_label = plan.loss == LossKind::kLogistic ? 1.0 : 0.0;
  std::vector<double> base(size_t(plan.n - k) * stride, 0.0);
  for (int64_t i = 0; i + k < plan.n; i++) base[size_t(i) * stride + plan.d] = base_label;
  if (conditioned > 0)
    for (int64_t i = 0; i + k < plan.n; i++) {
      double* r = &base[size_t(i) * stride];
      r[(i / 2) % 2] = plan.options.feature_bound;
      r[plan.d] = i % 2 == 0 ? 1.0 : -1.0;
    }
  std::vector<double> row_d(stride, 0.0), row_dp(stride, 0.0);
  row_d[0] = row_dp[0] = plan.options.feature_bound;
  if (plan.loss == LossKind::kHuber) row_d[plan.d] = kFarTarget, row_dp[plan.d] = -kFarTarget;
  else if (plan.loss == LossKind::kLogistic) row_d[plan.d] = 1, row_dp[plan.d] = -1;
  else row_d[plan.d] = 0, row_dp[plan.d] = 1;
  Neighbours pair;
  pair.rows_d = pair.rows_dp = base;
  for (int64_t j = 0; j < k; j++) {
    pair.rows_d.insert(pair.rows_d.end(), row_d.begin(), row_d.end());
    pair.rows_dp.insert(pair.rows_dp.end(), row_dp.begin(), row_dp.end());
  }
  std::vector<double> zero(stride, 0.0);
  zero[plan.d] = base_label;
  const std::string times = k > 1 ? std::to_string(k) + " x " : "";
  pair.base = conditioned > 0 ? std::to_string(plan.n - k) +
                                    " rows cycling (1, 0; 1), (1, 0; -1), (0, 1; 1), (0, 1; -1)"
                              : std::to_string(plan.n - k) + " x " + RowText(zero);
  pair.row_d = times + RowText(row_d);
  pair.row_dp = times + RowText(row_dp);
  return pair;
}

// The test statistic of a released w: larger means "more like D'" (see the
// top of this file).
inline double Statistic(NoiseKind noise, const std::vector<double>& w, const Neighbours& pair) {
  const std::vector<double>& a = pair.a;
  const std::vector<double>& b = pair.b;
  if (!pair.direction.empty()) {
    double s = 0;
    for (size_t i = 0; i < w.size(); i++) s += (w[i] - a[i]) * pair.direction[i];
    return s;
  }
  if (noise == NoiseKind::kLaplaceVector) return Distance(w, a) - Distance(w, b);
  // Per-coordinate (discrete) Laplace: the log-likelihood ratio is
  // (||w - a||_1 - ||w - b||_1)/scale.
  if (noise == NoiseKind::kLaplace) {
    double s = 0;
    for (size_t i = 0; i < w.size(); i++) s += std::abs(w[i] - a[i]) - std::abs(w[i] - b[i]);
    return s;
  }
  double dot = 0, norm = 0;
  for (size_t i = 0; i < w.size(); i++) {
    dot += (w[i] - a[i]) * (b[i] - a[i]);
    norm += (b[i] - a[i]) * (b[i] - a[i]);
  }
  return dot / std::sqrt(norm);
}

}  // namespace dperm::audit
