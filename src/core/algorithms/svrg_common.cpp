// Shared by DP-SVRG and DP-SVRG++ (Wang, Ye & Xu, "Differentially Private
// ERM Revisited: Faster and More General", NIPS 2017, Algorithms 1 and 2;
// seeds/003): the privacy of a noisy variance-reduced inner step, its noise
// calibration, and the training loop.
//
// Neighbouring relation: replace-one (same n, one row changed); n is public.
// Rows are clipped to ||x|| <= feature_bound, so every training row (with its
// intercept column) has norm <= R, and the per-row loss is G-Lipschitz with
// G = plan.L (plan_common.hpp).
//
// WHAT IS RELEASED. Epoch s computes the snapshot gradient v~ = grad F(x~)
// (the mean loss gradient over all n rows, Algorithm 1 line 3) and never
// releases it on its own. Inner step t draws a batch B_t of b rows uniformly
// without replacement (b = 1 in the paper: "pick i_t in [n]") and forms
//   v_t = v~ + h_t + u_t,   h_t = 1/b sum_{i in B_t} [grad f_i(x_{t-1}) - grad f_i(x~)],
//   u_t ~ N(0, sigma^2 I)                                   (Algorithm 1 line 7)
// then x_t = prox_{eta r}(x_{t-1} - eta v_t) (line 8). Everything else (the
// iterates, the snapshot points x~_s = mean of an epoch's iterates, the next
// epoch's start, the output) is a function of the v's and public inputs:
// post-processing. The v's form an adaptive composition (x_{t-1} and x~ are
// functions of earlier v's), so it suffices to bound (v_1, ..., v_K), K the
// number of inner steps of the whole run.
//
// WHY NOT THEOREMS 4.1 / 4.3 AS STATED. They give sigma^2 = c G^2 T m
// ln(1/delta) / (n^2 eps^2) with an unspecified constant c from the moments
// accountant (Abadi et al. 2016, Thm 1), valid only for eps <= c1 T m / n^2
// (for BANK, n = 45211 and T m ~ 2e5: eps <= 1e-4 c1). And v_t is not a
// plain subsampled gradient: v~ depends on every row, so replacing one row
// changes v_t at EVERY inner step (by up to 2G/n), not only when that row is
// sampled; when it is sampled, h_t changes as well.
//
// THE SPLIT (dperm's analysis). Write u_t = u1_t + u2_t with independent
// u1_t ~ N(0, f sigma^2 I) and u2_t ~ N(0, (1 - f) sigma^2 I), f in (0, 1):
// the sum has exactly the law of u_t, so v_t = (v~ + u1_t) + (h_t + u2_t) is
// a post-processing of the pair P_t = (v~ + u1_t, h_t + u2_t), and (v_1..v_K)
// is at least as private as (P_1..P_K). Each P_t composes two mechanisms
// with independent randomness:
//  (a) snapshot part v~ + u1_t, a Gaussian mechanism: replacing row k
//      changes v~ by (grad f_k(x~) - grad f'_k(x~))/n, of norm <= 2G/n.
//      RDP alpha (2G/n)^2 / (2 f sigma^2) (Mironov 2017, Prop. 7). Repeating
//      it at every inner step costs K times that; for Gaussians this is
//      exact (m noisy copies of one v~ are worth one copy with variance
//      f sigma^2 / m).
//  (b) sampled part h_t + u2_t: the Gaussian mechanism M(S) = 1/b sum_{i in S}
//      g_i + N(0, (1 - f) sigma^2 I) with g_i = grad f_i(x_{t-1}) -
//      grad f_i(x~), applied to a uniformly random b-subset S of the rows.
//      ||g_i|| <= D (below), so on two subsets differing in one row M moves
//      by at most 2D/b = 2C with C = D/b: the Gaussian mechanism on a batch
//      drawn uniformly without replacement (rate gamma = b/n) under
//      replace-one, with multiplier z2 = sqrt(1 - f) sigma / C over the
//      per-row contribution C (sensitivity 2C: the units of rdp_wor.hpp,
//      as dp_sgd's steps, whose C is L/b). Its RDP is bounded by that of
//      the symmetric dominating pair of Zhu, Dong & Wang 2022 (AISTATS,
//      Prop. 30; Dong, Roth & Su 2022, Thm 4.2), derived in rdp_wor.cpp:
//      RdpWorGaussianTight(b/n, z2, alpha), the pair's RDP capped by WBK
//      2019 Thm 9 and the unsampled 2 alpha / z2^2 (all three are upper
//      bounds on the same divergence, so their minimum is). The pair
//      dominates both orders of every pair of neighbours, so the bound
//      holds at every step whatever the rows and the earlier outputs.
// RDP adds over the two parts and over the K steps (Mironov 2017, Prop. 1:
// adaptive composition; the parts' noises are independent given the past):
//   rho(alpha) = K [alpha (2G/n)^2 / (2 f sigma^2)
//                   + eps_pair(b/n, sqrt(1 - f) sigma b / D, alpha)],
// converted to (epsilon, delta) by Balle et al. 2020, Thm 21. Every f gives
// a valid bound; the plan takes the f whose calibrated sigma is smallest
// (public inputs only: "FINDING f" below), calibrates sigma against exactly
// this curve and stores the curve in Plan::rdp_curve. Putting all the
// noise on either part is no option: the other part would be released
// without noise (rho = infinity). (Part (a) is a plain Gaussian and part
// (b)'s PLD exists (pld_wor.hpp), so a PLD composition would be tighter by
// the RDP conversion's loss, ~10% of sigma at the BANK defaults; the RDP
// keeps the split search cheap and is what the ledger composes.)
//
// FINDING f. For a given z2 the snapshot part needs the least ratio r =
// sigma1 / (2G/n) with K [alpha / (2 r^2) + eps_pair(z2, alpha)] converting
// to epsilon: a bisection on a closed form. So the search runs over z2
// (one step curve per point, memoised per (gamma, z2)) and minimises the
// total z^2 = (r 2G/(n C))^2 + z2^2, f = 1 - z2^2 / z^2, from just above
// z2_min (where part (b) alone spends epsilon): a grid dense near z2_min
// (the objective has several local minima there, where the conversion's
// best order switches), then golden section; sigma is then calibrated at
// that f (to ~1e-12).
//
// D, THE RANGE OF ONE ROW'S GRADIENT DIFFERENCE g = grad f(x; z) -
// grad f(y; z). Linear models: grad = f'(m) x_z, so g = (f'(m1) - f'(m2)) x_z
// and ||g|| <= R (sup f' - inf f'). Logistic: f' = -y sigmoid(-y m) lies
// between 0 and -y with |y| = 1 (the boundary stores labels as +-1,
// rows.cpp; BasePlan's L = R assumes the same), so D = R = G. Huber:
// f' = clip(m - y, -delta, delta), D = 2 delta R = 2G. Softmax: grad =
// (p - e_y) x^T, g = (p1 - p2) x^T with ||p1 - p2|| <= sqrt(2) for two
// points of the simplex, D = sqrt(2) R = G. The generic bound is 2G
// (||g|| <= ||grad f(x)|| + ||grad f(y)||), which the issue text uses; the
// loss-specific D halves the sampled part's sensitivity for logistic and
// softmax and is never above 2G.
//
// REGULARISER. F^r = F + r with F the mean loss and r = l1 ||.||_1 +
// l2/2 ||.||^2 entirely in the proximal step, which is data-independent
// (post-processing). Xiao & Zhang (2014), whose Prox-SVRG Algorithm 1
// follows, let the strong convexity of F^r come from r; so v~ and g_i
// contain loss gradients only, and the smoothness in Theorems 4.2/4.4 is the
// loss's beta.
//
// MINI-BATCHES (a dperm extension). The paper uses b = 1. With b rows the
// inner steps average b rows and (b) uses gamma = b/n, C = D/b.
// Subsampling amplifies only steps that are noisy enough (z of order 1):
// with b = 1 that forces noise of order D on every inner step whatever
// epsilon (a row sampled once must be protected by that one step: with
// delta = 1e-6 the chance that it is ever sampled is far above delta). That
// is why the paper's one-row defaults were worse than the zero model (BANK,
// l2 = 0.01, eps = 1: DP-SVRG sigma = 2.18, excess 0.57 against 0.34 for
// w = 0) and did not converge even at eps = 1e5 (sigma 0.65: K = 5e5
// one-row steps cost that much), while their noiseless runs converge to
// 1e-15. The schedules (dp_svrg.cpp, dp_svrg_pp.cpp) let the step grow with
// b (the inner estimate's variance shrinks by 1/b), so the epochs shorten.
//
// THE BATCH SIZE (SvrgChooseBatch; utility only, public inputs only). A
// noisy prox-SVRG epoch adds about eta dim sigma^2 / (2 (1 - 3a)) to the
// expected error bound (the noise's share of E||v_t - grad F||^2 in the
// proof of Xiao & Zhang 2014, Thm 3.1, with a = 8 L eta / b as in
// dp_svrg.cpp), so the plan predicts the noise error as noise_weight
// sigma^2 dim, noise_weight = eta/(1 - 3a) (DP-SVRG) or eta (DP-SVRG++),
// with sigma the predicted noise of the K steps at that b
// (SvrgPredictedSigma: the split search on its grid with the
// Poisson-subsampled Gaussian's RDP for part (b), a lower bound of the
// pair's, 10-100x cheaper, and giving a sigma 0-8% below the calibrated
// one on BANK; only the chosen b is calibrated with the pair). It tries b = 1, 2, 4, ... while the inner
// steps read at most max(32 n, 2^22) rows, and keeps the b with the least
// predicted error; the prediction ranks the candidates (it overstates the
// measured error about tenfold). Without the floor (below) the predicted
// error flattens out for large b (BANK, eps = 1, T = 7: 0.0236, 0.0216,
// 0.0206, 0.0201 at b = 512 .. 4096) while the rows read double with b.
// Taking the smallest b within 10% of the least instead (b = 1024 on BANK)
// saved training time but cost utility on WINE (dp_svrg, eps = 1: softmax
// excess 0.058 against 0.040, Huber 0.0010 against 0.00025), so the least
// it is.
//
// THE FLOOR THAT WAS. Until issue 15 part (b) was accounted with WBK 2019
// Thm 9, whose terms j >= 3 carry min{2, (e^{eps(inf)} - 1)^j} = 2 however
// large the noise: K steps cost at least about K gamma^3 alpha^2/3 per
// order, so with many steps and a large b the calibrated sigma jumped to
// the unamplified one (b = 256, K = 2e5 on BANK: sigma 23 against 0.42 at
// b = 64) and the batch search stopped at b = 64..512. The pair's RDP has
// no floor (it falls like gamma^2 alpha / z^2 for large z), so sigma(b)
// falls until the rows budget stops the search. On BANK (l2 = 0.01,
// delta = 1e-6) dp_svrg now takes b = 4096..8192 where it took 256..512
// (docs/algorithms.md has the noise before and after).
//
// ACCOUNTANT 'paper'. The theorems' sigma with c = 1 (the mechanisms state
// which); when it is below the calibrated sigma (on BANK at eps = 1 it was,
// by a factor 8 (b = 16) to 40 (b = 1): c = 1 is far too optimistic) the
// calibrated sigma is used with a note. A larger paper
// sigma keeps the calibrated fraction f, whose curve only decreases as
// sigma grows, so (epsilon, delta) still holds under dperm's accountant.
#include "dperm/algorithms/svrg_common.hpp"

