// Rényi DP of the Gaussian mechanism and its subsampled variants,
// composition, and conversion to (ε, δ)-DP.
#include "dperm/accounting/rdp.hpp"

#include "dperm/util/interrupt.hpp"
#include "dperm/util/numeric_util.hpp"
#include "dperm/accounting/rdp_poisson.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace dperm {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Subsampled orders cost O(α) terms; no useful grid goes near this.
constexpr double kMaxSubsampledOrder = 1e5;

// A series result is used only if its estimated relative error of log A_α
// is below this; otherwise quadrature (accurate to ~1e-14) is used.
constexpr double kSeriesAcceptRelError = 1e-10;

// σ (or σ/Δ) must be a finite positive number.
void CheckSigma(double sigma, const char* name) {
  if (!std::isfinite(sigma) || !(sigma > 0.0))
    ThrowInvalid(std::string(name) + " must be a finite number greater than 0, got " + Num(sigma));
}

// An RDP order must be a finite number above 1 (and bounded if `max` > 0).
void CheckOrder(double order, double max = 0.0) {
  if (!std::isfinite(order) || !(order > 1.0))
    ThrowInvalid("RDP order must be a finite number greater than 1, got " + Num(order));
  if (max > 0.0 && order > max)
    ThrowInvalid("RDP order must be at most " + Num(max) + ", got " + Num(order),
                 "the standard order grid stops at 256");
}

// A sampling probability in [0, 1], or in (0, 1] when zero is not allowed.
void CheckRate(double q, const char* name, bool allow_zero) {
  const bool ok = allow_zero ? (q >= 0.0 && q <= 1.0) : (q > 0.0 && q <= 1.0);
  if (!ok)
    ThrowInvalid(std::string(name) + " must be in " + (allow_zero ? "[0, 1]" : "(0, 1]") +
                 ", got " + Num(q));
}

void CheckSteps(std::int64_t steps) {
  if (steps < 1) ThrowInvalid("steps must be at least 1, got " + std::to_string(steps));
}

void CheckDelta(double delta) {
  if (!(delta > 0.0 && delta < 1.0))
    ThrowInvalid("delta must be in the open interval (0, 1), got " + Num(delta));
}

// One RDP value: a number ≥ 0 or +inf, never NaN or negative.
void CheckRdpValue(double r, size_t index) {
  if (!(r >= 0.0))
    ThrowInvalid("RDP values must be >= 0 (or +inf), got " + Num(r) + " at position " +
                 std::to_string(index + 1));
}

// Shared checks of an (orders, rdp) curve before conversion.
void CheckCurve(const std::vector<double>& orders, const std::vector<double>& rdp) {
  if (orders.empty()) ThrowInvalid("the RDP order list is empty");
  if (orders.size() != rdp.size())
    ThrowInvalid("RDP orders and values differ in length (" + std::to_string(orders.size()) +
                 " orders, " + std::to_string(rdp.size()) + " values)");
  for (size_t i = 0; i < orders.size(); ++i) {
    CheckOrder(orders[i]);
    CheckRdpValue(rdp[i], i);
  }
}

// log C(n, k) for integers 0 ≤ k ≤ n.
double LogBinomial(double n, double k) {
  return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
}

// log(e^a + e^b) without overflow.
double LogAddExp(double a, double b) {
  const double hi = std::max(a, b), lo = std::min(a, b);
  return hi == -kInf ? hi : hi + std::log1p(std::exp(lo - hi));
}

// log(expm1(x)) for x ≥ 0 without overflow (−inf at 0).
double LogExpm1(double x) {
  return x > 30.0 ? x + std::log1p(-std::exp(-x)) : std::log(std::expm1(x));
}

// Wang, Balle & Kasiviswanathan 2019, Thm 9, at integer α ≥ 2, for a base
// mechanism with ε(j) = 2j/σ² and ε(∞) = ∞:
//   (α−1)ε'(α) ≤ log(1 + γ²C(α,2) min{4(e^{ε(2)}−1), e^{ε(2)}·2}
//                    + Σ_{j=3..α} γ^j C(α,j) e^{(j−1)ε(j)}·2),
// where min{2, (e^{ε(∞)}−1)^j} = 2. Summed in log space.
double WbkBound(double gamma, double sigma, std::int64_t alpha) {
  const double a = static_cast<double>(alpha);
  const double lg = std::log(gamma);
  const double eps2 = 4.0 / (sigma * sigma);
  double log_sum = 2.0 * lg + LogBinomial(a, 2.0) +
                   std::min(std::log(4.0) + LogExpm1(eps2), std::log(2.0) + eps2);
  for (std::int64_t j = 3; j <= alpha; ++j) {
    const double jd = static_cast<double>(j);
    const double eps_j = 2.0 * jd / (sigma * sigma);
    log_sum = LogAddExp(log_sum, std::log(2.0) + jd * lg + LogBinomial(a, jd) + (jd - 1.0) * eps_j);
  }
  const double log_moment =
      log_sum < 0.0 ? std::log1p(std::exp(log_sum)) : log_sum + std::log1p(std::exp(-log_sum));
  return log_moment / (a - 1.0);
}

}  // namespace

