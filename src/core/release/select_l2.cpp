// l2 => 'auto': private selection of l2 (select_l2.hpp has the argument).
#include "dperm/release/select_l2.hpp"
#include "dperm/planning/unit_level.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "dperm/accounting/budget.hpp"
#include "dperm/accounting/calibrate.hpp"
#include "dperm/model/evaluate.hpp"
#include "dperm/losses/loss_spec.hpp"
#include "dperm/rows/exact_sum.hpp"
#include "dperm/planning/explain.hpp"
#include "dperm/util/interrupt.hpp"
#include "dperm/util/json.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/noise/noise.hpp"
#include "dperm/accounting/rdp.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"

namespace dperm {

namespace {

// Iterations of the log-scale bisections: the interval shrinks by 2^-40
// of its log-width, far below any figure dp_explain prints.
const int kBisections = 40;
// Rounds of the joint calibration (see CalibrateJointly): shrinking steps,
// then bisection steps on the target.
const int kJointRounds = 12;
const int kJointBisections = 12;

// The largest x in [lo, hi] (0 < lo < hi) with fits(x), by bisection on
// log x, assuming fits is true below some point and false above (it need
// not be: the caller checks the result as evaluated). Returns 0 when
// fits(lo) fails.
double LargestFitting(const std::function<bool(double)>& fits, double lo, double hi) {
  if (fits(hi)) return hi;
  if (!fits(lo)) return 0;
  for (int i = 0; i < kBisections; i++) {
    const double mid = std::sqrt(lo * hi);
    if (mid <= lo || mid >= hi) break;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

std::vector<double> MaxCurve(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> m(a.size());
  for (size_t i = 0; i < a.size(); i++) m[i] = std::max(a[i], b[i]);
  return m;
}

// delta > 0: the G normalised sums u_g = sum_g / score_bound move by at
// most 1 each when a validation row is replaced (L2 sensitivity sqrt(G));
// snapped to the grid (noise.hpp: rounding adds sqrt(G) grid) they get
// discrete Gaussian noise sigma = z Delta' per coordinate, Delta' = sqrt(G)
// (1 + grid): RDP alpha/(2 z^2) (CKS20 Thm 14, as plan_steps.cpp argues
// for every discrete Gaussian release).
std::vector<double> ScoreCurve(double z) {
  std::vector<double> c;
  for (double a : LedgerOrders()) c.push_back(a / (2 * z * z));
  return c;
}

std::vector<double> ReleaseGaussianScores(const std::vector<double>& sums, double bound, double z,
                                          SecureRng& rng, double slack) {
  const int m = int(sums.size());
  const double root = std::sqrt(double(m));
  const double grid = SnapGrid(root, m, z * root, NoiseKind::kGaussian);
  // z times the rounded sums' sensitivity: each moves by at most 1 + slack
  // (the sums' own rounding, ScoreSumSlack), then the grid's rounding.
  const double sigma = z * root * (1 + grid + slack);
  std::vector<double> u(sums.size());
  for (int i = 0; i < m; i++) u[size_t(i)] = sums[size_t(i)] / bound;
  SnapDiscreteGaussian(rng, grid, GridSigmaSq(sigma, grid), u.data(), m);
  for (double& v : u) v *= bound;
  return u;
}

// The candidates' plans on n_train rows at epsilon eps (delta as given).
std::vector<Plan> PlanCandidates(const L2Selection& s, double eps) {
  std::vector<Plan> plans;
  for (double l2 : s.grid) {
    Options c = s.options;
    c.l2_auto = false;
    c.l2 = l2;
    c.epsilon = eps;
    Plan p = PlanRelease(c, s.loss, s.n_train, s.d);
    p.options.l2_auto = false;
    plans.push_back(std::move(p));
  }
  return plans;
}

// The training part's curve: the candidates' curves added up (Mironov 2017,
// Prop. 1: G releases on the same training part compose). Throws when a
// candidate has no RDP curve (only its own (epsilon, delta) theorem).
std::vector<double> TrainCurve(const std::vector<Plan>& plans) {
  std::vector<std::vector<double>> curves;
  for (const Plan& p : plans) {
    std::vector<double> c = ReleaseRdpCurve(p);
    if (c.empty())
      ThrowInvalid(std::string("l2 => 'auto' cannot compose algorithm ") +
                       AlgorithmName(p.algorithm) + ": it has no RDP curve",
                   "The candidates' costs add up in RDP; pass another algorithm, or a "
                   "number for l2.");
    curves.push_back(std::move(c));
  }
  return ComposeRdp(curves);
}

// delta > 0: the per-candidate epsilon and the score epsilon for which the
// release's curve max(C_train, C_score) converts to at most the request.
// At a target t each part is calibrated on its own (the largest epsilon
// whose curve converts to <= t, CalibrateAt); the maximum of two curves can
// convert above the larger of their conversions (their best orders
// differ), so t is the largest in (0, epsilon] whose joint curve fits: t
// shrinks by the overshoot until it fits, then a bisection between the
// fitting and the failing t recovers what the shrinking gave away.
bool CalibrateAt(L2Selection& s, double t) {
  const std::vector<double>& orders = LedgerOrders();
  const double delta = s.options.delta;
  // Lower ends that fit in practice (G candidates at t/(4G) compose, in
  // RDP, far below t; a pure t/4 release converts below t) without going
  // where plans refuse (noise beyond the samplers' range).
  const double g = double(s.grid.size());
  auto train_fits = [&](double e) {
    try {
      return RdpToEpsilon(orders, TrainCurve(PlanCandidates(s, e)), delta) <= t;
    } catch (const Error& err) {
      // a candidate plan refuses this epsilon (e.g. objective's Jacobian
      // term): not a fitting point; the result is checked below.
      if (err.kind() != ErrorKind::kInvalidParameter) throw;
      return false;
    }
  };
  const double ce = LargestFitting(train_fits, t / (4 * g), t);
  if (!(ce > 0)) return false;
  // The scores: discrete Gaussian of multiplier z on the normalised sums
  // (ScoreCurve), the smallest z whose curve converts to <= t; the same
  // shape as a Gaussian candidate's, so the maximum costs nothing there.
  const double z = CalibrateNoiseMultiplier(
      [&](double m) { return RdpToEpsilon(orders, ScoreCurve(m), delta); }, t);
  s.candidates = PlanCandidates(s, ce);
  s.train_curve = TrainCurve(s.candidates);
  s.score_multiplier = z;
  s.score_curve = ScoreCurve(z);
  s.rdp_curve = MaxCurve(s.train_curve, s.score_curve);
  s.candidate_epsilon = ce;
  s.score_epsilon = RdpToEpsilon(orders, s.score_curve, delta);
  s.epsilon_at_delta = RdpToEpsilon(orders, s.rdp_curve, delta);
  return s.epsilon_at_delta <= s.options.epsilon;  // checked as evaluated
}

void CalibrateJointly(L2Selection& s) {
  const double eps = s.options.epsilon;
  double fit = 0, fail = 0;
  double t = eps;
  for (int round = 0; round < kJointRounds; round++) {
    L2Selection trial = s;
    if (CalibrateAt(trial, t)) {
      fit = t;
      s = std::move(trial);
      break;
    }
    if (!(trial.epsilon_at_delta > 0)) break;  // a part cannot be calibrated at all
    fail = t;
    // The overshoot is partly additive (the conversion's terms), partly
    // proportional: step by the larger of the two, the bisection below
    // takes back what this gives away.
    const double over = trial.epsilon_at_delta - eps;
    t = std::min(t * (eps / trial.epsilon_at_delta), t - 1.5 * over) * (1 - 1e-9);
    if (!(t > 0)) break;
  }
  if (!(fit > 0))
    ThrowInvalid("l2 => 'auto' cannot meet epsilon = " + FormatNumber(eps) + " and delta = " +
                     FormatNumber(s.options.delta) + " with " + std::to_string(s.grid.size()) +
                     " candidates on " + std::to_string(s.n_train) + " rows",
                 "Raise epsilon, or pass a number for l2.");
  for (int i = 0; i < kJointBisections && fail > 0 && fail > fit * (1 + 1e-6); i++) {
    const double mid = (fit + fail) / 2;
    L2Selection trial = s;
    if (CalibrateAt(trial, mid)) {
      fit = mid;
      s = std::move(trial);
    } else {
      fail = mid;
    }
  }
}

}  // namespace

const std::vector<double>& L2Grid() {
  // Public; chosen by bench/scripts/heldout/heldout.py's "dperm auto" column
  // (bench/reports/heldout.md).
  static const std::vector<double> grid = {1e-3, 1e-2, 1e-1, 1};
  return grid;
}

L2Selection PlanL2Selection(const Options& options, LossKind loss, int64_t n, int d) {
  if (n < kMinSelectionRows)
    ThrowInvalid("l2 => 'auto' needs at least " + std::to_string(kMinSelectionRows) +
                     " rows, not " + std::to_string(n),
                 "It splits the rows into a training and a validation part; pass a number "
                 "for l2.");
  L2Selection s;
  s.options = options;
  s.options.l2_auto = true;
  s.loss = loss;
  s.n = n;
  s.d = d;
  s.grid = L2Grid();
  s.n_valid = std::max<int64_t>(1, int64_t(std::ceil(kValidationFraction * double(n))));
  s.n_train = n - s.n_valid;
  const ValidationScore* score = LossSpecFor(loss).Score();
  if (score == nullptr)
    ThrowInvalid(std::string("l2 => 'auto' is not available for ") + LossAggregateName(loss),
                 "Pass a number for l2.");
  s.score_bound = score->Bound(LossParamsOf(options));
  s.score = score->Text();
  const double eps = options.epsilon;
  const double g = double(s.grid.size());
  if (options.delta == 0) {
    // Pure DP: G candidates at epsilon/G compose to epsilon (Dwork & Roth
    // 2014, Thm 3.16) on the training part; the scores are epsilon-DP on
    // the validation part; parallel composition (select_l2.hpp): epsilon.
    s.candidate_epsilon = eps / g;
    s.score_epsilon = eps;
    s.candidates = PlanCandidates(s, s.candidate_epsilon);
    for (const Plan& p : s.candidates)
      if (p.noise != NoiseKind::kLaplace || !p.has_rdp)
        ThrowInvalid(std::string("l2 => 'auto' with delta = 0 needs pure epsilon-DP "
                                 "candidates; algorithm ") +
                         AlgorithmName(p.algorithm) + " is not",
                     "Pass delta > 0, or a number for l2.");
    s.score_curve = PureDpRdpCurve(eps);
    s.train_curve = PureDpRdpCurve(eps);  // G (eps/G)-DP releases: eps-DP
    s.rdp_curve = s.score_curve;
    s.epsilon_at_delta = eps;
    s.rule = "delta = 0: each of the " + std::to_string(s.grid.size()) +
             " candidates at epsilon/G (basic composition on the training part), the scores "
             "at epsilon on the validation part (parallel composition)";
  } else {
    CalibrateJointly(s);
    s.rule = "the largest per-candidate epsilon whose " + std::to_string(s.grid.size()) +
             " composed RDP curves (training part) and the largest score epsilon whose curve "
             "(validation part) keep max(C_train, C_score) within (epsilon, delta)";
  }
  return s;
}

double RowScore(const L2Selection& s, const std::vector<double>& w, const double* row) {
  const ValidationScore& score = *LossSpecFor(s.loss).Score();
  LossParams params = LossParamsOf(s.options);
  params.classes = LossIsMulticlass(s.loss) ? s.candidates.front().classes : 0;
  const int d = s.d, classes = std::max(params.classes, 1);
  const bool b = s.options.fit_intercept;
  const int per_class = d + (b ? 1 : 0);
  // The row's scores <w_k, x> (+ b_k), one per class.
  double one = 0;
  std::vector<double> many(classes > 1 ? size_t(classes) : 0);
  double* z = classes > 1 ? many.data() : &one;
  for (int k = 0; k < classes; k++) {
    const double* wk = w.data() + size_t(k) * per_class;
    z[k] = b ? wk[d] : 0.0;
    for (int j = 0; j < d; j++) z[k] += wk[j] * row[j];
  }
  // Clamped to [0, score_bound] (or {0, 1} for counts), whatever the loss
  // returns: the sensitivity of the released sums.
  const double v = score.Row(params, z, row[d]);
  if (score.Counts()) return v >= 0.5 ? 1 : 0;
  return v >= 0 ? std::min(v, s.score_bound) : 0;
}

L2SelectionResult TrainL2Selection(const L2Selection& s, const double* rows, SecureRng& rng) {
  const int stride = s.d + 1;
  // 1. The partition: uniformly random, from the secure generator.
  const std::vector<int64_t> perm = RandomPermutation(rng, s.n);
  std::vector<double> train(size_t(s.n_train) * stride), valid(size_t(s.n_valid) * stride);
  for (int64_t k = 0; k < s.n; k++) {
    const double* r = rows + size_t(perm[size_t(k)]) * stride;
    double* dst = k < s.n_train ? &train[size_t(k) * stride]
                                : &valid[size_t(k - s.n_train) * stride];
    std::copy(r, r + stride, dst);
    CountWork(uint64_t(stride));
  }
  // 2. Every candidate, always (a fixed, public number of trainings).
  std::vector<std::vector<double>> models, offsets(s.candidates.size());
  for (size_t g = 0; g < s.candidates.size(); g++) {
    CheckInterrupt();
    models.push_back(TrainModel(s.candidates[g], train.data(), rng, &offsets[g]));
  }
  // 3. The validation sums, released together: discrete Gaussian of
  // multiplier score_multiplier (delta > 0), discrete Laplace at
  // score_epsilon (delta = 0).
  // Counts are exact in doubles; other scores, in [0, score_bound] (the
  // loss's ValidationScore), are summed exactly on the grid SumGrid(score_bound)
  // (exact_sum.hpp): two neighbours' sums then differ by at most one row's
  // range plus one grid step, and their rounding to doubles and division by
  // the bound add at most n_valid 2^-51 more, in units of the bound.
  const ValidationScore& score = *LossSpecFor(s.loss).Score();
  const bool exact_counts = score.Counts();
  const double score_grid = SumGrid(s.score_bound);
  const double slack =
      exact_counts ? 0 : score_grid / s.score_bound + std::ldexp(double(s.n_valid), -51);
  std::vector<double> sums(models.size(), 0.0), bounds(models.size(), s.score_bound);
  for (size_t g = 0; g < models.size(); g++) {
    CheckInterrupt();
    ExactSum sum(1, score_grid);
    for (int64_t i = 0; i < s.n_valid; i++) {
      const double row_score = RowScore(s, models[g], &valid[size_t(i) * stride]);
      CountWork(models[g].size());  // one multiply-add per coefficient
      if (exact_counts)
        sums[g] += row_score;
      else
        sum.Add(0, row_score);
    }
    if (!exact_counts) sums[g] = sum.Value(0);
  }
  L2SelectionResult r;
  r.noisy_scores = s.score_multiplier > 0
                       ? ReleaseGaussianScores(sums, s.score_bound, s.score_multiplier, rng, slack)
                       : ReleaseBoundedSums(sums, bounds, s.score_epsilon, rng, slack).values;
  // Post-processing of the noisy scores: the best one (first on ties).
  int best = 0;
  for (int g = 1; g < int(r.noisy_scores.size()); g++) {
    const bool better = score.LowerIsBetter() ? r.noisy_scores[g] < r.noisy_scores[best]
                                              : r.noisy_scores[g] > r.noisy_scores[best];
    if (better) best = g;
  }
  r.chosen = best;
  r.w = std::move(models[size_t(best)]);
  r.offset = std::move(offsets[size_t(best)]);
  return r;
}

std::string L2SelectionJson(const L2Selection& s, const L2SelectionResult* r) {
  JsonWriter j;
  j.BeginObject();
  j.Key("method").String("split: candidates on the training part, noisy validation scores");
  j.Key("grid").BeginArray();
  for (double l2 : s.grid) j.Number(l2);
  j.EndArray();
  if (r != nullptr) {
    j.Key("chosen_l2").Number(s.grid[size_t(r->chosen)]);
    j.Key("private").Bool(true);
  }
  j.Key("n_train").Integer(s.n_train);
  j.Key("n_valid").Integer(s.n_valid);
  j.Key("score").String(s.score);
  j.Key("score_bound").Number(s.score_bound);
  j.Key("candidate_epsilon").Number(s.candidate_epsilon);
  j.Key("score_epsilon").Number(s.score_epsilon);
  j.Key("score_noise").String(s.score_multiplier > 0 ? "discrete Gaussian" : "discrete Laplace");
  if (s.score_multiplier > 0) j.Key("score_noise_multiplier").Number(s.score_multiplier);
  j.Key("epsilon").Number(s.options.epsilon);
  j.Key("delta").Number(s.options.delta);
  j.Key("epsilon_at_delta").Number(s.epsilon_at_delta);
  j.Key("calibration").String(s.rule.c_str());
  j.Key("candidate_algorithms").BeginArray();
  for (const Plan& p : s.candidates) j.String(AlgorithmName(p.algorithm));
  j.EndArray();
  if (r != nullptr) {
    j.Key("noisy_scores").BeginArray();
    for (double v : r->noisy_scores) j.Number(v);
    j.EndArray();
  }
  j.EndObject();
  return j.str();
}

std::string ExplainL2Selection(const L2Selection& s) {
  JsonWriter j;
  j.BeginObject();
  j.Key("l2").String("auto");
  j.Key("loss").String(LossName(s.loss));
  j.Key("n").Integer(s.n);
  j.Key("d").Integer(s.d);
  j.Key("memory_bytes").Integer(static_cast<int64_t>(std::ceil(SelectionMemoryBytes(s))));
  j.Key("selection").Raw(L2SelectionJson(s, nullptr).c_str());
  j.Key("accounting").BeginObject();
  j.Key("rdp_orders").BeginArray();
  for (double a : LedgerOrders()) j.Number(a);
  j.EndArray();
  j.Key("rdp").BeginArray();
  for (double v : s.rdp_curve) j.Number(v);
  j.EndArray();
  j.EndObject();
  j.Key("candidates").BeginArray();
  for (const Plan& p : s.candidates) j.Raw(ExplainJson(p).c_str());
  j.EndArray();
  j.EndObject();
  return j.str();
}

double SelectionMemoryBytes(const L2Selection& s) {
  double largest = 0, coefficients = 0;
  for (const Plan& p : s.candidates) {
    largest = std::max(largest, ReleaseMemoryBytes(p, false));
    coefficients += 8 * double(p.dim);
  }
  return 8 * (double(s.n) * double(s.d + 1) + double(s.n)) + coefficients + largest;
}

Plan SelectionChargePlan(const L2Selection& s) {
  Plan p = s.candidates.front();
  p.n = s.n;
  const double huber_delta = p.options.huber_delta;  // the effective value (BasePlan)
  p.options = s.options;
  p.options.huber_delta = huber_delta;
  return p;
}

InMemoryRelease PlanInMemoryRelease(const Options& given, LossKind loss, int64_t n, int d) {
  // A unit-level release is the row-level one at RowLevelOptions' share
  // (unit_level.hpp), charged per unit.
  const Options options = RowLevelOptions(given);
  InMemoryRelease r;
  if (options.l2_auto) {
    r.selects = true;
    r.selection = PlanL2Selection(options, loss, n, d);
    r.plan = SelectionChargePlan(r.selection);
    r.curve = r.selection.rdp_curve;
    r.memory = SelectionMemoryBytes(r.selection);
  } else {
    r.plan = PlanRelease(options, loss, n, d);
    r.curve = ReleaseRdpCurve(r.plan);
    r.memory = ReleaseMemoryBytes(r.plan, false);
  }
  if (given.max_rows_per_unit > 0) {
    StateUnitLevel(given, &r.plan);
    r.curve = ReleaseRdpCurve(r.plan);
  }
  return r;
}

}  // namespace dperm
