// The secure samplers (CKS20) and snapping of every noisy release.
#include "dperm/noise/noise.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/util/interrupt.hpp"

namespace dperm {
namespace {

using u128 = unsigned __int128;

// Uniform on {0, ..., n-1}, n >= 1, for n up to 2^128 - 1: rejection from
// the smallest power of two >= n (no modulo bias).
u128 UniformBelow(SecureRng& rng, u128 n) {
  if (n <= u128(UINT64_MAX)) return rng.UniformIndex(uint64_t(n));
  int bits = 128;
  while (bits > 64 && ((n - 1) >> (bits - 1)) == 0) --bits;
  const u128 mask = bits == 128 ? ~u128(0) : ((u128(1) << bits) - 1);
  for (;;) {
    const u128 x = ((u128(rng.NextU64()) << 64) | rng.NextU64()) & mask;
    if (x < n) return x;
  }
}

// Bernoulli(num/den), 0 <= num <= den.
bool BernoulliRatio(SecureRng& rng, u128 num, u128 den) {
  if (num >= den) return true;  // probability 1: no draw
  if (num == 0) return false;
  return UniformBelow(rng, den) < num;
}

// Bernoulli(exp(-gamma)) for gamma = num/den in [0, 1] (CKS20 Algorithm 1,
// first case): K <- 1; while Bernoulli(gamma/K): K <- K + 1; return K odd.
// Bernoulli(gamma/K) is drawn as Bernoulli(num/den) AND Bernoulli(1/K),
// independent, so no product num*K is formed.
bool BernoulliExpNegUnit(SecureRng& rng, u128 num, u128 den) {
  uint64_t k = 1;
  for (;;) {
    const bool a = BernoulliRatio(rng, num, den) && rng.UniformIndex(k) == 0;
    if (!a) break;
    ++k;
  }
  return (k & 1) == 1;
}

// A 256-bit unsigned integer hi 2^128 + lo.
struct U256 {
  u128 hi, lo;
};

// a b, exactly.
U256 MulWide(u128 a, u128 b) {
  const uint64_t a0 = uint64_t(a), a1 = uint64_t(a >> 64);
  const uint64_t b0 = uint64_t(b), b1 = uint64_t(b >> 64);
  const u128 p00 = u128(a0) * b0, p01 = u128(a0) * b1, p10 = u128(a1) * b0, p11 = u128(a1) * b1;
  const u128 mid = (p00 >> 64) + uint64_t(p01) + uint64_t(p10);  // < 3 2^64
  return {p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64), (mid << 64) | uint64_t(p00)};
}

// Bernoulli(exp(-x/d)) for a 256-bit x and 1 <= d <= 2^127 (CKS20
// Algorithm 1, as BernoulliExpNeg): floor(x/d) Bernoulli(exp(-1)) factors,
// then Bernoulli(exp(-(x mod d)/d)). The factors stop at the first failure;
// a count beyond 2^128 is never reached (2^128 successes cannot run).
bool BernoulliExpNegWide(SecureRng& rng, U256 x, u128 d) {
  U256 q{0, 0};
  u128 r = 0;  // < d <= 2^127: r << 1 fits
  for (int i = 255; i >= 0; --i) {
    const u128 bit = i >= 128 ? (x.hi >> (i - 128)) & 1 : (x.lo >> i) & 1;
    r = (r << 1) | bit;
    if (r >= d) {
      r -= d;
      if (i >= 128) q.hi |= u128(1) << (i - 128);
      else q.lo |= u128(1) << i;
    }
  }
  for (u128 i = 0; q.hi != 0 || i < q.lo; ++i)
    if (!BernoulliExpNegUnit(rng, 1, 1)) return false;
  return BernoulliExpNegUnit(rng, r, d);
}

}  // namespace

// CKS20 Algorithm 1: for gamma > 1, exp(-gamma) = exp(-1)^floor(gamma) *
// exp(-(gamma - floor(gamma))), each factor an independent Bernoulli.
bool BernoulliExpNeg(SecureRng& rng, u128 num, u128 den) {
  if (den == 0) throw Error(ErrorKind::kInternal, "BernoulliExpNeg: zero denominator");
  const u128 whole = num / den;
  for (u128 i = 0; i < whole; ++i)
    if (!BernoulliExpNegUnit(rng, 1, 1)) return false;
  return BernoulliExpNegUnit(rng, num - whole * den, den);
}