// The README grid of shared/accounting: fine steps near 1, where small
// budgets have their best order, and powers of two up to 256.
std::vector<double> StandardOrders() {
  return {1.25, 1.5, 1.75, 2,  2.25, 2.5, 3,  3.5, 4,  4.5, 5,   6,
          8,    10,  12,   14, 16,   20,  24, 28,  32, 64,  128, 256};
}

// Mironov 2017, Prop. 7: D_α(N(0,σ²) ‖ N(Δ,σ²)) = αΔ²/(2σ²).
double RdpGaussian(double sigma_over_sensitivity, double order) {
  CheckSigma(sigma_over_sensitivity, "sigma/sensitivity");
  CheckOrder(order);
  return order / (2.0 * sigma_over_sensitivity * sigma_over_sensitivity);
}

// MTZ 2019, Sec. 3: ε(α) = log(A_α)/(α−1). Integer α use the exact binomial
// sum (Sec. 3.2); fractional α the two-sided series (Sec. 3.3), replaced by
// quadrature of the same A_α where the series would lose accuracy (slow
// tails, or cancellation when A_α is close to 1).
double RdpPoissonSubsampledGaussian(double q, double sigma, double order) {
  CheckRate(q, "sampling rate q", /*allow_zero=*/true);
  CheckSigma(sigma, "noise multiplier sigma");
  CheckOrder(order, kMaxSubsampledOrder);
  if (q == 0.0) return 0.0;
  if (q == 1.0) return order / (2.0 * sigma * sigma);
  double log_a;
  if (order == std::floor(order)) {
    log_a = LogAPoissonGaussianInteger(q, sigma, static_cast<std::int64_t>(order));
  } else {
    const LogASeries series = LogAPoissonGaussianSeries(q, sigma, order);
    const bool accurate =
        series.converged && series.log_a > 0.0 && series.rel_error <= kSeriesAcceptRelError;
    log_a = accurate ? series.log_a : LogAPoissonGaussianQuadrature(q, sigma, order);
  }
  if (!(log_a >= 0.0)) {  // A_α ≥ 1 by Jensen's inequality
    throw Error(ErrorKind::kInvalidParameter,
                "subsampled Gaussian RDP cannot be evaluated accurately at these parameters (q=" +
                    Num(q) + ", sigma=" + Num(sigma) + ", order=" + Num(order) + ")");
  }
  return log_a / (order - 1.0);
}

// WBK 2019, Thm 9 (replace-one neighbours, sampling without replacement),
// at ⌈α⌉ (at least 2): RDP is non-decreasing in α (van Erven & Harremoës
// 2014, Thm 3), so ε'(α) ≤ ε'(⌈α⌉). Capped by the base mechanism's own
// 2α/σ², which also bounds the subsampled mechanism since Rényi divergence
// is jointly quasi-convex (van Erven & Harremoës 2014, Thm 13) and a batch
// either misses the replaced record or is a replace-one neighbour.
double RdpSampledWithoutReplacementGaussian(double gamma, double sigma, double order) {
  CheckRate(gamma, "sampling fraction gamma", /*allow_zero=*/false);
  CheckSigma(sigma, "noise multiplier sigma");
  CheckOrder(order, kMaxSubsampledOrder);
  const double unsampled = 2.0 * order / (sigma * sigma);  // Δ = 2
  if (gamma == 1.0) return unsampled;
  const auto alpha = static_cast<std::int64_t>(std::max(2.0, std::ceil(order)));
  return std::min(WbkBound(gamma, sigma, alpha), unsampled);
}

// Mironov 2017, Prop. 1: the RDP of an adaptive composition is the sum.
std::vector<double> RdpPoissonSubsampledGaussianCurve(double q, double sigma, std::int64_t steps,
                                                      const std::vector<double>& orders) {
  CheckSteps(steps);
  if (orders.empty()) ThrowInvalid("the RDP order list is empty");
  std::vector<double> curve;
  curve.reserve(orders.size());
  for (double order : orders) {
    CheckInterrupt();  // long order lists can be cancelled
    curve.push_back(static_cast<double>(steps) * RdpPoissonSubsampledGaussian(q, sigma, order));
  }
  return curve;
}

