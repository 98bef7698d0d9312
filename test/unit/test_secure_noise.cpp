// Unit tests for the exact integer samplers and snapping (noise.hpp, CKS20).
// Goodness of fit: chi-square over >= 10^6 draws with fixed seeds against
// the exact pmf, bins merged so that every expected count is >= 20.
#include "dperm/noise/noise.hpp"
#include "dperm/noise/exact_normal.hpp"
#include "dperm/planning/plan_release.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <vector>

namespace dperm {
namespace {

// Upper-tail p-value of a chi-square statistic with `df` degrees of freedom
// (Wilson & Hilferty 1931 cube-root normal approximation).
double ChiSquarePValue(double stat, double df) {
  const double z = (std::cbrt(stat / df) - (1 - 2 / (9 * df))) / std::sqrt(2 / (9 * df));
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

struct FitResult {
  double stat = 0;
  int df = 0;
  double p = 0;
  double mean = 0, var = 0, exact_var = 0;
  double tail = 0, exact_tail = 0;  // P[|Y| >= tail_at]
};

// Draws `n` values, compares with the pmf w(y) (unnormalised, symmetric,
// support |y| <= support) by chi-square over bins of width `width`, merged
// from the tails inwards until each expected count is >= 20.
FitResult Fit(const std::function<int64_t()>& draw, const std::function<long double(int64_t)>& w,
              int64_t support, int64_t width, int64_t tail_at, int n) {
  long double total = 0, m2 = 0, tail_mass = 0;
  for (int64_t y = -support; y <= support; ++y) {
    const long double p = w(y);
    total += p;
    m2 += p * (long double)y * y;
    if (std::llabs(y) >= tail_at) tail_mass += p;
  }
  // bins: key floor(y / width)
  std::map<int64_t, long double> expect;
  for (int64_t y = -support; y <= support; ++y) {
    const int64_t b = y >= 0 ? y / width : -((-y + width - 1) / width);
    expect[b] += w(y) / total * n;
  }
  std::map<int64_t, double> observed;
  FitResult r;
  double sum = 0, sum2 = 0;
  int64_t tails = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t y = draw();
    sum += double(y);
    sum2 += double(y) * double(y);
    if (std::llabs(y) >= tail_at) ++tails;
    int64_t b = y >= 0 ? y / width : -((-y + width - 1) / width);
    b = std::min(std::max(b, expect.begin()->first), expect.rbegin()->first);
    observed[b] += 1;
  }
  // Merge bins from the left and from the right until expected >= 20.
  std::vector<std::pair<long double, double>> bins;  // (expected, observed)
  long double e_acc = 0;
  double o_acc = 0;
  for (const auto& kv : expect) {
    e_acc += kv.second;
    o_acc += observed[kv.first];
    if (e_acc >= 20) {
      bins.push_back({e_acc, o_acc});
      e_acc = 0;
      o_acc = 0;
    }
  }
  if (!bins.empty()) {
    bins.back().first += e_acc;
    bins.back().second += o_acc;
  }
  for (const auto& b : bins)
    r.stat += double((b.second - b.first) * (b.second - b.first) / b.first);
  r.df = int(bins.size()) - 1;
  r.p = ChiSquarePValue(r.stat, r.df);
  r.mean = sum / n;
  r.var = sum2 / n - r.mean * r.mean;
  r.exact_var = double(m2 / total);
  r.tail = double(tails) / n;
  r.exact_tail = double(tail_mass / total);
  return r;
}

void Report(const char* what, const FitResult& r) {
  std::printf(
      "[ chi2     ] %s: chi2 = %.1f on %d df, p = %.3f; var %.6g (exact %.6g); "
      "tail %.6g (exact %.6g)\n",
      what, r.stat, r.df, r.p, r.var, r.exact_var, r.tail, r.exact_tail);
}

void ExpectGoodFit(const FitResult& r, int n) {
  EXPECT_GT(r.p, 1e-4) << "chi2 " << r.stat << " on " << r.df << " df";
  EXPECT_NEAR(r.mean, 0, 6 * std::sqrt(r.exact_var / n));
  // Var of y^2 <= 3 var^2 for these light-tailed laws (Gaussian: 2 var^2;
  // Laplace: 5 var^2), so allow 6 standard errors of a 5 var^2 variance.
  EXPECT_NEAR(r.var, r.exact_var, 6 * std::sqrt(5.0 / n) * r.exact_var);
  const double se = std::sqrt(r.exact_tail * (1 - r.exact_tail) / n);
  EXPECT_NEAR(r.tail, r.exact_tail, 6 * se + 1e-9);
}

// sigma^2 = num/den; exact pmf ∝ exp(-y^2 den / (2 num)).
void CheckDiscreteGaussian(uint64_t num, uint64_t den, uint64_t seed) {
  const int n = 1000000;
  SecureRng rng = SecureRng::FromSeed(seed);
  const double sigma = std::sqrt(double(num) / double(den));
  const int64_t support = int64_t(std::ceil(12 * sigma)) + 2;
  const int64_t width = std::max<int64_t>(1, int64_t(sigma / 20));
  const int64_t tail_at = std::max<int64_t>(1, int64_t(std::ceil(2 * sigma)));
  FitResult r = Fit([&] { return DiscreteGaussian(rng, num, den); },
                    [&](int64_t y) { return std::exp(-(long double)y * y * den / (2.0L * num)); },
                    support, width, tail_at, n);
  char what[80];
  std::snprintf(what, sizeof what, "discrete Gaussian sigma = %g", sigma);
  Report(what, r);
  ExpectGoodFit(r, n);
  // CKS20 Cor. 9: Var N_Z(0, sigma^2) <= sigma^2.
  EXPECT_LE(r.exact_var, sigma * sigma * (1 + 1e-12));
}

TEST(DiscreteGaussian, MatchesExactPmf) {
  CheckDiscreteGaussian(1, 4, 101);                 // sigma = 0.5
  CheckDiscreteGaussian(1, 1, 102);                 // sigma = 1
  CheckDiscreteGaussian(109, 10, 103);              // sigma^2 = 10.9
  CheckDiscreteGaussian(1000000, 1, 104);           // sigma = 1000
  CheckDiscreteGaussian(1099511627776ULL, 1, 105);  // sigma = 2^20
}

// sigma = 2^28, the grid's largest (MaxGridUnits): an exact pmf table of
// 24 sigma entries is out of reach, so moments and a two-sided tail against
// N(0, sigma^2), which the discrete Gaussian matches to within exp(-2 pi^2
// sigma^2) at this scale (Poisson summation; CKS20 §2). 10^6 draws; bounds
// at 5 standard errors.
TEST(DiscreteGaussian, LargestGridSigmaHasGaussianMoments) {
  const int n = 1000000;
  const double sigma = 268435456.0;
  SecureRng rng = SecureRng::FromSeed(106);
  double sum = 0, sum_sq = 0;
  int beyond = 0;
  for (int i = 0; i < n; ++i) {
    const double y = double(DiscreteGaussian(rng, 72057594037927936ULL, 1)) / sigma;
    sum += y;
    sum_sq += y * y;
    beyond += std::fabs(y) > 2;
  }
  EXPECT_NEAR(sum / n, 0.0, 5 / std::sqrt(double(n)));
  EXPECT_NEAR(sum_sq / n, 1.0, 5 * std::sqrt(2.0 / n));
  const double tail = std::erfc(2 / std::sqrt(2.0));  // P(|Z| > 2) = 0.0455
  EXPECT_NEAR(double(beyond) / n, tail, 5 * std::sqrt(tail * (1 - tail) / n));
}

// scale = t/s; exact pmf ∝ exp(-|y| s / t).
void CheckDiscreteLaplace(uint64_t t, uint64_t s, uint64_t seed) {
  const int n = 1000000;
  SecureRng rng = SecureRng::FromSeed(seed);
  const double scale = double(t) / double(s);
  const int64_t support = int64_t(std::ceil(40 * scale)) + 2;
  const int64_t width = std::max<int64_t>(1, int64_t(scale / 10));
  const int64_t tail_at = std::max<int64_t>(1, int64_t(std::ceil(3 * scale)));
  FitResult r = Fit([&] { return DiscreteLaplace(rng, t, s); },
                    [&](int64_t y) { return std::exp(-(long double)std::llabs(y) * s / t); },
                    support, width, tail_at, n);
  char what[80];
  std::snprintf(what, sizeof what, "discrete Laplace scale = %g", scale);
  Report(what, r);
  ExpectGoodFit(r, n);
}

TEST(DiscreteLaplace, MatchesExactPmf) {
  CheckDiscreteLaplace(1, 2, 201);                   // scale 0.5
  CheckDiscreteLaplace(3, 2, 202);                   // scale 1.5
  CheckDiscreteLaplace(1000, 1, 203);                // scale 1000
  CheckDiscreteLaplace(1024 * 2048 + 7, 1024, 204);  // a grid-style t/s
}

TEST(BernoulliExpNeg, Frequencies) {
  SecureRng rng = SecureRng::FromSeed(301);
  const int n = 1000000;
  const std::pair<uint64_t, uint64_t> gammas[] = {{0, 1}, {3, 10}, {1, 1}, {5, 2}, {7, 1}};
  for (const auto& g : gammas) {
    int hits = 0;
    for (int i = 0; i < n; ++i) hits += BernoulliExpNeg(rng, g.first, g.second);
    const double p = std::exp(-double(g.first) / double(g.second));
    EXPECT_NEAR(double(hits) / n, p, 6 * std::sqrt(p * (1 - p) / n) + 1e-12)
        << g.first << "/" << g.second;
  }
  // 128-bit denominators: gamma = 1/2 written over 2^100.
  const unsigned __int128 big = (unsigned __int128)1 << 100;
  int hits = 0;
  for (int i = 0; i < n; ++i) hits += BernoulliExpNeg(rng, big / 2, big);
  EXPECT_NEAR(double(hits) / n, std::exp(-0.5), 6 * std::sqrt(0.25 / n));
}

TEST(Snapping, GridChoice) {
  const NoiseKind gauss = NoiseKind::kGaussian, laplace = NoiseKind::kLaplace;
  // Delta-bound: g <= Delta / (2^10 sqrt(dim)), largest power of two.
  EXPECT_EQ(SnapGrid(1.0, 1, 100.0, gauss), std::ldexp(1.0, -10));
  EXPECT_EQ(SnapGrid(1.0, 16, 100.0, laplace), std::ldexp(1.0, -12));
  // sigma-bound: g <= sigma / 2^10.
  EXPECT_EQ(SnapGrid(1.0, 1, 0.01, gauss), std::ldexp(1.0, -17));
  // raised so that sigma/g <= 2^20 (Laplace) or 2^30 (Gaussian): huge dim,
  // or noise far above the sensitivity.
  double g = SnapGrid(1.0, 100000000, 1.0, laplace);
  EXPECT_LE(1.0 / g, 1048576.0);
  EXPECT_GT(1.0 / g, 524288.0);
  EXPECT_EQ(SnapGrid(1.0, 100000000, 1.0, gauss),
            std::ldexp(1.0, -24));  // 2^-10/sqrt(1e8) -> 2^-24
  g = SnapGrid(1e-9, 100, 1e3, gauss);
  EXPECT_LE(1e3 / g, 268435456.0);
  EXPECT_GT(1e3 / g, 134217728.0);
  for (NoiseKind kind : {gauss, laplace})
    for (double delta : {1e-6, 0.3, 7.0})
      for (int dim : {1, 5, 1000})
        for (double sigma : {1e-3, 1.0, 50.0}) {
          const double gg = SnapGrid(delta, dim, sigma, kind);
          int e;
          EXPECT_EQ(std::frexp(gg, &e), 0.5);  // a power of two
          EXPECT_GE(sigma / gg, 1024.0 / 2 - 1e-9);
          EXPECT_LE(sigma / gg, MaxGridUnits(kind));
        }
}

TEST(Snapping, OutputsLieOnTheGrid) {
  SecureRng rng = SecureRng::FromSeed(401);
  const double grid = std::ldexp(1.0, -13);
  Eigen::VectorXd v = Eigen::VectorXd::LinSpaced(50, -3.3, 2.7);
  Eigen::VectorXd w = v;
  SnapDiscreteGaussian(rng, grid, GridSigmaSq(0.5, grid), w.data(), 50);
  for (int i = 0; i < 50; ++i) {
    const double k = w[i] / grid;
    EXPECT_EQ(k, std::round(k));
    EXPECT_LT(std::fabs(w[i] - v[i]), 0.5 * 10);  // 10 sigma
  }
  Eigen::VectorXd l = v;
  uint64_t t, s;
  GridLaplaceScale(0.25, grid, t, s);
  SnapDiscreteLaplace(rng, grid, t, s, l.data(), 50);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(l[i] / grid, std::round(l[i] / grid));
}

TEST(Snapping, RoundingMovesNeighboursByAWholeGridStep) {
  // The counterexample to the sqrt(dim) 2^(k-1): two values 2t apart
  // straddling a rounding boundary land a full grid step g apart.
  const double g = 0.125, t = 1e-6;
  EXPECT_EQ(GridRound(g / 2 - t, g), 0);
  EXPECT_EQ(GridRound(g / 2 + t, g), 1);
  // and never more than |v - v'|/g + 1 steps apart (the sqrt(dim) g bound).
  SecureRng rng = SecureRng::FromSeed(402);
  for (int i = 0; i < 100000; ++i) {
    const double a = 10 * (rng.Uniform01() - 0.5), b = a + 0.3 * (rng.Uniform01() - 0.5);
    EXPECT_LE(std::fabs(double(GridRound(a, g) - GridRound(b, g))), std::fabs(a - b) / g + 1);
  }
  // NaN reads as 0; huge values are clamped to 2^52 grid units.
  EXPECT_EQ(GridRound(std::nan(""), g), 0);
  EXPECT_EQ(GridRound(1e300, g), int64_t(1) << 52);
}

TEST(Snapping, SigmaSqRoundsUp) {
  const double grid = std::ldexp(1.0, -10);
  const uint64_t a = GridSigmaSq(1.7, grid);
  const double exact = (1.7 / grid) * (1.7 / grid);
  EXPECT_GE(double(a), exact);
  EXPECT_LE(double(a), exact + 2);
  uint64_t t, s;
  GridLaplaceScale(3.1, grid, t, s);
  EXPECT_GE(double(t) / double(s), 3.1 / grid);
  EXPECT_LE(double(t) / double(s), 3.1 / grid * (1 + 1e-6));
}

// Karney's Algorithm N, rounded to 2^-b: P[K = m] = Phi((m + 1/2) 2^-b) -
// Phi((m - 1/2) 2^-b) exactly. 10^6 draws per b; b = 0 also checks the
// integer part and the sign (cells straddle integers), b = 5 the fraction's
// leading bits.
void CheckRoundedNormal(int bits, uint64_t seed) {
  const int n = 1000000;
  SecureRng rng = SecureRng::FromSeed(seed);
  const long double h = std::ldexp(1.0L, -bits);
  auto cdf = [](long double t) { return 0.5L * std::erfc(-t / std::sqrt(2.0L)); };
  const int64_t scale = int64_t(1) << bits;
  FitResult r = Fit([&] { return RoundedExactNormal(rng, bits); },
                    [&](int64_t m) { return cdf((m + 0.5L) * h) - cdf((m - 0.5L) * h); }, 9 * scale,
                    std::max<int64_t>(1, scale / 8), 2 * scale, n);
  char what[80];
  std::snprintf(what, sizeof what, "exact normal rounded to 2^-%d", bits);
  Report(what, r);
  ExpectGoodFit(r, n);
}

TEST(ExactNormal, RoundedMatchesNormalCellMasses) {
  CheckRoundedNormal(0, 501);
  CheckRoundedNormal(2, 502);
  CheckRoundedNormal(5, 503);
}

TEST(ExactNormal, ObjectiveNoiseIsExactOnItsGrid) {
  // sigma is rounded up to <= 20 significant bits, by < 2^-19 relative.
  for (double sigma : {1.0, 0.1, 9.123456789, 12345.678, 3e-7}) {
    const double s = DyadicNoiseScale(sigma);
    EXPECT_GE(s, sigma);
    EXPECT_LE(s, sigma * (1 + std::ldexp(1.0, -19)));
    int e = 0;
    const double mant = std::ldexp(std::frexp(s, &e), kObjectiveNoiseBits);
    EXPECT_EQ(mant, std::floor(mant)) << sigma;
    EXPECT_EQ(DyadicNoiseScale(s), s);
  }
  SecureRng rng = SecureRng::FromSeed(504);
  const double sigma = DyadicNoiseScale(7.77);
  const int dim = 200000;
  const Eigen::VectorXd b = ObjectiveNoise(rng, dim, sigma);
  double sum_sq = 0;
  for (int i = 0; i < dim; ++i) {
    // every coordinate is sigma 2^-20 times an integer
    const double units = std::ldexp(b[i] / sigma, kObjectiveNoiseBits);
    ASSERT_EQ(units, std::round(units)) << b[i];
    sum_sq += b[i] * b[i];
  }
  // E b_i^2 = sigma^2 (1 + 2^-40/12): 5 standard errors of 2 sigma^4/dim.
  EXPECT_NEAR(sum_sq / dim, sigma * sigma, 5 * std::sqrt(2.0 / dim) * sigma * sigma);
  EXPECT_LE(b.norm(), ObjectiveNoiseNormBound(sigma, dim));
  EXPECT_DOUBLE_EQ(ObjectiveNoiseRounding(sigma, 4), sigma * 2 * std::ldexp(1.0, -21));
  // A sigma that is not dyadic is refused (it would make sigma K inexact).
  EXPECT_THROW(ObjectiveNoise(rng, 3, 0.1), Error);
}

// The gradient steps' rounded exact Gaussian (noise.hpp, THE BRIDGE):
// u (round(v/u) + round(2^b X)) with u = sigma 2^-b. The noise in grid
// units must be round(2^b X) exactly: P[N = m] = Phi((m + 1/2) 2^-b) -
// Phi((m - 1/2) 2^-b), checked by chi-square on 10^6 steps of one
// coordinate at b = 10 (the smallest b a plan uses), whatever the snapped
// value's fractional part.
TEST(ExactGaussianSteps, NoiseMatchesNormalCellMasses) {
  const int n = 1000000, bits = 10;
  const double sigma = DyadicNoiseScale(0.37);
  const double u = std::ldexp(sigma, -bits);
  SecureRng rng = SecureRng::FromSeed(511);
  const long double h = std::ldexp(1.0L, -bits);
  auto cdf = [](long double t) { return 0.5L * std::erfc(-t / std::sqrt(2.0L)); };
  int i = 0;
  FitResult r = Fit(
      [&] {
        // v cycles through values whose nearest grid point is K = -7 .. 5
        const double v = u * (double(i % 13) - 7 + 0.37 * double(i % 3 - 1));
        const int64_t k = int64_t(std::round(v / u));
        double x = v;
        SnapExactGaussian(rng, sigma, bits, &x, 1);
        ++i;
        const double units = x / u;
        EXPECT_EQ(units, std::round(units));
        return int64_t(std::llround(units)) - k;
      },
      [&](int64_t m) { return cdf((m + 0.5L) * h) - cdf((m - 0.5L) * h); }, 9 * 1024, 128, 2 * 1024,
      n);
  Report("rounded exact Gaussian step noise, b = 10", r);
  ExpectGoodFit(r, n);
  // The variance is sigma^2 (1 + 2^-2b/12) in grid units^2 / 2^2b: the noise
  // is sigma's, not a discretised one's.
  EXPECT_NEAR(r.var * std::ldexp(1.0, -2 * bits), 1.0, 6 * std::sqrt(2.0 / n));
}

TEST(ExactGaussianSteps, ReleasesLieOnTheGridAndRoundWithinOneStep) {
  SecureRng rng = SecureRng::FromSeed(512);
  const double sigma = DyadicNoiseScale(0.8123);
  for (int bits : {10, 17, 40}) {
    const double u = std::ldexp(sigma, -bits);
    for (int i = 0; i < 2000; ++i) {
      const double v = 20 * (rng.Uniform01() - 0.5);
      double x = v;
      SnapExactGaussian(rng, sigma, bits, &x, 1);
      // x is u M for an integer M: exactly when |M| < 2^33 (sigma has 20
      // significant bits), else the double nearest u M -- a function of M.
      const double m = std::round(x / u);
      ASSERT_EQ(x, u * m) << bits;
      if (std::fabs(m) < std::ldexp(1.0, 33)) {
        ASSERT_EQ(x / u, m) << bits;
      }
      EXPECT_LT(std::fabs(x - v), 12 * sigma);  // 12 sigma: probability ~ 1e-32
    }
  }
  // NaN reads as 0 and huge values are clamped to 2^50 grid units, so the
  // integers stay far inside int64 (|K| + |N| < 2^51).
  const int bits = 12;
  const double u = std::ldexp(sigma, -bits);
  double x = std::nan("");
  SnapExactGaussian(rng, sigma, bits, &x, 1);
  EXPECT_LT(std::fabs(x), 12 * sigma);
  double big = 1e300;
  SnapExactGaussian(rng, sigma, bits, &big, 1);
  EXPECT_NEAR(big / u, std::ldexp(1.0, 50), 12 * std::ldexp(1.0, bits));
  // A sigma that is not dyadic, or b outside [10, 40], is refused.
  double y = 1;
  EXPECT_THROW(SnapExactGaussian(rng, 0.1, bits, &y, 1), Error);
  EXPECT_THROW(SnapExactGaussian(rng, sigma, 9, &y, 1), Error);
  EXPECT_THROW(SnapExactGaussian(rng, sigma, 41, &y, 1), Error);
}

// b from public quantities: sqrt(dim) u <= 2^-10 C for sigma/C up to the
// multiplier (1 + 2^-9), b >= 10, capped at 40.
TEST(ExactGaussianSteps, BitsKeepTheRoundingBelowTwoToMinusTen) {
  for (double z : {0.01, 0.5, 3.0, 81.0, 1e4})
    for (int dim : {1, 9, 1000, 100000}) {
      const int b = ExactGaussianBits(z, dim);
      EXPECT_GE(b, 10);
      EXPECT_LE(b, 40);
      if (b < 40) {
        EXPECT_LE(std::sqrt(double(dim)) * z * (1 + 1.0 / 512) * std::ldexp(1.0, -b),
                  std::ldexp(1.0, -10));
        if (b > 10) {  // and b is the smallest such
          EXPECT_GT(std::sqrt(double(dim)) * z * (1 + 1.0 / 512) * std::ldexp(1.0, 1 - b),
                    std::ldexp(1.0, -10));
        }
      }
    }
  EXPECT_EQ(ExactGaussianBits(1e12, 1000000), 40);
}

// Pure epsilon-DP in many coordinates at a small epsilon needs more grid
// units per coordinate than the exact sampler takes, whatever the grid
// (sqrt(dim) sqrt(dim)/epsilon >= 2^20): refused while planning with an
// invalid-parameter error, never a loop (the fuzz statement that found it:
// dp_softmax, 100000 features, 3 classes, epsilon 0.1, delta 0).
TEST(Snapping, TooWideNoiseIsRefusedWhilePlanning) {
  Options o;
  o.epsilon = 0.1;
  o.delta = 0;
  o.classes = 3;
  o.fit_intercept = false;
  o.has_algorithm = false;
  try {
    PlanRelease(o, LossKind::kSoftmax, 2, 100000);
    ADD_FAILURE() << "planned";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidParameter);
    EXPECT_NE(std::string(e.what()).find("too wide"), std::string::npos) << e.what();
  }
  o.epsilon = 1;  // 300000/1 < 2^20: plans
  EXPECT_GT(PlanRelease(o, LossKind::kSoftmax, 2, 100000).grid, 0.0);
  // A sensitivity that underflows to 0 (the fuzz: dp_huber, no features,
  // step_size 5e-324) is an invalid option, not an internal error.
  Options tiny;
  tiny.epsilon = 1;
  tiny.delta = 0;
  tiny.step_size = 5e-324;
  tiny.has_algorithm = false;
  try {
    PlanRelease(tiny, LossKind::kHuber, 100, 0);
    ADD_FAILURE() << "planned";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidParameter) << e.what();
    EXPECT_NE(std::string(e.what()).find("underflows to 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dperm
