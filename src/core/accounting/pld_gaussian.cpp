// The PLD of the Poisson-subsampled Gaussian mechanism under add/remove-one
// neighbours, discretised by pessimistic connect-the-dots (Doroshenko et al.,
// PETS 2022), and the PLD accountant built on it.
#include "dperm/util/interrupt.hpp"
#include "dperm/util/numeric_util.hpp"
#include "dperm/accounting/pld.hpp"

#include <boost/math/special_functions/erf.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace dperm {
namespace {

constexpr double kSqrtHalf = 0.707106781186547524400844362104849039;
constexpr double kLogSqrt2Pi = 0.918938533204672741780329736405617640;

// ln of the noise mass left out of the PLD's support (dp_accounting's
// log_mass_truncation_bound); it is charged pessimistically to +∞.
constexpr double kLogMassTruncationBound = -50.0;

// Standard normal CDF Φ(x) = ½ erfc(−x/√2); erfc keeps the lower tail exact.
double NormalCdf(double x) { return 0.5 * std::erfc(-x * kSqrtHalf); }

// ln Φ(x) without underflow: below −20 the asymptotic series
// Φ(x) = φ(x)/|x| · Σ_k (−1)^k (2k−1)!!/x^{2k} (Abramowitz & Stegun 26.2.12).
double LogNormalCdf(double x) {
  if (x > 5.0) return std::log1p(-NormalCdf(-x));
  if (x > -20.0) return std::log(NormalCdf(x));
  if (std::isinf(x)) return -std::numeric_limits<double>::infinity();
  const double inv_x2 = 1.0 / (x * x);
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 40; ++k) {
    term *= -(2.0 * k - 1.0) * inv_x2;
    sum += term;
    if (std::fabs(term) < 1e-17 * sum) break;
  }
  return -0.5 * x * x - std::log(-x) - kLogSqrt2Pi + std::log(sum);
}

// ln(e^a + e^b).
double LogAddExp(double a, double b) {
  const double hi = std::max(a, b), lo = std::min(a, b);
  if (hi == -std::numeric_limits<double>::infinity()) return hi;
  return hi + std::log1p(std::exp(lo - hi));
}

// ln(1 − q + q·e^a): the subsampled privacy loss as a function of the
// unsubsampled one a (the mixture pair of Poisson subsampling; Zhu, Dong &
// Wang, AISTATS 2022, "Optimal accounting of DP via characteristic function").
double LogMix(double q, double a) {
  if (q == 1.0) return a;
  const double r = q * std::expm1(a);
  if (std::isfinite(r)) return std::log1p(r);
  return a + std::log(q + (1.0 - q) * std::exp(-a));  // a large: no cancellation
}

// Inverse of LogMix in a: ln(1 + (e^b − 1)/q), defined for b > ln(1 − q).
double InverseLogMix(double q, double b) {
  if (q == 1.0) return b;
  const double r = std::expm1(b) / q;
  if (std::isfinite(r)) return std::log1p(r);
  return b + std::log1p(-(1.0 - q) * std::exp(-b)) - std::log(q);
}

// Privacy loss at noisy output x. Remove: ln(((1−q)φ_σ(x) + qφ_σ(x+1))/φ_σ(x)),
// i.e. LogMix of the Gaussian loss (−½ − x)/σ²; add: −LogMix of
// −(½ − x)/σ² (the sampled Gaussian pair of Mironov, Talwar & Zhang 2019;
// dp_accounting's GaussianPrivacyLoss). Decreasing in x.
double PrivacyLoss(double q, double sigma, PldAdjacency adjacency, double x) {
  const double s2 = sigma * sigma;
  if (adjacency == PldAdjacency::kRemove) return LogMix(q, (-0.5 - x) / s2);
  return -LogMix(q, -(0.5 - x) / s2);
}

// The largest x whose privacy loss is at least epsilon (inverse of the above).
double InversePrivacyLoss(double q, double sigma, PldAdjacency adjacency, double epsilon) {
  const double s2 = sigma * sigma;
  if (adjacency == PldAdjacency::kRemove) return -0.5 - s2 * InverseLogMix(q, epsilon);
  return 0.5 + s2 * InverseLogMix(q, -epsilon);
}

// Shared argument checks of the subsampled Gaussian functions.
void CheckMechanism(double q, double sigma) {
  if (!(q > 0.0 && q <= 1.0))
    ThrowInvalid("sampling probability q must be in (0, 1], got " + Num(q));
  if (!std::isfinite(sigma) || !(sigma > 0.0))
    ThrowInvalid("noise multiplier sigma must be a finite number greater than 0, got " +
                 Num(sigma));
}

// Shared checks of steps and discretisation for the accountant.
void CheckComposition(int64_t steps, double discretization) {
  if (steps < 1) ThrowInvalid("steps must be at least 1, got " + std::to_string(steps));
  if (!std::isfinite(discretization) || !(discretization > 0.0))
    ThrowInvalid("discretization must be a finite number greater than 0, got " +
                 Num(discretization));
}

// The composed PLD of one adjacency direction.
DiscretePld ComposedPld(double q, double sigma, int64_t steps, PldAdjacency adjacency,
                        double discretization) {
  const DiscretePld one = SubsampledGaussianPld(q, sigma, adjacency, discretization);
  CheckInterrupt();
  DiscretePld composed = one.SelfCompose(steps);
  CheckInterrupt();
  return composed;
}

}  // namespace