// Mironov 2017, Prop. 1, for several mechanisms on one grid.
std::vector<double> ComposeRdp(const std::vector<std::vector<double>>& curves) {
  if (curves.empty()) ThrowInvalid("no RDP curves to compose");
  const size_t n = curves.front().size();
  if (n == 0) ThrowInvalid("RDP curves must not be empty");
  std::vector<double> total(n, 0.0);
  for (const std::vector<double>& curve : curves) {
    if (curve.size() != n)
      ThrowInvalid("RDP curves differ in length (" + std::to_string(n) + " and " +
                   std::to_string(curve.size()) + ")");
    for (size_t i = 0; i < n; ++i) {
      CheckRdpValue(curve[i], i);
      total[i] += curve[i];
    }
  }
  return total;
}

// Mironov 2017, Prop. 1, for `times` runs of one mechanism.
std::vector<double> SelfComposeRdp(const std::vector<double>& rdp, std::int64_t times) {
  CheckSteps(times);
  if (rdp.empty()) ThrowInvalid("the RDP curve is empty");
  std::vector<double> total(rdp.size());
  for (size_t i = 0; i < rdp.size(); ++i) {
    CheckRdpValue(rdp[i], i);
    total[i] = static_cast<double>(times) * rdp[i];
  }
  return total;
}

namespace {

// The smallest ε over the orders of a curve, by a per-order conversion that
// returns NaN for an order it skips; orders with ρ = +inf are skipped, ties
// go to the first order, and best_index (may be null) receives the winner.
template <typename PerOrder>
double BestOverOrders(const std::vector<double>& orders, const std::vector<double>& rdp,
                      double delta, int* best_index, PerOrder per_order) {
  CheckCurve(orders, rdp);
  CheckDelta(delta);
  double best = kInf;
  int best_i = -1;
  for (size_t i = 0; i < orders.size(); ++i) {
    if (std::isinf(rdp[i])) continue;
    const double eps = per_order(orders[i], rdp[i], std::log(delta));
    if (eps < best) {  // false for NaN: a skipped order
      best = eps;
      best_i = static_cast<int>(i);
    }
  }
  if (best_index != nullptr) *best_index = best_i;
  return best;
}

}  // namespace

// Mironov 2017, Prop. 3: (α, ρ)-RDP implies (ρ + log(1/δ)/(α−1), δ)-DP.
double RdpToEpsilonClassic(const std::vector<double>& orders, const std::vector<double>& rdp,
                           double delta, int* best_index) {
  return BestOverOrders(orders, rdp, delta, best_index, [](double a, double r, double log_delta) {
    return r - log_delta / (a - 1.0);
  });
}

// Balle et al. 2020, Thm 21 / Canonne, Kamath & Steinke 2020, Prop. 12:
// (α, ρ)-RDP implies (ρ + log(1 − 1/α) − (log δ + log α)/(α − 1), δ)-DP.
// As dp_accounting `compute_epsilon`: if δ² + expm1(−ρ) > 0, i.e.
// δ ≥ sqrt(1 − e^{−ρ}), the order gives ε = 0 (total variation is at most
// sqrt(1 − e^{−KL}) by Bretagnolle–Huber, and KL ≤ D_α); orders ≤ 1.01 are
// skipped (the bound is unstable and useless there); the minimum is
// clipped at 0.
double RdpToEpsilon(const std::vector<double>& orders, const std::vector<double>& rdp, double delta,
                    int* best_index) {
  const double best =
      BestOverOrders(orders, rdp, delta, best_index, [delta](double a, double r, double log_delta) {
        if (delta * delta + std::expm1(-r) > 0.0) return 0.0;
        if (!(a > 1.01)) return std::nan("");
        return r + std::log1p(-1.0 / a) - (log_delta + std::log(a)) / (a - 1.0);
      });
  return std::max(best, 0.0);
}

// The exact curve on StandardOrders(), converted by RdpToEpsilon.
double EpsilonPoissonSubsampledGaussianRdp(double q, double sigma, std::int64_t steps, double delta,
                                           double* best_order) {
  CheckDelta(delta);
  const std::vector<double> orders = StandardOrders();
  const std::vector<double> curve = RdpPoissonSubsampledGaussianCurve(q, sigma, steps, orders);
  int best = -1;
  const double eps = RdpToEpsilon(orders, curve, delta, &best);
  if (best_order != nullptr)
    *best_order =
        best >= 0 ? orders[static_cast<size_t>(best)] : std::numeric_limits<double>::quiet_NaN();
  return eps;
}

}  // namespace dperm