#include <algorithm>
#include <boost/math/tools/toms748_solve.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>

#include "dperm/accounting/budget.hpp"
#include "dperm/accounting/calibrate.hpp"
#include "dperm/noise/exact_normal.hpp"
#include "dperm/util/interrupt.hpp"
#include "dperm/noise/noise.hpp"
#include "dperm/plan/plan_steps.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/util/numeric_util.hpp"
#include "dperm/accounting/rdp.hpp"
#include "dperm/accounting/rdp_wor.hpp"

namespace dperm {
namespace {

// More inner steps than this are refused (2^40 ~ 1.1e12): beyond any run
// that finishes, and far from int64 overflow.
const int64_t kMaxTotalSteps = int64_t(1) << 40;

// The split search ("FINDING f" above): kGridPoints + 1 points (half as many
// for the batch search's prediction), then golden section around the best
// down to this width (in log(z2 - z2_min)).
const int kGridPoints = 24;
const double kSplitTolerance = 1e-3;

// SvrgChooseBatch: the inner steps of a default schedule read at most
// max(32 n, 2^22) rows (b K): about a second on BANK (d = 42). The floor
// 2^22 serves small n with a large condition number beta/mu, whose epochs
// need m ~ 2 beta/mu steps whatever n.
const double kSvrgMaxInnerPasses = 32;
const double kSvrgMinInnerRows = 4194304;

constexpr double kInf = std::numeric_limits<double>::infinity();

// One sampled step's RDP on LedgerOrders() at multiplier z2 = sigma2 / C
// (RdpWorGaussianTight: the dominating pair of Zhu, Dong & Wang 2022, Prop.
// 30, capped by WBK Thm 9 and the unsampled Gaussian), or the batch
// search's cheaper stand-in (below). Deterministic functions of public
// inputs that cost 3-10 ms (exact: a quadrature per order) or ~0.5 ms, and
// that a plan asks for again and again (the split search, the rounding
// loop, dp_explain then the release, a release per seed), so they are
// memoised, as CalibrateWorGaussian's answers are (pld_wor.cpp): at most
// kMemoSize curves, then the memo restarts.
struct StepKey {
  double gamma, z2;
  bool predicted;
  bool operator<(const StepKey& o) const {
    return std::tie(gamma, z2, predicted) < std::tie(o.gamma, o.z2, o.predicted);
  }
};
constexpr size_t kMemoSize = 16384;
std::mutex step_memo_mutex;
std::map<StepKey, std::vector<double>>& StepMemo() {
  static std::map<StepKey, std::vector<double>> memo;
  return memo;
}

// The batch search's stand-in for the exact step curve (utility only, never
// recorded): the Poisson-subsampled Gaussian's RDP at q = gamma, noise z2/2
// in units of the sensitivity 2C (Mironov, Talwar & Zhang 2019), a lower
// bound of the pair's (rdp_wor.cpp): within a factor 1.1-1.8 at small
// orders, equal at large ones, and 10-100 times cheaper. Thm 9 where it
// cannot be evaluated.
double PredictedStepRdp(double gamma, double z2, double order) {
  try {
    return RdpPoissonSubsampledGaussian(gamma, z2 / 2, order);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kInvalidParameter) throw;
    return RdpSampledWithoutReplacementGaussian(gamma, z2, order);
  }
}

std::vector<double> StepCurve(double gamma, double z2, bool predicted) {
  const StepKey key{gamma, z2, predicted};
  const bool keyed = std::isfinite(gamma) && std::isfinite(z2);  // NaN must not reach the map
  if (keyed) {
    std::lock_guard<std::mutex> lock(step_memo_mutex);
    auto it = StepMemo().find(key);
    if (it != StepMemo().end()) return it->second;
  }
  CheckInterrupt();
  const std::vector<double>& orders = LedgerOrders();
  std::vector<double> curve(orders.size());
  for (size_t i = 0; i < orders.size(); i++)
    curve[i] = predicted ? PredictedStepRdp(gamma, z2, orders[i])
                         : RdpWorGaussianTight(gamma, z2, orders[i]);
  if (keyed) {
    std::lock_guard<std::mutex> lock(step_memo_mutex);
    if (StepMemo().size() >= kMemoSize) StepMemo().clear();
    StepMemo().emplace(key, curve);
  }
  return curve;
}

std::vector<double> SampledStepCurve(double gamma, double z2) { return StepCurve(gamma, z2, false); }
std::vector<double> PredictedStepCurve(double gamma, double z2) { return StepCurve(gamma, z2, true); }

using StepCurveFn = std::vector<double> (*)(double gamma, double z2);

// The curve with the noise given as z = sigma / C, C = D/b (the sampled
// part's per-row contribution): the units the calibration searches in.
std::vector<double> CurveAtMultiplier(const SvrgSteps& s, double z, double f) {
  const std::vector<double>& orders = LedgerOrders();
  const double c = s.row_range / double(s.batch);
  const double gamma = double(s.batch) / double(s.n);
  // (a): sigma1 / Delta_a = sqrt(f) z C / (2G/n).
  const double a_ratio = std::sqrt(f) * z * c / s.snapshot_sensitivity;
  // (b): the multiplier sigma2 / C of u2.
  const std::vector<double> step = SampledStepCurve(gamma, std::sqrt(1 - f) * z);
  const double k = double(s.steps);
  std::vector<double> curve(orders.size());
  for (size_t i = 0; i < orders.size(); i++)
    curve[i] = k * (RdpGaussian(a_ratio, orders[i]) +  // Mironov 2017, Prop. 7
                    step[i]);                          // Zhu, Dong & Wang 2022, Prop. 30
  return curve;
}

void CheckSteps(const SvrgSteps& s) {
  if (s.n < 1 || s.batch < 1 || s.batch > s.n || s.steps < 1 ||
      !(s.snapshot_sensitivity > 0) || !(s.row_range > 0))
    throw Error(ErrorKind::kInternal, "SVRG accounting: bad public inputs");
}

void CheckFraction(double f) {
  if (!(f > 0 && f < 1))
    throw Error(ErrorKind::kInternal, "SVRG accounting: noise fraction must be in (0, 1)");
}

// The smallest x with eps_of(x) <= target for a non-increasing eps_of, to
// ~1e-12 relative, found from a guess: bracket by steps of 1% that double,
// then TOMS 748 on log x keeping the upper end, then nudged up until
// eps_of(x) <= target holds as computed. kInvalidParameter when no x up to
// 1e12 reaches the target.
template <typename F>
double SmallestMeeting(F eps_of, double guess, double target, double log_tolerance = 1e-12) {
  auto excess = [&](double log_x) { return eps_of(std::exp(log_x)) - target; };
  double lo = std::log(guess), hi = lo;
  double f_lo = excess(lo), f_hi = f_lo;
  double step = 0.01;
  if (f_hi > 0) {
    while (f_hi > 0) {
      if (hi > std::log(1e12))
        ThrowInvalid("epsilon " + FormatNumber(target) +
                         " is not reachable by any noise for this many inner steps",
                     "Use a larger epsilon or delta, or fewer iterations.");
      lo = hi, f_lo = f_hi;
      hi += step, step *= 2;
      f_hi = excess(hi);
    }
  } else {
    while (!(f_lo > 0)) {
      if (lo < std::log(1e-12)) return std::exp(lo);  // epsilon does not bind
      hi = lo, f_hi = f_lo;
      lo -= step, step *= 2;
      f_lo = excess(lo);
    }
  }
  double log_x = hi;
  if (f_hi < 0) {
    std::uintmax_t iterations = 100;
    log_x = boost::math::tools::toms748_solve(
                excess, lo, hi, f_lo, f_hi,
                [&](double a, double b) { return std::fabs(b - a) <= log_tolerance; }, iterations,
                ThrowPolicy())
                .second;
  }
  double x = std::exp(log_x);
  for (int i = 0; i < 64 && eps_of(x) > target; i++) x *= 1 + 1e-14;
  if (eps_of(x) > target)
    throw Error(ErrorKind::kInternal, "SVRG noise calibration did not reach epsilon");
  return x;
}

// THE SPLIT SEARCH ("FINDING f" above), in units of C throughout: a point
// is the sampled part's multiplier z2 and the least total multiplier z
// with which the snapshot part meets epsilon there.
struct SplitPoint {
  double z2 = 0, z = kInf;  // z = +inf: epsilon not reachable at this z2
};

// The least r = sigma1 / (2G/n) (to 1e-10 relative, never below) with
// which `sampled` (part (b)'s curve of the K steps) plus K Gaussians meets
// epsilon; +inf when part (b) alone already spends it.
double SnapshotRatio(const std::vector<double>& sampled, double k, double epsilon, double delta) {
  const std::vector<double>& orders = LedgerOrders();
  if (!(RdpToEpsilon(orders, sampled, delta) < epsilon)) return kInf;
  std::vector<double> curve(orders.size());
  auto eps = [&](double r) {
    for (size_t i = 0; i < orders.size(); i++) curve[i] = sampled[i] + k * orders[i] / (2 * r * r);
    return RdpToEpsilon(orders, curve, delta);
  };
  double lo = 1, hi = 1;
  for (int i = 0; i < 2000 && eps(hi) > epsilon; i++) hi *= 2;
  lo = hi / 2;
  for (int i = 0; i < 2000 && !(eps(lo) > epsilon); i++) hi = lo, lo /= 2;
  while (hi / lo > 1 + 1e-10) {
    const double mid = std::sqrt(lo * hi);
    (eps(mid) <= epsilon ? hi : lo) = mid;
  }
  return hi;
}

SplitPoint SplitAt(const SvrgSteps& s, double z2, double epsilon, double delta, StepCurveFn step) {
  const double c = s.row_range / double(s.batch);
  const double k = double(s.steps);
  std::vector<double> sampled = step(double(s.batch) / double(s.n), z2);
  for (double& v : sampled) v *= k;
  const double r = SnapshotRatio(sampled, k, epsilon, delta);
  SplitPoint p;
  p.z2 = z2;
  const double z1 = r * s.snapshot_sensitivity / c;
  p.z = std::isfinite(z1) ? std::hypot(z1, z2) : kInf;
  return p;
}

// The least total multiplier z over the split, and where (the grid, then
// golden section when `refine`). z2_min, where the sampled part alone
// reaches epsilon, bounds the search below; z >= z2 bounds it above by the
// z found at 2 z2_min.
SplitPoint SearchSplit(const SvrgSteps& s, double epsilon, double delta, StepCurveFn step,
                       bool refine) {
  const double gamma = double(s.batch) / double(s.n);
  const double k = double(s.steps);
  auto sampled_eps = [&](double z2) {
    std::vector<double> c = step(gamma, z2);
    for (double& v : c) v *= k;
    return RdpToEpsilon(LedgerOrders(), c, delta);
  };
  // (To 1e-6 relative: it only places the grid. SmallestMeeting refuses an
  // epsilon that no z2 up to 1e12 reaches.)
  const double z2_min = SmallestMeeting(sampled_eps, 1.0, epsilon, 1e-6);
  SplitPoint best;
  // Points z2 = z2_min + e^t (t the search variable): the optimum often
  // sits just above z2_min, where the sampled part's RDP changes fast, and
  // the fraction's objective has several local minima there (the best
  // order of the conversion switches), so the grid is dense near z2_min.
  auto consider = [&](double t) {
    SplitPoint p = SplitAt(s, z2_min + std::exp(t), epsilon, delta, step);
    if (p.z < best.z) best = p;
    return p.z;
  };
  consider(std::log(z2_min));  // z2 = 2 z2_min
  if (!std::isfinite(best.z))
    ThrowInvalid("epsilon " + FormatNumber(epsilon) +
                     " is not reachable by any noise for this many inner steps",
                 "Use a larger epsilon or delta, or fewer iterations.");
  // z >= z2, so the optimum is below the z found at 2 z2_min.
  const double hi0 = std::log(std::max(best.z - z2_min, z2_min));
  const double lo0 = std::log(z2_min * 1e-5);
  const int points = refine ? kGridPoints : kGridPoints / 2;
  const double h = (hi0 - lo0) / points;
  double best_t = std::log(z2_min);
  for (int i = 0; i <= points; i++) {
    const double t = lo0 + i * h;
    if (consider(t) <= best.z) best_t = t;
  }
  if (!refine) return best;
  // Golden section on the bracket around the best grid point; the result
  // is the best point evaluated, so never worse than the grid.
  double lo = best_t - h, hi = best_t + h;
  const double g = (std::sqrt(5.0) - 1) / 2;
  double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
  double f1 = consider(x1), f2 = consider(x2);
  while (hi - lo > kSplitTolerance) {
    if (f1 <= f2) {
      hi = x2, x2 = x1, f2 = f1;
      x1 = hi - g * (hi - lo);
      f1 = consider(x1);
    } else {
      lo = x1, x1 = x2, f1 = f2;
      x2 = lo + g * (hi - lo);
      f2 = consider(x2);
    }
  }
  return best;
}

}  // namespace

