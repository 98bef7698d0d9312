// Planning l2 => 'auto' (plan_l2_selection.hpp; release/select_l2.hpp has
// the argument): the split, the candidates' plans and the joint calibration.
#include "dperm/planning/plan_l2_selection.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "dperm/accounting/budget.hpp"
#include "dperm/accounting/calibrate.hpp"
#include "dperm/accounting/rdp.hpp"
#include "dperm/losses/loss_spec.hpp"
#include "dperm/model/evaluate.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/planning/release_curve.hpp"

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

Plan SelectionChargePlan(const L2Selection& s) {
  Plan p = s.candidates.front();
  p.n = s.n;
  const double huber_delta = p.options.huber_delta;  // the effective value (BasePlan)
  p.options = s.options;
  p.options.huber_delta = huber_delta;
  return p;
}

}  // namespace dperm