// δ(ε) = μ_up(X ≤ x*) − e^ε μ_low(X ≤ x*) with x* the inverse privacy loss,
// because the loss is decreasing in x (for q = 1 this is Balle & Wang 2018,
// Thm 8; the subsampled pairs follow the same way). Remove,
// ε ≤ ln(1−q): every output has loss ≥ ε, δ = 1 − e^ε. Add, ε ≥ −ln(1−q): no
// output has loss above ε, δ = 0.
double SubsampledGaussianDelta(double q, double sigma, PldAdjacency adjacency, double epsilon) {
  CheckMechanism(q, sigma);
  if (std::isnan(epsilon)) ThrowInvalid("epsilon must not be NaN");
  if (q < 1.0) {
    if (adjacency == PldAdjacency::kRemove && epsilon <= std::log1p(-q))
      return -std::expm1(epsilon);
    if (adjacency == PldAdjacency::kAdd && epsilon >= -std::log1p(-q)) return 0.0;
  }
  if (epsilon == std::numeric_limits<double>::infinity()) return 0.0;
  if (epsilon == -std::numeric_limits<double>::infinity()) return 1.0;
  const double x = InversePrivacyLoss(q, sigma, adjacency, epsilon);
  double delta;
  if (adjacency == PldAdjacency::kRemove) {
    // μ_up = (1−q)N(0,σ²) + qN(−1,σ²), μ_low = N(0,σ²).
    const double upper = (1.0 - q) * NormalCdf(x / sigma) + q * NormalCdf((x + 1.0) / sigma);
    delta = upper - std::exp(epsilon + LogNormalCdf(x / sigma));
  } else {
    // μ_up = N(0,σ²), μ_low = (1−q)N(0,σ²) + qN(1,σ²).
    const double log_lower = q == 1.0 ? LogNormalCdf((x - 1.0) / sigma)
                                      : LogAddExp(std::log1p(-q) + LogNormalCdf(x / sigma),
                                                  std::log(q) + LogNormalCdf((x - 1.0) / sigma));
    delta = NormalCdf(x / sigma) - std::exp(epsilon + log_lower);
  }
  return std::clamp(delta, 0.0, 1.0);
}

// Pessimistic connect-the-dots (Doroshenko et al. 2022, Algorithm 1) on the
// grid ε_i = i·h, i = 0..n, between the losses at the noise truncation points: δ(ε) is
// convex in e^ε, so joining the exact points (e^{ε_i}, δ(ε_i)) by chords
// gives a PLD whose δ is never below the true one (masses:
// ConnectTheDotsPld, pld.hpp).
// The support ends where the noise leaves out ½e^{−50} of its mass on each
// side (shifted by the sensitivity as dp_accounting does).
DiscretePld SubsampledGaussianPld(double q, double sigma, PldAdjacency adjacency,
                                  double discretization) {
  CheckMechanism(q, sigma);
  CheckComposition(1, discretization);
  const double h = discretization;
  const double z =
      -std::sqrt(2.0) * boost::math::erfc_inv(std::exp(kLogMassTruncationBound), ThrowPolicy());
  double lower_x = sigma * z, upper_x = -sigma * z;
  if (adjacency == PldAdjacency::kAdd) upper_x += 1.0;
  else lower_x -= 1.0;
  const double eps_upper = PrivacyLoss(q, sigma, adjacency, lower_x);
  const double eps_lower = PrivacyLoss(q, sigma, adjacency, upper_x);
  const double first = std::floor(eps_lower / h), last = std::ceil(eps_upper / h);
  if (!std::isfinite(first) || !std::isfinite(last))
    ThrowInvalid("PLD accounting: privacy loss range is not finite for sigma " + Num(sigma),
                 "use a larger noise multiplier");
  return ConnectTheDotsPld(h, first, last, [&](double eps) {
    return SubsampledGaussianDelta(q, sigma, adjacency, eps);
  });
}

// PLD accountant (dp_accounting's PLDAccountant for
// SelfComposed(PoissonSampled(Gaussian))): compose each direction's PLD
// `steps` times and take the larger ε, since add/remove-one DP must hold for
// both orders of the neighbouring pair. For q = 1 the two coincide.
double EpsilonPoissonSubsampledGaussianPld(double q, double sigma, int64_t steps, double delta,
                                           double discretization) {
  CheckMechanism(q, sigma);
  CheckComposition(steps, discretization);
  if (!(delta > 0.0 && delta < 1.0))
    ThrowInvalid("delta must be in the open interval (0, 1), got " + Num(delta));
  double epsilon =
      ComposedPld(q, sigma, steps, PldAdjacency::kRemove, discretization).GetEpsilon(delta);
  if (q < 1.0)
    epsilon = std::max(
        epsilon,
        ComposedPld(q, sigma, steps, PldAdjacency::kAdd, discretization).GetEpsilon(delta));
  return epsilon;
}

// δ(ε) of the same accountant: the larger δ of the two directions.
double DeltaPoissonSubsampledGaussianPld(double q, double sigma, int64_t steps, double epsilon,
                                         double discretization) {
  CheckMechanism(q, sigma);
  CheckComposition(steps, discretization);
  if (!(epsilon >= 0.0)) ThrowInvalid("epsilon must be >= 0, got " + Num(epsilon));
  double delta =
      ComposedPld(q, sigma, steps, PldAdjacency::kRemove, discretization).GetDelta(epsilon);
  if (q < 1.0)
    delta = std::max(
        delta, ComposedPld(q, sigma, steps, PldAdjacency::kAdd, discretization).GetDelta(epsilon));
  return delta;
}

}  // namespace dperm