double SvrgRowRange(const Plan& p) {
  switch (p.loss) {
    case LossKind::kLogistic: return p.R;  // f' between 0 and -y, |y| = 1
    case LossKind::kHuber: return 2 * p.options.huber_delta * p.R;  // f' in [-delta, delta]
    case LossKind::kSoftmax: return std::sqrt(2.0) * p.R;  // ||p1 - p2|| <= sqrt(2)
  }
  throw Error(ErrorKind::kInternal, "SvrgRowRange: unknown loss");
}

std::vector<double> SvrgSampledStepRdp(double gamma, double z2) {
  return SampledStepCurve(gamma, z2);
}

std::vector<double> SvrgRdpCurve(const SvrgSteps& s, double sigma, double fraction) {
  CheckSteps(s);
  CheckFraction(fraction);
  return CurveAtMultiplier(s, sigma / (s.row_range / double(s.batch)), fraction);
}

namespace {

double CalibrateFrom(const SvrgSteps& s, double fraction, double epsilon, double delta,
                     double guess_z) {
  const std::vector<double>& orders = LedgerOrders();
  // Search in units of C = D/b, where sigma is of order 1 .. 1e3; sigma =
  // z C is rounded, so the search is on sigma itself (the stored curve is
  // computed from sigma).
  const double c = s.row_range / double(s.batch);
  return SmallestMeeting(
      [&](double sigma) {
        return RdpToEpsilon(orders, SvrgRdpCurve(s, sigma, fraction), delta);
      },
      guess_z * c, epsilon);
}

}  // namespace

