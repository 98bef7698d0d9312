// log A_α of the Poisson-subsampled Gaussian mechanism (Mironov, Talwar &
// Zhang 2019): exact binomial sum, two-sided series, and quadrature.
#include "dperm/accounting/rdp_poisson.hpp"

#include "dperm/util/numeric_util.hpp"

#include <boost/math/quadrature/gauss_kronrod.hpp>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <string>
#include <vector>

namespace dperm {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kInvSqrt2Pi = 0.398942280401432677939946059934381868;
constexpr double kLogSqrt2Pi = 0.918938533204672741780329736405617640;
constexpr double kSqrtHalf = 0.707106781186547524400844362104849039;

// The series stops once its (alternating, shrinking) terms are below
// kSeriesLogRelTol·A·log A, i.e. the tail moves log A by less than that
// relative amount, or gives up after kMaxSeriesTerms terms per side (its
// tail decays only polynomially when z0 is small; quadrature takes over).
constexpr double kSeriesLogRelTol = 1e-13;
constexpr int kMaxSeriesTerms = 300;

// log Σ exp(x_i) accumulated one term at a time without overflow.
class LogSumExp {
 public:
  void Add(double x) {
    if (x == -kInf) return;
    if (x > max_) {
      sum_ = sum_ * std::exp(max_ - x) + 1.0;
      max_ = x;
    } else {
      sum_ += std::exp(x - max_);
    }
  }
  double Log() const { return max_ + std::log(sum_); }

 private:
  double max_ = -kInf;
  double sum_ = 0.0;
};

// Σ ±exp(x_i) kept as positive and negative parts on a common scale, plus
// Σ exp(x_i) for the rounding-error estimate.
class SignedLogSum {
 public:
  void Add(double x, bool positive) {
    if (x == -kInf) return;
    if (x > max_) {
      const double r = std::exp(max_ - x);
      pos_ *= r;
      neg_ *= r;
      max_ = x;
    }
    (positive ? pos_ : neg_) += std::exp(x - max_);
  }
  // log of the signed sum (NaN if it is not positive).
  double Log() const {
    return pos_ > neg_ ? max_ + std::log(pos_ - neg_) : std::numeric_limits<double>::quiet_NaN();
  }
  double LogAbsSum() const { return max_ + std::log(pos_ + neg_); }

 private:
  double max_ = -kInf;
  double pos_ = 0.0;
  double neg_ = 0.0;
};

// log(e^a + e^b) without overflow.
double LogAddExp(double a, double b) {
  const double hi = std::max(a, b), lo = std::min(a, b);
  return hi == -kInf ? hi : hi + std::log1p(std::exp(lo - hi));
}

// log(expm1(x)) for x > 0 without overflow.
double LogExpm1(double x) {
  return x > 30.0 ? x + std::log1p(-std::exp(-x)) : std::log(std::expm1(x));
}

// log R(x), R(x) = Φ(−x)·exp(x²/2), for x ≥ 0: the Gaussian tail with its
// exponential factor removed, so it neither underflows nor overflows.
double LogScaledNormalTail(double x) {
  if (x < 10.0) return std::log(0.5 * std::erfc(x * kSqrtHalf)) + 0.5 * x * x;
  // Φ(−x) = φ(x)/x · Σ_k (−1)^k (2k−1)!!/x^(2k) (Abramowitz & Stegun
  // 26.2.12); at x ≥ 10 the truncation error is below 1e-20.
  const double inv_x2 = 1.0 / (x * x);
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 60; ++k) {
    term *= -(2.0 * k - 1.0) * inv_x2;
    sum += term;
    if (std::fabs(term) < 1e-18 * sum) break;
  }
  return std::log(kInvSqrt2Pi / x * sum);
}

// log Φ(y) for any y, accurate in both tails.
double LogNormalCdf(double y) {
  if (y > 0.0) return std::log1p(-0.5 * std::erfc(y * kSqrtHalf));
  if (y > -10.0) return std::log(0.5 * std::erfc(-y * kSqrtHalf));
  return -0.5 * y * y + LogScaledNormalTail(-y);
}

// log A from log(A − 1): log1p(A − 1) without overflow.
double LogOnePlusExp(double log_a_minus_1) {
  return log_a_minus_1 < 0.0 ? std::log1p(std::exp(log_a_minus_1))
                             : log_a_minus_1 + std::log1p(std::exp(-log_a_minus_1));
}

// log g(u) for g(u) = (1 + u)^α − 1 − αu, u > −1, u ≠ 0, given
// l = log(1 + u) and log|u| computed accurately by the caller.
double LogG(double alpha, double u, double log1p_u, double log_abs_u) {
  if (alpha * std::fabs(u) < 0.1) {
    // g(u) = Σ_{k≥2} C(α,k) u^k; the ratio of terms is below 0.1 in size.
    double coef = 0.5 * alpha * (alpha - 1.0), power = 1.0, sum = 0.0;
    for (int k = 2; k < 60; ++k) {
      const double term = coef * power;
      sum += term;
      if (std::fabs(term) <= 1e-17 * std::fabs(sum)) break;
      coef *= (alpha - k) / (k + 1.0);
      power *= u;
    }
    return 2.0 * log_abs_u + std::log(sum);
  }
  const double big = alpha * log1p_u;
  if (big < 30.0) return std::log(std::expm1(big) - alpha * u);
  // (1 + u)^α dominates: g = (1 + u)^α (1 − e^{−big} − α·u·e^{−big}).
  const double rest = std::exp(-big) + alpha * std::exp(log_abs_u - big);
  return big + std::log1p(-rest);
}

