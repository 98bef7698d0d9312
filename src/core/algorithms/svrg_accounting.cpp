// The privacy accounting of DP-SVRG's and DP-SVRG++'s noisy inner steps:
// step curves (memoised), the snapshot/sampled split search, and the noise
// calibration (derivation in svrg_accounting.hpp).
#include "dperm/algorithms/svrg_accounting.hpp"

#include <algorithm>
#include <boost/math/tools/toms748_solve.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>

#include "dperm/accounting/budget.hpp"
#include "dperm/accounting/calibrate.hpp"
#include "dperm/accounting/rdp.hpp"
#include "dperm/accounting/rdp_wor.hpp"
#include "dperm/util/interrupt.hpp"
#include "dperm/util/numeric_util.hpp"

namespace dperm {
namespace {

// The split search ("FINDING f" above): kGridPoints + 1 points (half as many
// for the batch search's prediction), then golden section around the best
// down to this width (in log(z2 - z2_min)).
const int kGridPoints = 24;
const double kSplitTolerance = 1e-3;

constexpr double kInf = std::numeric_limits<double>::infinity();

// One sampled step's RDP on LedgerOrders() at multiplier z2 = sigma2 / C
// (RdpWorGaussianTight: the dominating pair of Zhu, Dong & Wang 2022, Prop.
// 30, capped by WBK Thm 9 and the unsampled Gaussian), or the batch
// search's cheaper stand-in (below). Deterministic functions of public
// inputs, costly (the exact one a quadrature per order), and that a plan
// asks for again and again (the split search, the rounding
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

std::vector<double> SampledStepCurve(double gamma, double z2) {
  return StepCurve(gamma, z2, false);
}
std::vector<double> PredictedStepCurve(double gamma, double z2) {
  return StepCurve(gamma, z2, true);
}

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
  if (s.n < 1 || s.batch < 1 || s.batch > s.n || s.steps < 1 || !(s.snapshot_sensitivity > 0) ||
      !(s.row_range > 0))
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
      [&](double sigma) { return RdpToEpsilon(orders, SvrgRdpCurve(s, sigma, fraction), delta); },
      guess_z * c, epsilon);
}

}  // namespace

double SvrgCalibrateSigma(const SvrgSteps& s, double fraction, double epsilon, double delta) {
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

}  // namespace dperm