double SvrgCalibrateSigma(const SvrgSteps& s, double fraction, double epsilon,
                          double delta) {
  CheckSteps(s);
  CheckFraction(fraction);
  // A guess from the cheap stand-in curve at this fraction (a lower bound
  // of the step's RDP, so the answer is at or above the guess).
  const std::vector<double>& orders = LedgerOrders();
  const double c = s.row_range / double(s.batch);
  const double gamma = double(s.batch) / double(s.n);
  const double k = double(s.steps);
  double guess = 1;
  try {
    guess = CalibrateNoiseMultiplier(
        [&](double z) {
          std::vector<double> curve = PredictedStepCurve(gamma, std::sqrt(1 - fraction) * z);
          const double a_ratio = std::sqrt(fraction) * z * c / s.snapshot_sensitivity;
          for (size_t i = 0; i < orders.size(); i++)
            curve[i] = k * (curve[i] + orders[i] / (2 * a_ratio * a_ratio));
          return RdpToEpsilon(orders, curve, delta);
        },
        epsilon);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kInvalidParameter) throw;
  }
  return CalibrateFrom(s, fraction, epsilon, delta, guess);
}

SvrgSplit SvrgOptimalSplit(const SvrgSteps& s, double epsilon, double delta) {
  CheckSteps(s);
  const SplitPoint p = SearchSplit(s, epsilon, delta, SampledStepCurve, /*refine=*/true);
  SvrgSplit out;
  out.fraction = 1 - (p.z2 / p.z) * (p.z2 / p.z);
  CheckFraction(out.fraction);
  out.sigma = CalibrateFrom(s, out.fraction, epsilon, delta, p.z);
  return out;
}

