// Unit tests of row sanitising and clipping (include/dperm/rows/rows.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "dperm/rows/rows.hpp"

namespace {

using dperm::ClipRow;

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> Clip(const std::vector<double>& in, double bound) {
  std::vector<double> out(in.size(), -12345.0);
  ClipRow(in.data(), static_cast<int>(in.size()), bound, out.data());
  return out;
}

// The Euclidean norm in long double, independent of the core's scaled norm
// (fine for moderate values).
long double Norm(const std::vector<double>& v) {
  long double s = 0;
  for (double x : v) s += static_cast<long double>(x) * x;
  return std::sqrt(s);
}

// Random rows of every size: afterwards the norm is <= the bound, rows above
// the bound land on the sphere and keep their direction, rows within the
// bound are unchanged bit for bit.
TEST(ClipRow, NormBoundedAndDirectionKept) {
  std::mt19937_64 gen(5);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> unif(0, 3);
  int clipped = 0, kept = 0;
  for (int trial = 0; trial < 5000; trial++) {
    int d = 1 + trial % 9;
    double bound = trial % 2 ? 1.0 : 0.1 + unif(gen);
    std::vector<double> x(d);
    double scale = std::pow(10.0, unif(gen) - 1.5);
    for (double& v : x) v = scale * normal(gen);
    std::vector<double> y = Clip(x, bound);
    long double nx = Norm(x), ny = Norm(y);
    ASSERT_LE(ny, static_cast<long double>(bound)) << "trial " << trial;
    if (nx <= bound) {
      for (int j = 0; j < d; j++) ASSERT_EQ(y[j], x[j]);
      kept++;
    } else {
      ASSERT_NEAR(static_cast<double>(ny), bound, 1e-14 * bound);
      for (int j = 0; j < d; j++)
        ASSERT_NEAR(y[j], x[j] * (bound / static_cast<double>(nx)), 1e-14 * bound);
      clipped++;
    }
  }
  // Both branches were exercised.
  EXPECT_GT(clipped, 500);
  EXPECT_GT(kept, 500);
}

// Rows at or just above the bound (the rounding-sensitive case) never end
// above it, measured exactly (long double), also for long rows and for rows
// of infinities.
TEST(ClipRow, RowsAtTheBoundNeverEndAboveIt) {
  for (double bound : {1.0, 0.3, 7.0, 1e-5}) {
    for (int k = 0; k <= 64; k++) {
      double a = bound * (1 + k * 1e-16);
      for (int d : {1, 2, 3, 10}) {
        std::vector<double> x(d, a / std::sqrt(double(d)));
        std::vector<double> y = Clip(x, bound);
        EXPECT_LE(Norm(y), static_cast<long double>(bound))
            << "bound=" << bound << " k=" << k << " d=" << d;
      }
    }
  }
  // Random directions normalised to the bound in double: about half of them
  // have an exact norm an ulp above it.
  std::mt19937_64 gen(17);
  std::normal_distribution<double> normal(0, 1);
  for (int d : {2, 5, 30, 1000}) {
    for (int trial = 0; trial < 300; trial++) {
      double bound = trial % 3 == 0 ? 1.0 : 2.7;
      std::vector<double> x(d);
      for (double& v : x) v = normal(gen);
      double s = static_cast<double>(Norm(x));
      for (double& v : x) v *= bound / s;
      ASSERT_LE(Norm(Clip(x, bound)), static_cast<long double>(bound))
          << "d=" << d << " trial=" << trial;
      for (double& v : x) v *= 5;  // and well above the bound
      ASSERT_LE(Norm(Clip(x, bound)), static_cast<long double>(bound))
          << "d=" << d << " trial=" << trial;
    }
  }
  for (double bound : {1.0, 2.0, 0.3, 3.3}) {
    for (int k = 1; k <= 300; k++) {
      std::vector<double> x(k, k % 2 ? kInf : -kInf);
      ASSERT_LE(Norm(Clip(x, bound)), static_cast<long double>(bound)) << "k=" << k;
    }
  }
}

// Long rows (the fast path's four sums and its tail) with NaN entries: a row
// inside the bound comes back bit for bit with NaN zeroed, also in the band
// just under the bound where the fast path defers to the scaled norm
// (norm within 1e-6 of the bound); a row above it lands on the sphere.
TEST(ClipRow, LongRowsWithNaNAroundTheFastPathMargin) {
  std::mt19937_64 gen(23);
  std::normal_distribution<double> normal(0, 1);
  for (int d : {4, 7, 42, 50, 1001}) {
    for (double r : {0.5, 1 - 1e-5, 1 - 2e-6, 1 - 5e-7, 1 - 1e-9, 1 + 1e-9, 1.5}) {
      std::vector<double> x(d);
      for (double& v : x) v = normal(gen);
      x[d / 2] = kNaN;
      std::vector<double> clean = x;
      clean[d / 2] = 0;
      double s = static_cast<double>(Norm(clean));
      for (double& v : x) v *= 2.5 * r / s;
      for (double& v : clean) v *= 2.5 * r / s;
      std::vector<double> y = Clip(x, 2.5);
      ASSERT_LE(Norm(y), 2.5L) << "d=" << d << " r=" << r;
      if (r <= 1 - 5e-7) {
        EXPECT_EQ(y, clean) << "d=" << d << " r=" << r;
      } else {
        EXPECT_NEAR(static_cast<double>(Norm(y)), 2.5 * std::min(r, 1.0), 1e-12) << d << " " << r;
        EXPECT_EQ(y[d / 2], 0.0);
      }
    }
  }
}

// ClippedRow (the streaming pass's read of a row): the row itself, not a
// copy, when it is finite, NaN-free and inside the bound; otherwise scratch
// holding exactly ClipRow's output. Rows of every kind: inside, in the
// fast path's margin band, above the bound, with NaN, with an infinity.
TEST(ClippedRow, InPlaceInsideTheBoundElseClipRowsOutput) {
  std::mt19937_64 gen(29);
  std::normal_distribution<double> normal(0, 1);
  int in_place = 0;
  for (int d : {1, 3, 4, 42, 50, 1001}) {
    for (double r : {0.1, 0.5, 1 - 1e-5, 1 - 5e-7, 1 + 1e-9, 1.5, 1e200}) {
      for (int kind = 0; kind < 3; kind++) {  // clean, a NaN, an infinity
        std::vector<double> x(d);
        for (double& v : x) v = normal(gen);
        double s = static_cast<double>(Norm(x));
        for (double& v : x) v *= 2.5 * r / s;
        if (kind == 1) x[d / 2] = kNaN;
        if (kind == 2) x[d - 1] = -kInf;
        std::vector<double> scratch(d, -12345.0);
        const double* got = dperm::ClippedRow(x.data(), d, 2.5, scratch.data());
        std::vector<double> want = Clip(x, 2.5);
        std::vector<double> seen(got, got + d);
        ASSERT_EQ(seen, want) << "d=" << d << " r=" << r << " kind=" << kind;
        bool clean_inside = kind == 0 && r <= 1 - 1e-5;
        if (clean_inside) {
          EXPECT_EQ(got, x.data()) << "d=" << d << " r=" << r;
          in_place++;
        }
        if (kind != 0) {
          EXPECT_EQ(got, scratch.data()) << "d=" << d << " r=" << r;
        }
      }
    }
  }
  EXPECT_EQ(in_place, 6 * 3);
}

// NaN entries become 0 (and the rest of the row is treated normally).
TEST(ClipRow, NaNBecomesZero) {
  EXPECT_EQ(Clip({kNaN, 0.5, -0.25}, 1.0), (std::vector<double>{0.0, 0.5, -0.25}));
  EXPECT_EQ(Clip({kNaN, kNaN}, 1.0), (std::vector<double>{0.0, 0.0}));
  // NaN next to a large entry: zero, then the rest is clipped to [0, 0, 2].
  EXPECT_EQ(Clip({kNaN, 0.0, 10.0}, 2.0)[0], 0.0);
  EXPECT_NEAR(Clip({kNaN, 0.0, 10.0}, 2.0)[2], 2.0, 1e-14);
}

// Infinite entries: the row becomes feature_bound times the normalised
// vector of their signs, finite entries 0: [inf, 1, -inf] with bound 2 gives
// [sqrt 2, 0, -sqrt 2].
TEST(ClipRow, InfinitiesBecomeSignVectorOnSphere) {
  // (Tolerances 1e-14: the core aims (d + 8) eps under the bound.)
  std::vector<double> y = Clip({kInf, 1.0, -kInf}, 2.0);
  EXPECT_NEAR(y[0], std::sqrt(2.0), 1e-14);
  EXPECT_EQ(y[1], 0.0);
  EXPECT_NEAR(y[2], -std::sqrt(2.0), 1e-14);
  y = Clip({-kInf}, 3.0);
  EXPECT_NEAR(y[0], -3.0, 1e-14);
  y = Clip({0.5, kInf, kNaN, kInf, -kInf, 1e300}, 1.0);
  EXPECT_EQ(y[0], 0.0);
  EXPECT_NEAR(y[1], 1 / std::sqrt(3.0), 1e-14);
  EXPECT_EQ(y[2], 0.0);
  EXPECT_NEAR(y[3], 1 / std::sqrt(3.0), 1e-14);
  EXPECT_NEAR(y[4], -1 / std::sqrt(3.0), 1e-14);
  EXPECT_EQ(y[5], 0.0);
  EXPECT_LE(Norm(y), 1.0L);
}

// Huge finite entries (1e300, DBL_MAX) do not overflow: the row ends on the
// sphere pointing in its own direction.
TEST(ClipRow, HugeFiniteValuesDoNotOverflow) {
  std::vector<double> y = Clip({1e300, -2e300, 0.0}, 1.0);
  for (double v : y) ASSERT_TRUE(std::isfinite(v));
  EXPECT_NEAR(y[0], 1 / std::sqrt(5.0), 1e-14);
  EXPECT_NEAR(y[1], -2 / std::sqrt(5.0), 1e-14);
  EXPECT_EQ(y[2], 0.0);
  EXPECT_LE(Norm(y), 1.0L);
  EXPECT_GT(Norm(y), 1.0L - 1e-14L);

  const double big = std::numeric_limits<double>::max();
  y = Clip({big, big, -big, big}, 4.0);
  for (double v : y) ASSERT_TRUE(std::isfinite(v));
  EXPECT_NEAR(y[0], 2.0, 1e-14);
  EXPECT_NEAR(y[2], -2.0, 1e-14);
  EXPECT_LE(Norm(y), 4.0L);

  // A huge entry dominates tiny ones without losing them to underflow: the
  // direction of [1e300, 1e299] is [10, 1]/sqrt(101).
  y = Clip({1e300, 1e299}, 1.0);
  EXPECT_NEAR(y[0], 10 / std::sqrt(101.0), 1e-14);
  EXPECT_NEAR(y[1], 1 / std::sqrt(101.0), 1e-14);
}

// Tiny values (whose squares underflow) are kept as they are.
TEST(ClipRow, TinyValuesUnchanged) {
  std::vector<double> x = {1e-300, -3e-310, 0.0};
  EXPECT_EQ(Clip(x, 1.0), x);
  x = {0.0, 0.0};
  EXPECT_EQ(Clip(x, 1.0), x);
}

// LogisticLabel: values > 0 are +1, everything else (0, negatives, NaN,
// -inf) is -1.
TEST(LogisticLabel, SignRule) {
  EXPECT_EQ(dperm::LogisticLabel(1.0), 1.0);
  EXPECT_EQ(dperm::LogisticLabel(0.3), 1.0);
  EXPECT_EQ(dperm::LogisticLabel(1e-300), 1.0);
  EXPECT_EQ(dperm::LogisticLabel(kInf), 1.0);
  EXPECT_EQ(dperm::LogisticLabel(0.0), -1.0);
  EXPECT_EQ(dperm::LogisticLabel(-0.0), -1.0);
  EXPECT_EQ(dperm::LogisticLabel(-2.0), -1.0);
  EXPECT_EQ(dperm::LogisticLabel(-kInf), -1.0);
  EXPECT_EQ(dperm::LogisticLabel(kNaN), -1.0);
}

// HuberTarget: NaN -> 0, values outside [-B, B] (+-inf included) clamped to
// +-B for the largest B the option allows (1e150) and for B = 1 (the
// default), ordinary values unchanged.
TEST(HuberTarget, SanitisesAndClamps) {
  EXPECT_EQ(dperm::HuberTarget(kNaN, 1e150), 0.0);
  EXPECT_EQ(dperm::HuberTarget(kInf, 1e150), 1e150);
  EXPECT_EQ(dperm::HuberTarget(-kInf, 1e150), -1e150);
  EXPECT_EQ(dperm::HuberTarget(1e200, 1e150), 1e150);
  EXPECT_EQ(dperm::HuberTarget(-1e151, 1e150), -1e150);
  EXPECT_EQ(dperm::HuberTarget(1e150, 1e150), 1e150);
  EXPECT_EQ(dperm::HuberTarget(2.5, 1e150), 2.5);
  EXPECT_EQ(dperm::HuberTarget(-7e10, 1e150), -7e10);
  EXPECT_EQ(dperm::HuberTarget(0.0, 1e150), 0.0);
  EXPECT_EQ(dperm::HuberTarget(kNaN, 1), 0.0);
  EXPECT_EQ(dperm::HuberTarget(kInf, 1), 1.0);
  EXPECT_EQ(dperm::HuberTarget(-kInf, 1), -1.0);
  EXPECT_EQ(dperm::HuberTarget(2.5, 1), 1.0);
  EXPECT_EQ(dperm::HuberTarget(-7e10, 1), -1.0);
  EXPECT_EQ(dperm::HuberTarget(0.25, 1), 0.25);
  EXPECT_EQ(dperm::HuberTarget(-1, 1), -1.0);
  EXPECT_EQ(dperm::HuberTarget(0.25, 0.2), 0.2);
}

}  // namespace