// CKS20 Algorithm 2 (scale t/s): U uniform in {0..t-1} accepted with
// probability exp(-U/t); V geometric with P[V >= v] = exp(-v); X = U + tV is
// then geometric with P[X = x] ∝ exp(-x/t); Y = floor(X/s); a sign B, with
// (B = 1, Y = 0) rejected so that 0 is not counted twice. Exact, with no
// cap: V counts loop iterations in 64 bits (2^64 of them cannot run), and
// X < 2^32 + 2^96 is held in 128 bits, so no draw is ever refused or
// truncated -- pure epsilon-DP releases stay pure (noise.hpp, SAMPLER
// FAILURE).
__int128 DiscreteLaplace(SecureRng& rng, uint64_t t, uint64_t s) {
  if (t < 1 || s < 1 || t > (uint64_t(1) << 32) || s > (uint64_t(1) << 32))
    throw Error(ErrorKind::kInternal, "DiscreteLaplace: scale t/s out of range");
  for (;;) {
    const uint64_t u = rng.UniformIndex(t);
    if (!BernoulliExpNeg(rng, u, t)) continue;
    uint64_t v = 0;
    while (BernoulliExpNeg(rng, 1, 1)) ++v;
    const u128 x = u128(u) + u128(t) * v;
    const u128 y = x / s;
    const bool negative = (rng.NextU64() & 1) == 1;
    if (negative && y == 0) continue;
    return negative ? -__int128(y) : __int128(y);
  }
}

// CKS20 Algorithm 3 with sigma^2 = num/den: t = floor(sigma) + 1; Y discrete
// Laplace of scale t; accept with probability exp(-(|Y| - sigma^2/t)^2 /
// (2 sigma^2)) = exp(-(|Y| t den - num)^2 / (2 num den t^2)).
__int128 DiscreteGaussian(SecureRng& rng, uint64_t num, uint64_t den) {
  const uint64_t kMax = uint64_t(1) << 62;
  if (num < 1 || den < 1 || num > kMax || den > kMax)
    throw Error(ErrorKind::kInternal, "DiscreteGaussian: sigma^2 = num/den out of range");
  // floor(sigma) = the largest f with f^2 den <= num (exact, from a double
  // guess corrected in integers).
  uint64_t f = uint64_t(std::sqrt(double(num) / double(den)));
  while (f > 0 && u128(f) * f * den > num) --f;
  while (u128(f + 1) * (f + 1) * den <= num) ++f;
  const uint64_t t = f + 1;
  // 2 num den t^2 < 2^127 keeps every product below in 128 bits.
  const u128 nd = u128(num) * den;  // < 2^124
  const u128 tt = u128(t) * t;
  if (tt != 0 && nd > (u128(1) << 126) / tt)
    throw Error(ErrorKind::kInternal, "DiscreteGaussian: sigma too large for 128-bit arithmetic");
  const u128 denom = 2 * nd * tt;
  const u128 td = u128(t) * den;
  for (;;) {
    const __int128 y = DiscreteLaplace(rng, t, 1);
    const u128 ay = u128(y < 0 ? -y : y);
    if (ay < (u128(1) << 63) / td) {  // |Y| t den < 2^63: diff^2 fits 128 bits
      const u128 a = ay * td;
      const u128 diff = a >= num ? a - num : u128(num) - a;  // < 2^63
      if (BernoulliExpNeg(rng, diff * diff, denom)) return y;
      continue;
    }
    // A proposal far in the tail (probability < 2 exp(-128) for the plans'
    // sigma): the same test with diff^2 in 256 bits, so that the sampler
    // stays exact instead of refusing or truncating (noise.hpp, SAMPLER
    // FAILURE). |Y| < 2^97 (DiscreteLaplace), so |Y| t den < 2^126 whenever
    // t den < 2^29 -- every caller's (den = 1, sigma <= 2^28 grid units).
    if (ay >= (u128(1) << 126) / td)
      throw Error(ErrorKind::kInternal,
                  "DiscreteGaussian: proposal beyond 2^126 (t den too large)");
    const u128 a = ay * td;
    const u128 diff = a - num;  // a >= 2^63 > num
    if (BernoulliExpNegWide(rng, MulWide(diff, diff), denom)) return y;
  }
}

namespace {
const double kGridRatioMin = 1024.0;            // sigma/g >= 2^10 (and Delta/(g sqrt dim))
const double kClampUnits = 4503599627370496.0;  // 2^52 grid units

// The largest power of two <= x (x > 0, finite).
double FloorPow2(double x) {
  int e;
  std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
  return std::ldexp(1.0, e - 1);
}
}  // namespace

double MaxGridUnits(NoiseKind noise) {
  return noise == NoiseKind::kLaplace ? 1048576.0 : 268435456.0;  // 2^20, 2^28
}

