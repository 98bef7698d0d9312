// PLD accountant of the symmetric dominating pair of the Gaussian mechanism
// on batches sampled without replacement under replace-one (the pair is
// derived at the top of src/core/accounting/rdp_wor.cpp), a lower bound from a real
// pair of neighbouring datasets, and the calibration of the noise.
//
// UNITS. In units of the sensitivity Δ = 2C the pair's pieces are the
// Poisson-subsampled Gaussian pairs of pld.hpp at rate q = γ and noise
// s = σ/Δ = sigma/2: δ_remove = SubsampledGaussianDelta(γ, s, kRemove, ·),
// δ_add = SubsampledGaussianDelta(γ, s, kAdd, ·), and the dominating pair's
// privacy profile is δ*(ε) = max{δ_remove(ε), δ_add(ε)} for every ε ∈ R.
//
// PESSIMISTIC DISCRETISATION (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi,
// PETS 2022, "Connect the dots", Algorithm 1). δ* is convex in e^ε (a
// maximum of two convex functions), so the discrete PLD whose δ joins the
// exact points (e^{ε_i}, δ*(ε_i)), ε_i = i·h, by chords is at least δ*
// between grid points, equals it at them, and carries δ*(ε_top) at +∞ (at
// least δ* above the grid). Below the grid bottom ε_0 ≤ −E, where E is the
// top loss before the noise truncation: the pair is symmetric, so
// δ*(ε) = 1 − e^ε + e^ε δ*(−ε), while the discrete PLD has
// δ(ε) = 1 − e^ε S with S = Σ p_i e^{−ε_i}; equality at ε_0 gives
// S = 1 − δ*(−ε_0), hence δ(ε) − δ*(ε) = e^ε (δ*(−ε_0) − δ*(−ε)) ≥ 0 since
// −ε > −ε_0 and δ* is non-increasing. So the discrete pair dominates the
// continuous one at EVERY ε, which is what adaptive composition needs
// (Zhu, Dong & Wang 2022, Thm 10); composition (FFT, pld.cpp) moves
// truncated upper tails to +∞ and drops lower tails of mass that adds
// nothing to δ at ε ≥ 0.
#include "dperm/accounting/pld_wor.hpp"

#include "dperm/accounting/budget.hpp"
#include "dperm/accounting/calibrate.hpp"
#include "dperm/util/interrupt.hpp"
#include "dperm/util/numeric_util.hpp"
#include "dperm/accounting/rdp.hpp"
#include "dperm/accounting/rdp_wor.hpp"

#include <boost/math/special_functions/erf.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>
#include <string>
#include <vector>