double SvrgPredictedSigma(const SvrgSteps& s, double epsilon, double delta) {
  CheckSteps(s);
  return SearchSplit(s, epsilon, delta, PredictedStepCurve, /*refine=*/false).z *
         (s.row_range / double(s.batch));
}

int64_t SvrgTotalSteps(int64_t epochs, int64_t m, bool doubling) {
  if (epochs < 1 || m < 1) throw Error(ErrorKind::kInternal, "SVRG schedule without steps");
  const std::string hint = "Use fewer iterations (epochs).";
  if (!doubling) {
    if (m > kMaxTotalSteps / epochs)
      ThrowInvalid("the plan would run more than " + std::to_string(kMaxTotalSteps) +
                       " inner steps (" + std::to_string(epochs) + " epochs of " +
                       std::to_string(m) + ")",
                   hint);
    return epochs * m;
  }
  // m (2 + 4 + ... + 2^T) = m (2^{T+1} - 2).
  if (epochs > 39 || m > kMaxTotalSteps / ((int64_t(1) << (epochs + 1)) - 2))
    ThrowInvalid("the plan would run more than " + std::to_string(kMaxTotalSteps) +
                     " inner steps (" + std::to_string(epochs) +
                     " doubling epochs, the first of " + std::to_string(2 * m) + ")",
                 hint);
  return m * ((int64_t(1) << (epochs + 1)) - 2);
}

