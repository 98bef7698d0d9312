// Rényi DP of the Gaussian mechanism on a batch sampled without replacement,
// under replace-one neighbours: WBK 2019 Thm 27 and the RDP of the
// symmetric dominating pair.
//
// THE MECHANISM. n rows (n public), a batch B of m = γn of them drawn
// uniformly without replacement, the release M(D) = Σ_{i∈B} g_i + N(0, σ²I)
// with ||g_i|| ≤ C. Neighbours D ~ D' have the same n and differ in one row,
// so a batch that holds the row moves by at most Δ = 2C: on m-subsets the
// unsampled mechanism is the Gaussian mechanism of sensitivity 2C, whose
// tradeoff function is G_μ with μ = Δ/σ = 2/sigma (Dong, Roth & Su, "Gaussian
// differential privacy", JRSS-B 2022, Thm 2.7), and whose RDP is
// α/(2s²), s = σ/Δ = sigma/2 (Mironov 2017, Prop. 7).
//
// THE DOMINATING PAIR. Dong, Roth & Su (2022), Thm 4.2: if M is f-DP on
// m-subsets, M∘Sample_m is C_γ(f)-DP for replace-one neighbours of size n,
// C_γ(f) = min{f_γ, f_γ^{-1}}**, f_γ = γf + (1−γ)Id. With f = G_μ, f_γ is the
// tradeoff function of the pair (Q, R), Q = N(0, s²), R = (1−γ)N(0, s²) +
// γN(−1, s²) in units of Δ (the "remove" pair of the Poisson-subsampled
// Gaussian at rate γ, pld.hpp), and f_γ^{-1} that of (R, Q) ("add"). Zhu,
// Dong & Wang (AISTATS 2022, "Optimal accounting of differential privacy via
// characteristic function", Prop. 30) state the same domination for
// sampling without replacement under replace-one in their dominating-pair
// language. Because conjugation turns the pointwise minimum of tradeoff
// functions into the maximum of privacy profiles and ** does not change the
// conjugate, the hockey-stick profile of C_γ(f) is
//   δ*(ε) = max{δ_remove(ε), δ_add(ε)}  for every ε ∈ R,
// = δ_remove(ε) for ε ≥ 0 and δ_add(ε) for ε < 0 (WBK's and dp_accounting's
// comparison; checked by the tests). It is the profile of a SYMMETRIC pair
// (P*, Q*) (its tradeoff function equals its own inverse) whose privacy
// loss law under P* is: the remove pair's law on l > 0; its mirror
// e^{l}·ω_remove(−l) on l < 0; and the remaining mass at l = 0. This pair
// dominates every ordered pair of neighbours at every ε ∈ R, both orders
// included, so it composes adaptively (Dong, Roth & Su, Thm 3.2; Zhu, Dong &
// Wang, Thm 10). That is how both directions are handled at once: a step
// whose other rows happen to look like the new row is the remove pair, one
// whose other rows look like the old row the add pair (both happen on real
// data, e.g. when every other row's gradient equals one of the two), and a
// long run may mix them, which a per-direction accountant would miss.
//
// RDP OF THE DOMINATING PAIR. T(P*, Q*) ≤ T(M(D), M(D')) means (Blackwell;
// Dong, Roth & Su, Thm 2.10) that M(D), M(D') are a garbling of P*, Q*, so
// D_α(M(D) ‖ M(D')) ≤ D_α(P* ‖ Q*) by data processing. With the loss law
// above, for x < −1/2 (where R > Q, i.e. loss > 0) and g = R/Q:
//   E_{Q*}[(P*/Q*)^α] = 1 + ∫_{x<−1/2} Q(x) [g^α + g^{1−α} − g − 1] dx
//                     = 1 + ∫_{x<−1/2} φ_s(x) [G_α(u) + G_{1−α}(u)] dx,
// u = g − 1 = γ·expm1((−2x − 1)/(2s²)), G_β(u) = (1+u)^β − 1 − βu ≥ 0
// (convexity of (1+u)^β for β ≥ 1 and β ≤ 0). The integrand is positive, so
// quadrature keeps relative accuracy for tiny values.
#include "dperm/accounting/rdp_wor.hpp"

#include "dperm/util/numeric_util.hpp"
#include "dperm/accounting/rdp.hpp"

#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/math/special_functions/binomial.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace dperm {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLogSqrt2Pi = 0.918938533204672741780329736405617640;

// Thm 27 is evaluated exactly up to this order (its cost is O(α) per order
// after O(α) quadratures); the ledger's orders stop at 256.
constexpr double kMaxWbkOrder = 256;
constexpr double kMaxPairOrder = 1e4;