// log of the A_α − 1 integrand at z = σt: log φ(t) + log g(q(X − 1)),
// X = exp(t/σ − 1/(2σ²)).
double LogIntegrand(double q, double sigma, double alpha, double t) {
  // s = (t − 1/(2σ))/σ: subtracting first keeps s accurate near its zero,
  // so the integrand is smooth there and not rounding noise.
  const double s = (t - 0.5 / sigma) / sigma;
  if (s == 0.0) return -kInf;  // g(0) = 0
  double u, log1p_u, log_abs_u;
  if (s < 30.0) {
    u = q * std::expm1(s);
    log1p_u = std::log1p(u);
    log_abs_u = std::log(q) + std::log(std::fabs(std::expm1(s)));
  } else {
    // q·e^s ≫ 1 − q: log(1 − q + q e^s) = log q + s + log1p((1−q)e^{−s}/q).
    log_abs_u = std::log(q) + LogExpm1(s);
    log1p_u = std::log(q) + s + std::log1p((1.0 - q) * std::exp(-s) / q);
    u = std::exp(log_abs_u);  // may be +inf; LogG then uses logs only
  }
  return -0.5 * t * t - kLogSqrt2Pi + LogG(alpha, u, log1p_u, log_abs_u);
}

}  // namespace

// MTZ 2019, Sec. 3.2: A_α = Σ_k C(α,k)(1−q)^{α−k} q^k exp((k²−k)/(2σ²)).
// The binomial weights sum to 1, so A_α − 1 = Σ_{k≥2} C(α,k)(1−q)^{α−k} q^k
// expm1((k²−k)/(2σ²)), a sum of positive terms (k = 0, 1 contribute 0).
double LogAPoissonGaussianInteger(double q, double sigma, std::int64_t alpha) {
  const double lq = std::log(q), l1q = std::log1p(-q);
  const double two_s2 = 2.0 * sigma * sigma;
  const double a = static_cast<double>(alpha);
  LogSumExp sum;
  double log_c = std::log(a);  // log C(α, 1)
  for (std::int64_t k = 2; k <= alpha; ++k) {
    const double kd = static_cast<double>(k);
    log_c += std::log((a - kd + 1.0) / kd);
    sum.Add(log_c + kd * lq + (a - kd) * l1q + LogExpm1((kd * kd - kd) / two_s2));
  }
  return LogOnePlusExp(sum.Log());
}

// MTZ 2019, Sec. 3.3: split the integral at z0 = σ² log(1/q − 1) + 1/2, where
// q·μ1 = (1−q)·μ0, and expand (1 − q + q·μ1/μ0)^α binomially on each side in
// the ratio that is below 1 there. Term i on side 0 is
// C(α,i) q^i (1−q)^{α−i} e^{(i²−i)/(2σ²)} Φ((z0 − i)/σ), on side 1 the same
// with i and j = α − i swapped in the powers and Φ((j − z0)/σ). Past z0 the
// Gaussian factors cancel algebraically to (1−q)^α e^{−z0²/(2σ²)} R(x), which
// avoids subtracting huge exponents. For i > α the signs alternate and the
// terms decrease, so the tail is below the first omitted term.
LogASeries LogAPoissonGaussianSeries(double q, double sigma, double alpha) {
  const double lq = std::log(q), l1q = std::log1p(-q);
  const double two_s2 = 2.0 * sigma * sigma;
  const double z0 = 0.5 * two_s2 * (l1q - lq) + 0.5;
  const double far = alpha * l1q - z0 * z0 / two_s2;
  SignedLogSum sum;
  LogASeries out;
  double log_c = 0.0;  // log|C(α, i)|
  bool positive = true;
  double prev0 = kInf, prev1 = kInf, last = -kInf;
  for (int i = 0; i < kMaxSeriesTerms; ++i) {
    const double id = static_cast<double>(i);
    const double j = alpha - id;
    const double x0 = (id - z0) / sigma;
    const double log_s0 =
        x0 > 0.0 ? log_c + far + LogScaledNormalTail(x0)
                 : log_c + id * lq + j * l1q + (id * id - id) / two_s2 + LogNormalCdf(-x0);
    const double x1 = (z0 - j) / sigma;
    const double log_s1 =
        x1 > 0.0 ? log_c + far + LogScaledNormalTail(x1)
                 : log_c + j * lq + id * l1q + (j * j - j) / two_s2 + LogNormalCdf(-x1);
    sum.Add(log_s0, positive);
    sum.Add(log_s1, positive);
    out.terms = i + 1;
    last = std::max(log_s0, log_s1);
    const double log_a = sum.Log();
    if (id > alpha + 1.0 && log_s0 < prev0 && log_s1 < prev1 && log_a > 0.0 &&
        last < log_a + std::log(kSeriesLogRelTol * log_a)) {
      out.converged = true;
      break;
    }
    prev0 = log_s0;
    prev1 = log_s1;
    log_c += std::log(std::fabs(alpha - id) / (id + 1.0));
    if (alpha - id < 0.0) positive = !positive;
  }
  out.log_a = sum.Log();
  // Error of A: a few ulps per term, growing with the size of the exponents
  // (|log term|), plus the tail (below the last term); 8x margin over what
  // the reference values show. Then |Δ log A| ≈ |ΔA|/A.
  const double log_abs = sum.LogAbsSum();
  const double log_err = LogAddExp(log_abs + std::log(512.0 * kEps * (1.0 + std::fabs(log_abs))),
                                   last + std::log(8.0));
  out.rel_error = std::exp(log_err - out.log_a) / std::fabs(out.log_a);
  if (!std::isfinite(out.log_a)) out.rel_error = kInf;
  return out;
}