void SvrgSpec(AlgorithmSpec& s) {
  s.options = {"l1", "iterations", "step_size", "batch_size"};
  s.refusals = {{"radius", "it takes proximal steps, not projections onto a ball"}};
  s.needs_delta = "it adds Gaussian noise to every inner step";
  // RunSvrg: the snapshot, x, v, the two batch gradients, the mean, the
  // noisy snapshot gradient and the full gradient; a batch and the
  // sampler's n indices.
  s.model_vectors = 8;
  s.row_arrays = 2;
}

int64_t SvrgBatch(const Options& o, int64_t n, Algorithm a) {
  if (o.batch_size > n)
    ThrowInvalid(std::string("batch_size ") + std::to_string(o.batch_size) +
                 " exceeds the number of rows n = " + std::to_string(n) + " (algorithm " +
                 AlgorithmName(a) + ")");
  return o.batch_size;
}

double SvrgNoiseError(const Plan& p, bool doubling, int64_t batch, const SvrgCandidate& c) {
  SvrgSteps s;
  s.n = p.n;
  s.batch = batch;
  s.steps = SvrgTotalSteps(c.epochs, c.m, doubling);
  s.snapshot_sensitivity = 2 * (p.L + p.sum_slack) / double(p.n);
  s.row_range = SvrgRowRange(p) + 2 * p.sum_slack;
  double sigma;
  try {
    sigma = SvrgPredictedSigma(s, p.options.epsilon, p.options.delta);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kInvalidParameter) throw;
    return std::numeric_limits<double>::infinity();  // epsilon not reachable at this b
  }
  return c.noise_weight * sigma * sigma * double(p.dim);
}

SvrgBatchChoice SvrgChooseBatch(const Plan& p, bool doubling,
                                const std::function<SvrgCandidate(int64_t)>& schedule) {
  SvrgBatchChoice best;
  best.noise_error = std::numeric_limits<double>::infinity();
  for (int64_t b = 1; b <= p.n; b *= 2) {
    const SvrgCandidate c = schedule(b);
    if (c.m < 1 || c.epochs < 1) continue;
    if (doubling && c.epochs > 39) continue;  // SvrgTotalSteps' limit
    if (!doubling && c.m > kMaxTotalSteps / c.epochs) continue;
    const double steps = double(SvrgTotalSteps(c.epochs, c.m, doubling));
    if (b > 1 && double(b) * steps > std::max(kSvrgMaxInnerPasses * double(p.n), kSvrgMinInnerRows)) break;
    const double error = SvrgNoiseError(p, doubling, b, c);
    if (error < best.noise_error) best = {b, error};
  }
  return best;
}

double SvrgPartSigma(double sigma, double fraction, bool snapshot) {
  return DyadicNoiseScale(std::sqrt(snapshot ? fraction : 1 - fraction) * sigma);
}