// Relative inflation of a quadrature result, so that it stays an upper
// bound: Gauss–Kronrod on smooth panels is accurate to ~1e-13 here.
constexpr double kQuadratureSlack = 1e-9;

using Quad = boost::math::quadrature::gauss_kronrod<double, 15, ThrowPolicy>;

void CheckArgs(double gamma, double sigma, double order, double max_order) {
  if (!(gamma > 0.0 && gamma <= 1.0))
    ThrowInvalid("sampling fraction gamma must be in (0, 1], got " + Num(gamma));
  if (!std::isfinite(sigma) || !(sigma > 0.0))
    ThrowInvalid("noise multiplier sigma must be a finite number greater than 0, got " +
                 Num(sigma));
  if (!std::isfinite(order) || !(order > 1.0) || order > max_order)
    ThrowInvalid("RDP order must be in (1, " + Num(max_order) + "], got " + Num(order));
}

double LogAddExp(double a, double b) {
  const double hi = std::max(a, b), lo = std::min(a, b);
  return hi == -kInf ? hi : hi + std::log1p(std::exp(lo - hi));
}

// log(e^x − 1), x > 0, without overflow.
double LogExpm1(double x) {
  return x > 30.0 ? x + std::log1p(-std::exp(-x)) : std::log(std::expm1(x));
}