double SnapGrid(double sensitivity, int dim, double sigma, NoiseKind noise) {
  if (!(sensitivity > 0) || !(sigma > 0) || !std::isfinite(sensitivity) || !std::isfinite(sigma) ||
      dim < 1)
    throw Error(ErrorKind::kInternal, "SnapGrid: sensitivity and sigma must be positive");
  const double by_sensitivity = sensitivity / (kGridRatioMin * std::sqrt(double(dim)));
  double g = FloorPow2(std::min(by_sensitivity, sigma / kGridRatioMin));
  while (sigma / g > MaxGridUnits(noise)) g *= 2;
  return g;
}

uint64_t GridSigmaSq(double sigma, double grid) {
  const double units = sigma / grid;  // exact: grid is a power of two
  // <= 2^28 units: sigma^2 <= 2^56 grid units, within DiscreteGaussian's
  // limits (num <= 2^62; 2 num t^2 < 2^127 with t = floor(sigma) + 1), and a
  // proposal reaches |Y| t >= 2^63 (the sampler's abort) only beyond 2^35 =
  // 128 t, probability exp(-128) per draw.
  if (!(units >= 1) || !(units <= MaxGridUnits(NoiseKind::kGaussian)))
    throw Error(ErrorKind::kInternal, "GridSigmaSq: sigma/grid out of range");
  // units^2 < 2^42 is computed with relative error <= 2^-53; the next double
  // up, then ceil, is >= the exact square.
  return uint64_t(std::ceil(std::nextafter(units * units, HUGE_VAL)));
}

void GridLaplaceScale(double scale, double grid, uint64_t& t, uint64_t& s) {
  const double units = scale / grid;
  s = 1024;
  if (!(units >= 1) || !(units * 1024 < 4294967296.0))
    throw Error(ErrorKind::kInternal, "GridLaplaceScale: scale/grid out of range");
  t = uint64_t(std::ceil(std::nextafter(units * 1024, HUGE_VAL)));
}

int64_t GridRound(double v, double grid) {
  double u = v / grid;  // exact up to underflow: grid is a power of two
  if (u != u) u = 0;    // NaN
  u = std::min(std::max(u, -kClampUnits), kClampUnits);
  return int64_t(std::round(u));
}

void SnapDiscreteGaussian(SecureRng& rng, double grid, uint64_t sigma_sq_grid, double* v, int dim) {
  // The exact integer, then one rounding to a double (post-processing).
  for (int i = 0; i < dim; ++i) {
    v[i] = grid * double(__int128(GridRound(v[i], grid)) + DiscreteGaussian(rng, sigma_sq_grid, 1));
    CountWork(kNoiseCoordinateWork);
  }
}

void SnapDiscreteLaplace(SecureRng& rng, double grid, uint64_t t, uint64_t s, double* v, int dim) {
  // The exact integer round(v/g) + Z, then one rounding to a double: a
  // deterministic function of the exact release (post-processing).
  for (int i = 0; i < dim; ++i) {
    v[i] = grid * double(__int128(GridRound(v[i], grid)) + DiscreteLaplace(rng, t, s));
    CountWork(kNoiseCoordinateWork);
  }
}

}  // namespace dperm

// ---- The rounded exact Gaussian ------------------------------------------
#include "dperm/noise/exact_normal.hpp"

namespace dperm {

int ExactGaussianBits(double multiplier, int dim) {
  if (!(multiplier > 0) || !std::isfinite(multiplier) || dim < 1)
    throw Error(ErrorKind::kInternal, "ExactGaussianBits: no multiplier");
  // 2^b >= 2^10 sqrt(dim) multiplier (1 + 2^-9): sqrt(dim) sigma 2^-b <= 2^-10 C.
  const double need = std::log2(1024.0 * std::sqrt(double(dim)) * multiplier * (1 + 1.0 / 512));
  const double b = std::ceil(need);
  return int(std::min(40.0, std::max(10.0, b)));
}

void SnapExactGaussian(SecureRng& rng, double sigma, int bits, double* v, int dim) {
  if (!(sigma > 0) || DyadicNoiseScale(sigma) != sigma || bits < 10 || bits > 40)
    throw Error(ErrorKind::kInternal,
                "SnapExactGaussian: sigma must be dyadic and 10 <= bits <= 40");
  const double u = std::ldexp(sigma, -bits);
  const double kClamp = 1125899906842624.0;  // 2^50 grid units (noise.hpp, RANGES)
  for (int i = 0; i < dim; ++i) {
    double k = v[i] / u;
    if (k != k) k = 0;  // NaN
    k = std::round(std::min(std::max(k, -kClamp), kClamp));
    v[i] = u * double(int64_t(k) + RoundedExactNormal(rng, bits));
    CountWork(kNoiseCoordinateWork);
  }
}

}  // namespace dperm