void PlanSvrgNoise(Plan& p, int64_t m, bool doubling, double paper_sigma,
                   const std::string& paper_rule) {
  const Options& o = p.options;
  const int64_t steps = SvrgTotalSteps(p.iterations, m, doubling);
  SvrgSteps s;
  s.n = p.n;
  s.batch = p.batch_size;
  s.steps = steps;
  // (a): replace-one change of grad F; (b): D. Each with the sums'
  // rounding (exact_sum.hpp, (a)): the snapshot mean is within sqrt(dim)
  // sum_grid of the exact one (L + sum_slack), and the sampled part is a
  // difference of two exact batch sums (D + 2 sum_slack).
  s.snapshot_sensitivity = 2 * (p.L + p.sum_slack) / double(p.n);
  s.row_range = SvrgRowRange(p) + 2 * p.sum_slack;
  SvrgSplit split = SvrgOptimalSplit(s, o.epsilon, o.delta);
  // The step noise (noise.hpp, THE BRIDGE). The two parts are released as
  // u1 (round(v~/u1) + round(2^b X1)) and u2 (round(h_t/u2) + round(2^b X2)),
  // X1, X2 exact N(0, I), u_k = sigma_k 2^-b, sigma_1 = Dyadic(sqrt(f) sigma)
  // and sigma_2 = Dyadic(sqrt(1 - f) sigma) (SvrgPartSigma; rounded up, so
  // each part has at least its planned variance). Each is a rounding of a
  // continuous Gaussian mechanism, and their sum is a post-processing of the
  // pair, so the split argument above holds unchanged. Rounding moves each
  // part's replace-one change by at most 2 sqrt(dim) u_k: (a) 2G/n + 2
  // sqrt(dim) u1; (b) 2C + 2 sqrt(dim) u2, i.e. D + b sqrt(dim) u2 in place
  // of D. b is chosen from the unrounded quantities so that each term is at
  // most 2^-10 of the part's half-sensitivity (ExactGaussianBits). The split
  // f stays; sigma is recalibrated on the inflated sensitivities until the
  // curve at sigma meets (epsilon, delta). The curve only falls as sigma
  // grows even with the inflation: each part's ratio sigma_k / (c_k + k
  // sigma_k) increases with sigma_k; so a larger paper sigma is sound too.
  const double f = split.fraction;
  const double root_dim = std::sqrt(double(p.dim));
  const int bits = std::max(
      ExactGaussianBits(std::sqrt(f) * split.sigma / (s.snapshot_sensitivity / 2), p.dim),
      ExactGaussianBits(std::sqrt(1 - f) * split.sigma * double(s.batch) / s.row_range, p.dim));
  SvrgSteps snapped = s;
  auto inflate = [&](double sig) {
    const double u1 = std::ldexp(SvrgPartSigma(sig, f, true), -bits);
    const double u2 = std::ldexp(SvrgPartSigma(sig, f, false), -bits);
    snapped.snapshot_sensitivity = s.snapshot_sensitivity + 2 * root_dim * u1;
    snapped.row_range = s.row_range + double(s.batch) * root_dim * u2;
  };
  double sigma = split.sigma;
  for (int i = 0;; ++i) {
    inflate(sigma);
    const double need = SvrgCalibrateSigma(snapped, f, o.epsilon, o.delta);
    if (need <= sigma) break;
    if (i > 50) throw Error(ErrorKind::kInternal, "SVRG plan: the rounded sigma does not settle");
    sigma = need * (1 + std::ldexp(1.0, -20));  // overshoot a little: settles in a step or two
  }
  p.noise_rule =
      "smallest sigma whose RDP over all inner steps, with sigma^2 split " + FormatNumber(f) +
      " : " + FormatNumber(1 - f) +
      " between the snapshot gradient (Gaussian, Mironov 2017 Prop. 7) and the "
      "sampled gradient difference (a batch without replacement: the dominating pair of "
      "Zhu, Dong & Wang 2022, Prop. 30; RDP composition, Mironov 2017 Prop. 1), "
      "gives (epsilon, delta) at the rounded sensitivities; derivation in svrg_common.cpp";
  if (p.accountant == Accountant::kPaper) {
    if (paper_sigma >= sigma) {
      sigma = paper_sigma;
      inflate(sigma);
      p.noise_rule = paper_rule;
    } else {
      AddNote(p, "the paper's sigma " + FormatNumber(paper_sigma) +
                     " does not reach (epsilon, delta) under dperm's accountant; the calibrated sigma is used");
    }
  }
  p.rdp_curve = SvrgRdpCurve(snapped, sigma, f);
  p.mechanism_fields.Set(kNoiseFraction, f);
  p.noise_bits = bits;
  p.grid = std::ldexp(SvrgPartSigma(sigma, f, false), -bits);  // the sampled part's grid
  p.sum_inflation = 4 * p.sum_slack / double(p.batch_size) + 2 * p.sum_slack / double(p.n);
  p.rounding_inflation = 2 * root_dim * (p.grid + std::ldexp(SvrgPartSigma(sigma, f, true), -bits)) +
                         p.sum_inflation;
  p.sampler = "two independent rounded exact Gaussians (Karney 2016, Alg. N; noise.hpp), of scales "
              "Dyadic(sqrt(f) sigma) and Dyadic(sqrt(1 - f) sigma), for the snapshot and the sampled part, "
              "each on its grid sigma_part 2^-" + std::to_string(bits) + " (the sampled part's is `grid`)";
  p.noisy_steps = steps;
  p.sampling = p.batch_size == p.n ? Sampling::kFullBatch : Sampling::kWithoutReplacement;
  p.sampling_rate = double(p.batch_size) / double(p.n);
  // The largest change of one step's v (before noise) under replace-one:
  // 2G/n through the snapshot plus 2D/b through the sampled rows.
  p.sensitivity = 2 * snapped.row_range / double(p.batch_size) + snapped.snapshot_sensitivity;
  p.sensitivity_rule = "2 D / batch_size + 2 L / n: a replaced row moves the snapshot gradient by 2L/n "
                       "and, when sampled, the batch's gradient difference by 2D/b (D = " +
                       FormatNumber(s.row_range) + ", the range of one row's gradient difference)"
                       " + 2 sqrt(dim) (u1 + u2) (each part rounded to its grid)";
  p.noise = NoiseKind::kGaussian;
  p.noise_scale = sigma;
  p.noise_multiplier = sigma / (p.sensitivity / 2);
  p.expected_noise_sq = ExpectedNoiseSq(NoiseKind::kGaussian, p.dim, sigma);
  if (!std::isfinite(p.noise_scale) || !std::isfinite(p.expected_noise_sq))
    ThrowInvalid("epsilon " + FormatNumber(o.epsilon) + " is too small: the noise scale overflows",
                 "Use a larger epsilon.");
  const double evaluations =
      double(p.iterations) * double(p.n) + 2 * double(p.batch_size) * double(steps);
  AddNote(p, std::to_string(p.iterations) + " epochs, epoch length m = " + std::to_string(m) +
                 (doubling ? " doubling (m_s = 2^s m)" : "") + ", " + std::to_string(steps) +
                 " noisy inner steps of " + std::to_string(p.batch_size) +
                 (p.batch_size == 1 ? " row" : " rows") + "; gradient evaluations: " +
                 FormatNumber(evaluations) + " (T n for the snapshots + 2 b K inner)");
}