// log(1 + e^x) without overflow.
double LogOnePlusExp(double x) {
  return x > 30.0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// log G_β(u), G_β(u) = (1+u)^β − 1 − βu, for u > 0 given by log_u, and β ≥ 1
// or β ≤ 0 (so G ≥ 0). Near u = 0 the binomial series, whose terms shrink by
// a factor below 0.1; otherwise closed forms arranged against overflow.
double LogG(double beta, double log_u) {
  const double u = std::exp(log_u);  // may be +inf; then only logs are used
  const double reach = std::max(std::fabs(beta), 1.0) * u;
  if (reach < 0.1) {
    double coef = 0.5 * beta * (beta - 1.0), power = 1.0, sum = 0.0;
    for (int k = 2; k < 80; ++k) {
      const double term = coef * power;
      sum += term;
      if (std::fabs(term) <= 1e-17 * std::fabs(sum)) break;
      coef *= (beta - k) / (k + 1.0);
      power *= u;
    }
    return 2.0 * log_u + std::log(sum);
  }
  const double log1p_u = LogOnePlusExp(log_u);
  const double big = beta * log1p_u;  // log (1+u)^β
  if (beta > 0.0) {
    if (big < 30.0) return std::log(std::expm1(big) - beta * u);
    // (1+u)^β dominates: G = (1+u)^β (1 − e^{−big} − βu e^{−big}).
    return big + std::log1p(-std::exp(-big) - beta * std::exp(log_u - big));
  }
  // β ≤ 0: G = |β|u − (1 − (1+u)^β), the bracket in [0, 1).
  const double rest = -std::expm1(big);
  const double log_bu = std::log(-beta) + log_u;
  if (log_bu < 30.0) return std::log(std::exp(log_bu) - rest);
  return log_bu + std::log1p(-rest * std::exp(-log_bu));
}

// ∫_a^b exp(f(x)) dx in log form for a log-integrand f on a finite interval,
// summed over panels of width ≤ `panel` with Gauss–Kronrod; `peak` is an
// estimate of max f used only to scale. A panel [lo, hi] whose
// `panel_bound(lo, hi)` (an upper bound of f on it) is below peak − 80 is
// not integrated; its bound times its width is added instead, so the result
// stays an upper bound.
template <typename LogF, typename Bound>
double LogIntegrate(LogF f, double a, double b, double panel, double peak, Bound panel_bound) {
  if (!(b > a)) return -kInf;
  const int panels = std::max(1, static_cast<int>(std::ceil((b - a) / panel)));
  const double width = (b - a) / panels;
  auto scaled = [&](double x) {
    const double v = f(x) - peak;
    return v < -700.0 ? 0.0 : std::exp(v);
  };
  double total = 0.0;
  for (int i = 0; i < panels; ++i) {
    const double lo = a + i * width, hi = (i + 1 == panels) ? b : lo + width;
    const double bound = panel_bound(lo, hi) - peak;
    if (bound < -80.0) total += (hi - lo) * std::exp(bound);
    else total += Quad::integrate(scaled, lo, hi, 10, 1e-12);
  }
  return total > 0.0 ? peak + std::log(total) : -kInf;
}

template <typename LogF>
double LogIntegrate(LogF f, double a, double b, double panel, double peak) {
  return LogIntegrate(f, a, b, panel, peak, [](double, double) { return kInf; });
}

// The largest value of f on a grid of `count` points of [a, b].
template <typename LogF>
double ScanMax(LogF f, double a, double b, int count) {
  double best = -kInf;
  for (int i = 0; i <= count; ++i) best = std::max(best, f(a + (b - a) * i / count));
  return best;
}

// Root of a decreasing function on [lo, hi] by bisection.
template <typename F>
double Bisect(F f, double lo, double hi) {
  for (int i = 0; i < 200 && hi - lo > 1e-12 * std::max(1.0, std::fabs(lo)); ++i) {
    const double mid = 0.5 * (lo + hi);
    (f(mid) > 0.0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// log of Thm 27's bound on A_α = E[(P/Q)^α] (integer α ≥ 2), s = σ/Δ, with
// log_b[k] = log B_{2k} for the even Pearson–Vajda moments up to 2⌈α/2⌉.
double LogWbk27Moment(double gamma, double s, int alpha, const std::vector<double>& log_b) {
  const double a = static_cast<double>(alpha);
  const double lg = std::log(gamma);
  const double eps2 = 1.0 / (s * s);  // ε(2) = 2/(2s²)
  // j = 2: γ² C(α,2) min{4(e^{ε(2)} − 1), 2 e^{ε(2)}} (Thm 9's term, = Thm 27's).
  double log_sum = 2.0 * lg + std::log(0.5 * a * (a - 1.0)) +
                   std::min(std::log(4.0) + LogExpm1(eps2), std::log(2.0) + eps2);
  double log_c = std::log(0.5 * a * (a - 1.0));  // log C(α, j), built up
  for (int j = 3; j <= alpha; ++j) {
    log_c += std::log((a - j + 1.0) / j);
    // Thm 27: 4 sqrt(B_{2⌊j/2⌋} B_{2⌈j/2⌉}) (Cauchy–Schwarz for odd j);
    // Thm 9: 2 e^{(j−1)ε(j)} = 2 e^{j(j−1)/(2s²)}. Both bound the same j-th
    // term of the binomial expansion in WBK's proof, so their minimum does
    // (as in the authors' autodp and in dp_accounting).
    const double lo = log_b[static_cast<size_t>(j / 2)];
    const double hi = log_b[static_cast<size_t>((j + 1) / 2)];
    const double pv = std::log(4.0) + 0.5 * (lo + hi);
    const double plain = std::log(2.0) + 0.5 * j * (j - 1.0) * eps2;
    log_sum = LogAddExp(log_sum, j * lg + log_c + std::min(pv, plain));
  }
  return LogOnePlusExp(log_sum);
}

// log B_{2k} for k = 0..kmax (B_0 = 1), inflated to stay upper bounds.
std::vector<double> LogEvenMoments(double s, int kmax) {
  std::vector<double> out(static_cast<size_t>(kmax) + 1, 0.0);
  for (int k = 1; k <= kmax; ++k)
    out[static_cast<size_t>(k)] = LogGaussianPearsonVajda(s, 2 * k) + kQuadratureSlack;
  return out;
}

}  // namespace

// B_l = E_{y~N(0,1)}[(e^v − 1)^l], v = (y − y0)/s, y0 = 1/(2s): for the
// pair N(1, s²), N(0, s²) the likelihood ratio at z = s·y is e^v, so B_l is
// E_Q[(P/Q − 1)^l] (WBK's Pearson–Vajda χ^l pseudo-divergence), which
// for even l is the l-th forward difference at 0 of e^{(i−1)ε(i)} =
// e^{i(i−1)/(2s²)} that WBK Thm 27 writes. The log-integrand
// −y²/2 + l log|e^v − 1| is strictly concave on each side of y0 (both terms
// are), so each side has one peak, found by bisection on the derivative;
// 40 beyond it the integrand is below e^{−800} of the peak (curvature ≥ 1).
double LogGaussianPearsonVajda(double s, int l) {
  if (!(s > 0.0) || !std::isfinite(s) || l < 2 || l % 2 != 0)
    ThrowInvalid("Pearson-Vajda moment needs s > 0 and an even order >= 2");
  const double y0 = 0.5 / s, ld = static_cast<double>(l);
  auto log_f = [&](double y) {
    const double v = (y - y0) / s;
    if (v == 0.0) return -kInf;
    return -0.5 * y * y - kLogSqrt2Pi + ld * std::log(std::fabs(std::expm1(v)));
  };
  // Right side, y > y0: f' = −y + (l/s)/(1 − e^{−v}).
  auto right_slope = [&](double y) { return -y + (ld / s) / -std::expm1(-(y - y0) / s); };
  double hi = y0 + 1.0;
  while (right_slope(hi) > 0.0) hi = y0 + 2.0 * (hi - y0);
  const double peak_r = Bisect(right_slope, y0, hi);
  // Left side, y < y0: f' = −y − (l/s)/(e^{−v} − 1).
  auto left_slope = [&](double y) { return -y - (ld / s) / std::expm1(-(y - y0) / s); };
  double lo = y0 - 1.0;
  while (left_slope(lo) < 0.0) lo = y0 - 2.0 * (y0 - lo);
  const double peak_l = Bisect(left_slope, lo, y0);
  const double mr = log_f(peak_r), ml = log_f(peak_l);
  const double right = LogAddExp(LogIntegrate(log_f, y0, peak_r, 1.0, mr),
                                 LogIntegrate(log_f, peak_r, peak_r + 40.0, 1.0, mr));
  const double left = LogAddExp(LogIntegrate(log_f, peak_l - 40.0, peak_l, 1.0, ml),
                                LogIntegrate(log_f, peak_l, y0, 1.0, ml));
  return LogAddExp(left, right);
}

// WBK 2019, Thm 27 at integer orders; interpolation of the CGF between
// integers otherwise: K(α) = (α−1)D_α = log E_Q[(P/Q)^α] is convex in α
// (Hölder), so it lies below its chord between ⌊α⌋ and ⌈α⌉ (and, for α in
// (1, 2), between K(1) = 0 and K(2)); the chord of upper bounds at the
// integers bounds it too. WBK's Corollary 10 and dp_accounting interpolate
// the same way.
double RdpWorGaussianWbk27(double gamma, double sigma, double order) {
  CheckArgs(gamma, sigma, order, kMaxWbkOrder);
  const double unsampled = 2.0 * order / (sigma * sigma);  // Δ = 2C
  if (gamma == 1.0) return unsampled;
  const double s = 0.5 * sigma;
  const int hi = static_cast<int>(std::max(2.0, std::ceil(order)));
  const std::vector<double> log_b = LogEvenMoments(s, (hi + 1) / 2);
  auto k_at = [&](int a) { return a <= 1 ? 0.0 : LogWbk27Moment(gamma, s, a, log_b); };
  double k;
  if (order == std::floor(order)) {
    k = k_at(static_cast<int>(order));
  } else {
    const int lo = static_cast<int>(std::floor(order));
    const double t = order - lo;
    k = (1.0 - t) * k_at(lo) + t * k_at(lo + 1);
  }
  return std::min(k / (order - 1.0), unsampled);
}

// E_{Q*}[(P*/Q*)^α] − 1 = ∫_{x<−1/2} φ_s(x)[G_α(u) + G_{1−α}(u)] dx (top of
// file). In w = (−1/2 − x)/s ∈ (0, ∞): φ(w + c)·[…] dw, c = 1/(2s), and
// u = γ·expm1(w/s). The integral runs to a point beyond which the integrand
// is below e^{−100} of its scanned maximum M: log(G_α + G_{1−α}) ≤ log α +
// α log(1+u) ≤ log α + αw/s (since 1 − γ + γe^x ≤ e^x), so the log-integrand
// is at most −(w + c − α/s)²/2 + (α/s)²/2 − αc/s + log α, which is below
// M − 100 past the w_end below. Where α/s > 1000 the unsampled bound is
// used instead (the value is enormous there, and the quadrature long).
double RdpWorGaussianDominatingPair(double gamma, double sigma, double order) {
  CheckArgs(gamma, sigma, order, kMaxPairOrder);
  const double unsampled = 2.0 * order / (sigma * sigma);
  if (gamma == 1.0) return unsampled;
  const double s = 0.5 * sigma, c = 0.5 / s, a = order;
  if (a / s > 1000.0) return unsampled;
  const double lg = std::log(gamma);
  auto log_f = [&](double w) {
    if (!(w > 0.0)) return -kInf;
    const double log_u = lg + LogExpm1(w / s);
    return -0.5 * (w + c) * (w + c) - kLogSqrt2Pi + LogAddExp(LogG(a, log_u), LogG(1.0 - a, log_u));
  };
  const double span = std::max(a / s, 1.0) + 10.0;
  const double m = ScanMax(log_f, 0.0, span, 400);
  const double reach = (a / s) * (a / s) - 2.0 * a * c / s + 2.0 * std::log(a) - 2.0 * m + 200.0;
  const double w_end = std::max(span, a / s - c + std::sqrt(std::max(0.0, reach)));
  // On a panel [lo, hi] ⊂ [0, ∞): log_f ≤ −(lo + c)²/2 + log α +
  // α log(1 + γe^{hi/s}) (each piece monotone), the skip test's bound.
  auto bound = [&](double lo, double hi) {
    return -0.5 * (lo + c) * (lo + c) - kLogSqrt2Pi + std::log(a) + a * LogOnePlusExp(lg + hi / s);
  };
  const double log_i = LogIntegrate(log_f, 0.0, w_end, 1.0, m, bound) + kQuadratureSlack;
  // ε(α) = log(1 + I)/(α − 1).
  return std::min(LogOnePlusExp(log_i) / (a - 1.0), unsampled);
}

// The dominating pair's RDP: it is (nearly) the true RDP, and Thm 27 bounds
// the same mechanism from above with a constant 4 on its leading term, so it
// never came out smaller on the tests' grid (checked there) while costing
// far more; it is kept for comparison (docs/accountant.md).
double RdpWorGaussian(double gamma, double sigma, double order) {
  return RdpWorGaussianDominatingPair(gamma, sigma, order);
}

// A CLOSED-FORM UPPER BOUND on the pair's RDP. With A_P = E_{Q*}[(P*/Q*)^α]
// (top of file) and the remove pair's A_R = E_Q[(R/Q)^α] = 1 + ∫_R φ_s G_α(u)
// (E_Q[u] = 0; u = γ·expm1((−2x − 1)/(2s²)) > −γ on all of R):
//   A_P − A_R = ∫_{x<−1/2} φ_s G_{1−α}(u) − ∫_{x>−1/2} φ_s G_α(u)
//             ≤ ∫_{x<−1/2} φ_s (α − 1) u = (α − 1) γ (Φ(c) − Φ(−c)), c = 1/(2s),
// since G_α ≥ 0 (convexity, α ≥ 1), G_{1−α}(u) = (1+u)^{1−α} − 1 + (α−1)u
// ≤ (α − 1)u for u ≥ 0, and φ_s(x) e^{(−2x−1)/(2s²)} = φ_s(x + 1). A_R is the
// Poisson-subsampled Gaussian's moment at q = γ, noise s (Mironov, Talwar &
// Zhang 2019; RdpPoissonSubsampledGaussian, whose law (1−q)N(0,s²) +
// qN(1,s²) against N(0,s²) is the mirror image of R against Q), and
// log(A_R)/(α − 1) ≤ the pair's RDP (the pair dominates the remove pair:
// Blackwell, data processing). So
//   log(A_R) /(α−1) ≤ ε_pair(α) ≤ log(A_R + (α−1)γ erf(c/√2)) /(α−1),
// and where the two ends are within 1e-6 the right one stands in for the
// quadrature: large orders at little noise, where A_R is huge and the
// quadrature is slowest (and the quadrature and A_R agree closely there).
// log A_R carries the quadrature slack as the pair
// does.
double RdpWorGaussianTight(double gamma, double sigma, double order) {
  CheckArgs(gamma, sigma, order, kMaxPairOrder);
  const double unsampled = 2.0 * order / (sigma * sigma);
  if (gamma == 1.0) return unsampled;
  const double best =
      std::min(unsampled, RdpSampledWithoutReplacementGaussian(gamma, sigma, order));
  const double s = 0.5 * sigma;
  try {
    const double remove = RdpPoissonSubsampledGaussian(gamma, s, order);
    const double log_a = remove * (order - 1.0);
    const double extra = (order - 1.0) * gamma * std::erf(0.5 / (s * std::sqrt(2.0)));
    const double bound =
        (log_a + std::log1p(extra * std::exp(-log_a)) + kQuadratureSlack) / (order - 1.0);
    if (remove > 0.0 && bound <= remove * (1.0 + 1e-6)) return std::min(best, bound);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kInvalidParameter) throw;  // not evaluable: use the quadrature
  }
  return std::min(best, RdpWorGaussianDominatingPair(gamma, sigma, order));
}

std::vector<double> RdpWorGaussianCurve(double gamma, double sigma, std::int64_t steps,
                                        const std::vector<double>& orders, bool wbk27) {
  if (steps < 1) ThrowInvalid("steps must be at least 1, got " + std::to_string(steps));
  if (orders.empty()) ThrowInvalid("the RDP order list is empty");
  std::vector<double> curve;
  curve.reserve(orders.size());
  for (double a : orders)
    curve.push_back(static_cast<double>(steps) *
                    (wbk27 ? RdpWorGaussianWbk27(gamma, sigma, a)
                           : RdpWorGaussianDominatingPair(gamma, sigma, a)));
  return curve;
}

}  // namespace dperm