namespace dperm {
namespace {

constexpr double kSqrtHalf = 0.707106781186547524400844362104849039;

// The noise is truncated where it leaves out ½e^{−50} of its mass on each
// side (dp_accounting's log_mass_truncation_bound, as pld_gaussian.cpp).
constexpr double kLogMassTruncationBound = -50.0;

// Relative precision of the calibrated noise multipliers (rounded up).
constexpr double kSigmaRelTol = 1e-3;

double NormalCdf(double x) { return 0.5 * std::erfc(-x * kSqrtHalf); }

void CheckMechanism(double gamma, double sigma) {
  if (!(gamma > 0.0 && gamma <= 1.0))
    ThrowInvalid("sampling fraction gamma must be in (0, 1], got " + Num(gamma));
  if (!std::isfinite(sigma) || !(sigma > 0.0))
    ThrowInvalid("noise multiplier sigma must be a finite number greater than 0, got " +
                 Num(sigma));
}

void CheckComposition(std::int64_t steps, double discretization) {
  if (steps < 1) ThrowInvalid("steps must be at least 1, got " + std::to_string(steps));
  if (!std::isfinite(discretization) || !(discretization > 0.0))
    ThrowInvalid("discretization must be a finite number greater than 0, got " +
                 Num(discretization));
}

void CheckDelta(double delta) {
  if (!(delta > 0.0 && delta < 1.0))
    ThrowInvalid("delta must be in the open interval (0, 1), got " + Num(delta));
}

// The noise truncation point z (negative): Φ(z) = ½e^{−50}.
double TruncationZ() {
  return -std::sqrt(2.0) * boost::math::erfc_inv(std::exp(kLogMassTruncationBound), ThrowPolicy());
}

// The remove pair's privacy loss at output x (decreasing in x):
// log(1 − γ + γ e^{(−1/2 − x)/s²}).
double RemoveLoss(double gamma, double s, double x) {
  const double a = (-0.5 - x) / (s * s);
  if (gamma == 1.0) return a;
  const double r = gamma * std::expm1(a);
  if (std::isfinite(r)) return std::log1p(r);
  return a + std::log(gamma + (1.0 - gamma) * std::exp(-a));
}

// The output x at which the remove pair's loss is eps (eps > log(1 − γ)).
double RemoveLossInverse(double gamma, double s, double eps) {
  if (gamma == 1.0) return -0.5 - s * s * eps;
  const double r = std::expm1(eps) / gamma;
  const double a = std::isfinite(r)
                       ? std::log1p(r)
                       : eps + std::log1p(-(1.0 - gamma) * std::exp(-eps)) - std::log(gamma);
  return -0.5 - s * s * a;
}

// The dominating pair's privacy profile δ*(ε).
double SymmetricDelta(double gamma, double s, double eps) {
  return std::max(SubsampledGaussianDelta(gamma, s, PldAdjacency::kRemove, eps),
                  SubsampledGaussianDelta(gamma, s, PldAdjacency::kAdd, eps));
}

DiscretePld ComposeSteps(const DiscretePld& one, std::int64_t steps) {
  CheckInterrupt();
  DiscretePld out = one.SelfCompose(steps);
  CheckInterrupt();
  return out;
}

// ε of the remove pair's rounded-down PLD after `steps` steps (lower bound).
double LowerBoundEpsilon(double gamma, double s, std::int64_t steps, double delta, double h) {
  const double z = TruncationZ();
  const double top = RemoveLoss(gamma, s, s * z - 1.0);  // loss at the far left
  const double bottom = gamma == 1.0 ? RemoveLoss(gamma, s, -s * z) : std::log1p(-gamma);
  const double first = std::floor(bottom / h), last = std::floor(top / h);
  if (!std::isfinite(first) || !std::isfinite(last) ||
      last - first + 1.0 > static_cast<double>(kPldMaxPoints))
    ThrowInvalid("PLD lower bound: too many grid points", "use a coarser discretization");
  const std::int64_t offset = static_cast<std::int64_t>(first);
  const size_t n = static_cast<size_t>(last - first + 1.0);
  // R-mass of x in (a, b]: R = (1−γ)N(0, s²) + γN(−1, s²).
  auto mass_below = [&](double x) {  // R(X ≤ x)
    if (x == std::numeric_limits<double>::infinity()) return 1.0;
    if (x == -std::numeric_limits<double>::infinity()) return 0.0;
    return (1.0 - gamma) * NormalCdf(x / s) + gamma * NormalCdf((x + 1.0) / s);
  };
  std::vector<double> pmf(n, 0.0);
  // Bin i holds losses in [(offset+i)h, (offset+i+1)h), i.e. x in
  // (x((offset+i+1)h), x((offset+i)h)]; losses at or above the top bin's
  // lower edge all go to the top bin (rounding down). x(·) is decreasing.
  for (size_t i = 0; i < n; ++i) {
    const double lo_eps = static_cast<double>(offset + static_cast<std::int64_t>(i)) * h;
    // (γ < 1: the loss never falls below log(1 − γ), the bottom edge; γ = 1:
    // losses below the first bin are dropped, which only lowers δ.)
    const double x_hi = (gamma < 1.0 && lo_eps <= bottom) ? std::numeric_limits<double>::infinity()
                                                          : RemoveLossInverse(gamma, s, lo_eps);
    const double x_lo = i + 1 == n ? -std::numeric_limits<double>::infinity()
                                   : RemoveLossInverse(gamma, s, lo_eps + h);
    pmf[i] = std::max(0.0, mass_below(x_hi) - mass_below(x_lo)) * (1.0 - 1e-12);
  }
  const DiscretePld composed = ComposeSteps(DiscretePld(h, offset, std::move(pmf), 0.0), steps);
  // Mass moved to +∞ by the composition's truncation adds exactly itself to
  // δ, while its true contribution is ≥ 0: asking for δ + p(∞) removes it.
  return composed.GetEpsilon(std::min(1.0, delta + composed.infinity_mass()));
}

}  // namespace

// Pessimistic connect-the-dots of δ* on the grid ε_i = i·h over [−E, E]
// (argument at the top of the file): ConnectTheDotsPld (pld.hpp).
DiscretePld WorGaussianPld(double gamma, double sigma, double discretization) {
  CheckMechanism(gamma, sigma);
  CheckComposition(1, discretization);
  const double s = 0.5 * sigma, h = discretization;
  const double top = RemoveLoss(gamma, s, s * TruncationZ() - 1.0);
  const double first = std::floor(-top / h), last = std::ceil(top / h);
  if (!std::isfinite(first) || !std::isfinite(last))
    ThrowInvalid("PLD accounting: privacy loss range is not finite for sigma " + Num(sigma),
                 "use a larger noise multiplier");
  return ConnectTheDotsPld(h, first, last,
                           [&](double eps) { return SymmetricDelta(gamma, s, eps); });
}

double EpsilonWorGaussianPld(double gamma, double sigma, std::int64_t steps, double delta,
                             double discretization) {
  CheckMechanism(gamma, sigma);
  CheckComposition(steps, discretization);
  CheckDelta(delta);
  return ComposeSteps(WorGaussianPld(gamma, sigma, discretization), steps).GetEpsilon(delta);
}

double DeltaWorGaussianPld(double gamma, double sigma, std::int64_t steps, double epsilon,
                           double discretization) {
  CheckMechanism(gamma, sigma);
  CheckComposition(steps, discretization);
  if (!(epsilon >= 0.0)) ThrowInvalid("epsilon must be >= 0, got " + Num(epsilon));
  return ComposeSteps(WorGaussianPld(gamma, sigma, discretization), steps).GetDelta(epsilon);
}

double EpsilonWorGaussianLowerBound(double gamma, double sigma, std::int64_t steps, double delta,
                                    double discretization) {
  CheckMechanism(gamma, sigma);
  CheckComposition(steps, discretization);
  CheckDelta(delta);
  return LowerBoundEpsilon(gamma, 0.5 * sigma, steps, delta, discretization);
}

namespace {

// Bisection on log sigma for a non-increasing eps(sigma): the smallest sigma
// in [lo, hi] with eps ≤ target, given eps(lo) > target ≥ eps(hi); returns
// the upper end of the final bracket (eps ≤ target there as evaluated).
template <typename F>
double BisectSigma(F eps, double lo, double hi, double target) {
  while (hi / lo > 1.0 + kSigmaRelTol) {
    const double mid = std::sqrt(lo * hi);
    (eps(mid) <= target ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace

// Order of work: the PLD first, bracketed from twice the Poisson RDP
// multiplier (the remove half of the pair in units of Δ = 2C, cheap; only
// a starting point), then bisection; the dominating pair's RDP (slower: a
// quadrature per order) only when the PLD cannot be computed, when it is
// not wanted, or when the caller asks for the details.
namespace {

// Calibrations already made in this process: a plan is often made twice
// (dp_explain, then the release; a release per seed; the unit tests plan
// the same settings many times) and a calibration is costly. The
// answer is a deterministic function of the public arguments, so a stored
// one is the answer; only complete calibrations are stored (an interrupt or
// an error throws before), and at most kMemoSize (then the memo restarts).
struct MemoKey {
  double gamma;
  std::int64_t steps;
  double epsilon, delta;
  bool use_pld;
  bool operator<(const MemoKey& o) const {
    return std::tie(gamma, steps, epsilon, delta, use_pld) <
           std::tie(o.gamma, o.steps, o.epsilon, o.delta, o.use_pld);
  }
};
constexpr size_t kMemoSize = 256;
std::mutex memo_mutex;
std::map<MemoKey, double>& Memo() {
  static std::map<MemoKey, double> memo;
  return memo;
}

double CalibrateWorGaussianUncached(double gamma, std::int64_t steps, double epsilon, double delta,
                                    bool use_pld, WorCalibration* detail);

}  // namespace

double CalibrateWorGaussian(double gamma, std::int64_t steps, double epsilon, double delta,
                            bool use_pld, WorCalibration* detail) {
  // (NaN arguments, refused by the calibration, must not reach the map's
  // ordering.)
  if (detail != nullptr || !std::isfinite(gamma) || !std::isfinite(epsilon) ||
      !std::isfinite(delta))
    return CalibrateWorGaussianUncached(gamma, steps, epsilon, delta, use_pld, detail);
  const MemoKey key{gamma, steps, epsilon, delta, use_pld};
  {
    std::lock_guard<std::mutex> lock(memo_mutex);
    auto it = Memo().find(key);
    if (it != Memo().end()) return it->second;
  }
  const double sigma = CalibrateWorGaussianUncached(gamma, steps, epsilon, delta, use_pld, nullptr);
  std::lock_guard<std::mutex> lock(memo_mutex);
  if (Memo().size() >= kMemoSize) Memo().clear();
  Memo().emplace(key, sigma);
  return sigma;
}

namespace {

double CalibrateWorGaussianUncached(double gamma, std::int64_t steps, double epsilon, double delta,
                                    bool use_pld, WorCalibration* detail) {
  CheckComposition(steps, 1.0);
  CheckDelta(delta);
  if (!(gamma > 0.0 && gamma <= 1.0))
    ThrowInvalid("sampling fraction gamma must be in (0, 1], got " + Num(gamma));
  if (!std::isfinite(epsilon) || !(epsilon > 0.0))
    ThrowInvalid("target epsilon must be a finite number greater than 0, got " + Num(epsilon));
  const std::vector<double>& orders = LedgerOrders();
  auto rdp_sigma = [&] {
    return CalibrateNoiseMultiplier(
        [&](double z) {
          std::vector<double> curve(orders.size());
          for (size_t i = 0; i < orders.size(); ++i)
            curve[i] =
                static_cast<double>(steps) * RdpWorGaussianDominatingPair(gamma, z, orders[i]);
          return RdpToEpsilon(orders, curve, delta);
        },
        epsilon);
  };
  WorCalibration out;
  if (use_pld) {
    try {
      // Grid width: 1e-3 min(1, epsilon). Any width gives an upper bound
      // (pessimistic discretisation); at the paper settings 1e-3 moves ε by
      // under 0.1% against 1e-4, and it is ~10x faster.
      const double h = 1e-3 * std::min(1.0, epsilon);
      auto pld_eps = [&](double z) { return EpsilonWorGaussianPld(gamma, z, steps, delta, h); };
      double hi = 2.0 * CalibratePoissonSubsampledGaussianRdp(gamma, steps, epsilon, delta);
      for (int i = 0; i < 40 && pld_eps(hi) > epsilon; ++i) hi *= 1.1;
      double lo = hi / 1.1;
      for (int i = 0; i < 40 && !(pld_eps(lo) > epsilon); ++i) lo /= 1.1;
      if (pld_eps(hi) <= epsilon && pld_eps(lo) > epsilon) {
        out.pld_sigma = BisectSigma(pld_eps, lo, hi, epsilon);
        out.sigma = out.pld_sigma;
        out.used_pld = true;
      }
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kInvalidParameter) throw;
      out.pld_sigma = 0;  // the PLD could not be computed: use the RDP
    }
  }
  if (!out.used_pld || detail != nullptr) {
    out.rdp_sigma = rdp_sigma();
    if (!out.used_pld || out.rdp_sigma < out.sigma) {
      out.sigma = out.rdp_sigma;
      out.used_pld = false;
    }
  }
  if (detail != nullptr) *detail = out;
  return out.sigma;
}

}  // namespace

double LowerBoundWorGaussianSigma(double gamma, std::int64_t steps, double epsilon, double delta,
                                  double discretization) {
  CheckComposition(steps, discretization);
  CheckDelta(delta);
  auto eps = [&](double z) {
    return EpsilonWorGaussianLowerBound(gamma, z, steps, delta, discretization);
  };
  double lo = 1.0, hi = 1.0;
  while (eps(hi) > epsilon) hi *= 2.0;
  while (eps(lo) <= epsilon) lo *= 0.5;
  // Smallest sigma with eps ≤ target is in (lo, hi]; report the lower end so
  // that the bound errs low.
  while (hi / lo > 1.0 + kSigmaRelTol) {
    const double mid = std::sqrt(lo * hi);
    (eps(mid) <= epsilon ? hi : lo) = mid;
  }
  return lo;
}

}  // namespace dperm