int64_t SvrgEpochLength(const Plan& p, bool doubling) {
  const int64_t per_m = SvrgTotalSteps(p.iterations, 1, doubling);
  if (p.noisy_steps < per_m || p.noisy_steps % per_m != 0)
    throw Error(ErrorKind::kInternal, "SVRG plan: noisy_steps does not match the epochs");
  return p.noisy_steps / per_m;
}

void ProxElasticNet(Eigen::VectorXd& w, double t, double l1, double l2) {
  ProxL1(w, t * l1);
  if (l2 > 0) w /= 1 + t * l2;
}

Eigen::VectorXd RunSvrg(const Plan& p, const Objective& objective, SecureRng& rng,
                        bool doubling) {
  const int64_t n = objective.n();
  const int64_t b = p.batch_size;
  if (n != p.n || b < 1 || b > n || objective.dim() != p.dim)
    throw Error(ErrorKind::kInternal, "SVRG plan does not match the data");
  const int64_t m = SvrgEpochLength(p, doubling);
  const double eta = p.step_size;
  const double sigma = p.noise_scale;
  const double l1 = objective.l1(), l2 = objective.l2();
  const int dim = p.dim;
  Eigen::VectorXd snapshot = Eigen::VectorXd::Zero(dim);  // x~_0 = 0
  Eigen::VectorXd x = snapshot;
  Eigen::VectorXd v(dim), at_x(dim), at_snapshot(dim), mean(dim), noisy_full(dim);
  // The two parts' noise scales (PlanSvrgNoise's split).
  double snapshot_sigma = 0, sampled_sigma = 0;
  if (sigma > 0) {
    if (!(p.noise_bits > 0) || !(p.mechanism_fields.Get(kNoiseFraction) > 0 && p.mechanism_fields.Get(kNoiseFraction) < 1))
      throw Error(ErrorKind::kInternal, "SVRG plan has no noise bits or no noise split");
    snapshot_sigma = SvrgPartSigma(sigma, p.mechanism_fields.Get(kNoiseFraction), true);
    sampled_sigma = SvrgPartSigma(sigma, p.mechanism_fields.Get(kNoiseFraction), false);
  }
  std::vector<int64_t> batch(size_t(b), 0), scratch;
  for (int64_t s = 1; s <= p.iterations; s++) {
    CheckInterrupt();
    const Eigen::VectorXd full = objective.LossGradient(snapshot);  // v~ = grad F(x~)
    if (!doubling) x = snapshot;  // Algorithm 1, line 4: x_0^s = x~
    const int64_t steps = doubling ? (m << s) : m;  // Algorithm 2: m_s = 2^s m
    mean.setZero();
    for (int64_t t = 0; t < steps; t++) {
      if ((t & 1023) == 1023) CheckInterrupt();
      if (b == 1)
        batch[0] = static_cast<int64_t>(rng.UniformIndex(uint64_t(n)));
      else
        SampleWithoutReplacement(rng, n, b, scratch, batch);
      at_x.setZero();
      at_snapshot.setZero();
      objective.AddRowGradients(x, batch.data(), b, at_x);
      objective.AddRowGradients(snapshot, batch.data(), b, at_snapshot);
      // v = grad f_i(x) - grad f_i(x~) + v~ + u (line 7; batch mean for b > 1),
      // u = u1 + u2 as the two snapped parts of PlanSvrgNoise.
      v = (at_x - at_snapshot) / double(b);
      noisy_full = full;
      if (sigma > 0) {
        SnapExactGaussian(rng, snapshot_sigma, p.noise_bits, noisy_full.data(), dim);
        SnapExactGaussian(rng, sampled_sigma, p.noise_bits, v.data(), dim);
      }
      v += noisy_full;
      x -= eta * v;
      ProxElasticNet(x, eta, l1, l2);  // line 8: x = prox_{eta r}(x - eta v)
      mean += x;
    }
    snapshot = mean / double(steps);  // line 10: x~_s = mean of the inner iterates
    // Algorithm 2: the next epoch starts from x = x_{m_s}^s (kept as is).
  }
  return snapshot;
}

}  // namespace dperm