// A_α − 1 = ∫ φ(t) g(q(X(t) − 1)) dt with z = σt. The log-integrand ℓ has
// ℓ'(t) ≈ −t + α·p(t)/σ with p the logistic weight of q·X, so its modes lie
// near 0 (about ±√2 from g's zero at t = 1/(2σ), where g ≈ C(α,2)u²) and at
// t = α/σ, with a valley around the crossover t0 = z0/σ. The line is cut at
// these points; a long piece between cuts is split into lengths doubling
// from both ends, so the mass next to a cut is never missed by the first
// rule on a wide interval. Each piece gets adaptive 31-point Gauss–Kronrod
// on exp(ℓ − M), M the largest value at the cuts.
double LogAPoissonGaussianQuadrature(double q, double sigma, double alpha) {
  const double z0 = sigma * sigma * (std::log1p(-q) - std::log(q)) + 0.5;
  const double c = 0.5 / sigma;
  std::vector<double> all = {c - std::sqrt(2.0), 0.0,        c,
                             c + std::sqrt(2.0), z0 / sigma, alpha / sigma};
  std::sort(all.begin(), all.end());
  double m = -kInf;
  for (double t : all) m = std::max(m, LogIntegrand(q, sigma, alpha, t));
  double scale = std::fabs(m);  // exponent size where the mass is
  for (double t : all)
    if (LogIntegrand(q, sigma, alpha, t) > m - 50.0)
      scale = std::max(scale, 0.5 * t * t + std::fabs(m));
  // Cuts closer than the bumps' width (~1) only make slivers; keep one of
  // each close group, then split long gaps geometrically.
  std::vector<double> cuts = {all.front()};
  for (double t : all) {
    if (t - cuts.back() <= 0.25) continue;
    const double a = cuts.back();
    for (double w = 1.0; t - a > 4.0 * w && w < 1e300; w *= 2.0) {
      const double left = a + w, right = t - w;
      if (left < right) {
        cuts.insert(std::upper_bound(cuts.begin(), cuts.end(), left), left);
        cuts.insert(std::upper_bound(cuts.begin(), cuts.end(), right), right);
      }
    }
    cuts.push_back(t);
  }
  std::sort(cuts.begin(), cuts.end());
  auto scaled = [&](double t) {
    const double v = LogIntegrand(q, sigma, alpha, t) - m;
    return v < -230.0 ? 0.0 : std::exp(v);  // < 1e-100 of the peak: nothing
  };
  using Quad = boost::math::quadrature::gauss_kronrod<double, 31, ThrowPolicy>;
  // The tolerance stays above the integrand's rounding noise, which grows
  // with the size of the exponents (t²/2 and α log(1 + u) nearly cancel at
  // the far mode); otherwise the recursion runs to full depth chasing it.
  // A relative error δ of A costs δ in log A, small next to log A whenever
  // the exponents are large.
  constexpr unsigned kDepth = 12;
  const double tol = std::max(1e-11, 64.0 * kEps * scale);
  double total = 0.0;
  try {
    total = Quad::integrate(scaled, -kInf, cuts.front(), kDepth, tol);
    for (size_t k = 0; k + 1 < cuts.size(); ++k)
      total += Quad::integrate(scaled, cuts[k], cuts[k + 1], kDepth, tol);
    total += Quad::integrate(scaled, cuts.back(), kInf, kDepth, tol);
  } catch (const std::exception&) {
    // Boost's message names its internals; the parameters say more.
    throw Error(ErrorKind::kInvalidParameter,
                "subsampled Gaussian RDP cannot be evaluated accurately at these parameters (q=" +
                    Num(q) + ", sigma=" + Num(sigma) + ", order=" + Num(alpha) + ")");
  }
  return LogOnePlusExp(m + std::log(total));
}

}  // namespace dperm
