// Unit tests of the per-row kernels (row_kernels.hpp): the margins and the
// rounded exact-sum contributions are the same bits with AVX2 and without,
// the margins keep FourSumDot's order (which a plain left-to-right sum does
// not reproduce on these rows, so the test can tell the orders apart),
// ExactSum's batched path equals row-by-row addition across its flush
// window, and an in-memory exact gradient equals the streaming pass's sums
// bit for bit (both read margins through FourSumDot).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "dperm/losses/loss.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/streaming.hpp"
#include "dperm/release/train_model.hpp"
#include "dperm/rows/exact_sum.hpp"
#include "dperm/rows/row_kernels.hpp"
#include "dperm/rows/rows.hpp"

namespace {

using dperm::RowIsa;

// Rows of widely spread magnitudes (so the order of a sum shows in its last
// bits), `stride` apart.
std::vector<double> SpreadRows(int64_t n, int d, int64_t stride, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_int_distribution<int> exponent(-30, 3);
  std::vector<double> rows(size_t(n * stride), 7.0);  // 7: padding the kernels must not read
  for (int64_t i = 0; i < n; i++)
    for (int j = 0; j < d; j++)
      rows[size_t(i * stride + j)] = std::ldexp(normal(gen), exponent(gen));
  return rows;
}

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(RowKernels, MarginsAreFourSumDotWithAndWithoutAvx2) {
  if (dperm::BestRowIsa() != RowIsa::kAvx2)
    GTEST_LOG_(INFO) << "this CPU has no AVX2: the portable kernel only";
  int order_visible = 0;
  for (int d : {1, 3, 4, 5, 8, 9, 42, 43, 50}) {
    for (int64_t count : {1, 3, 4, 7, 101}) {
      for (bool intercept : {false, true}) {
        const int64_t stride = d + 1 + (count % 2);
        const std::vector<double> rows = SpreadRows(count, d, stride, uint64_t(d * 1000 + count));
        const std::vector<double> w = SpreadRows(1, d + 1, d + 1, 99);
        std::vector<double> portable(static_cast<size_t>(count)), avx2 = portable;
        dperm::RowMargins(rows.data(), stride, count, d, w.data(), intercept, portable.data(),
                          RowIsa::kPortable);
        dperm::RowMargins(rows.data(), stride, count, d, w.data(), intercept, avx2.data(),
                          RowIsa::kAvx2);
        for (int64_t i = 0; i < count; i++) {
          const double* x = rows.data() + i * stride;
          double expect = dperm::FourSumDot(w.data(), x, d);
          double plain = 0;
          for (int j = 0; j < d; j++) plain += w[size_t(j)] * x[j];
          if (intercept) {
            expect += w[size_t(d)];
            plain += w[size_t(d)];
          }
          EXPECT_TRUE(SameBits(portable[size_t(i)], expect)) << d << " " << count << " " << i;
          EXPECT_TRUE(SameBits(avx2[size_t(i)], expect)) << d << " " << count << " " << i;
          order_visible += !SameBits(plain, expect);
        }
      }
    }
  }
  EXPECT_GT(order_visible, 100) << "the rows should tell a left-to-right sum from FourSumDot";
}

TEST(RowKernels, RoundedRowsAndLimbsAreTheSameIntegersWithAndWithoutAvx2) {
  const double q = dperm::SumGrid(1.0), inv = 1 / q;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (int d : {1, 2, 3, 4, 5, 8, 42, 43}) {
    for (int64_t count : {1, 3, 4, 8, 37}) {  // the AVX2 kernel's groups of 4 rows and the rest
      const int64_t stride = d + 2;
      std::vector<double> rows = SpreadRows(count, d, stride, uint64_t(d));
      std::vector<double> c = SpreadRows(count, 1, 1, uint64_t(d + 50));
      // Contributions the clamp and the NaN rule decide.
      rows[0] = nan;
      if (count > 2) {
        rows[size_t(stride)] = inf;
        rows[size_t(2 * stride + d - 1)] = -1e300;
      }
      if (count > 5) {
        c[3] = nan;
        c[4] = 1e300;
        c[5] = -0.0;
      }
      for (bool intercept : {false, true}) {
        std::vector<int64_t> portable(size_t(d + 1), 5), avx2 = portable, expect = portable;
        dperm::AddRoundedRows(portable.data(), c.data(), inv, rows.data(), stride, count, d,
                              intercept, RowIsa::kPortable);
        dperm::AddRoundedRows(avx2.data(), c.data(), inv, rows.data(), stride, count, d, intercept,
                              RowIsa::kAvx2);
        for (int64_t i = 0; i < count; i++) {
          const double s = c[size_t(i)] * inv;
          for (int j = 0; j < d; j++)
            expect[size_t(j)] += dperm::RoundToGridInt(s * rows[size_t(i * stride + j)]);
          if (intercept) expect[size_t(d)] += dperm::RoundToGridInt(s);
        }
        EXPECT_EQ(portable, expect) << d;
        EXPECT_EQ(avx2, expect) << d;
      }
      // The streaming state's limbs: the same integers as doubles.
      std::vector<double> lo_portable(size_t(d), 3.0), lo_avx2 = lo_portable,
                                                       lo_expect = lo_portable;
      for (int64_t i = 0; i < count; i++) {
        const double s = c[size_t(i)] * inv;
        const double* row = rows.data() + i * stride;
        dperm::AddRoundedLimbs(lo_portable.data(), s, row, d, RowIsa::kPortable);
        dperm::AddRoundedLimbs(lo_avx2.data(), s, row, d, RowIsa::kAvx2);
        for (int j = 0; j < d; j++) lo_expect[size_t(j)] += dperm::RoundToGrid(s * row[j]);
      }
      EXPECT_EQ(lo_portable, lo_expect) << d;
      EXPECT_EQ(lo_avx2, lo_expect) << d;
    }
  }
}

// The full pass's tiles (loss.hpp, FullPassTileRows) are whole groups of
// the kernels' 4 rows, and an exact gradient over rows of many tiles and a
// partial last one equals the row-by-row exact sum.
TEST(RowKernels, TiledGradientEqualsRowByRowExactSum) {
  for (Eigen::Index stride : {2, 5, 9, 43, 51, 300, 5000})
    EXPECT_EQ(dperm::FullPassTileRows(stride) % 4, 0) << stride;
  const dperm::LogisticLoss loss;
  for (int d : {3, 8, 42}) {
    const int64_t n = 1001, stride = d + 1;
    std::vector<double> rows = SpreadRows(n, d, stride, uint64_t(d + 300));
    for (int64_t i = 0; i < n; i++) rows[size_t(i * stride + d)] = i % 3 == 0 ? 1.0 : -1.0;
    const dperm::FeatureMap x(rows.data(), n, d, Eigen::OuterStride<>(stride));
    const dperm::LabelMap y(rows.data() + d, n, Eigen::InnerStride<>(stride));
    dperm::LinearObjective objective(loss, x, y, true, 0.0);
    const double q = dperm::SumGrid(8.0);
    objective.SetSumGrid(q);
    const Eigen::VectorXd w = Eigen::VectorXd::LinSpaced(d + 1, -0.7, 0.9);
    const Eigen::VectorXd g = objective.LossGradient(w);
    dperm::ExactSum expect(d + 1, q);
    for (int64_t i = 0; i < n; i++) {
      const double* row = rows.data() + i * stride;
      const double m = dperm::FourSumDot(w.data(), row, d) + w[d];
      expect.AddScaled(0, loss.Derivative(m, row[d]), row, d, true);
    }
    for (int j = 0; j <= d; j++)
      EXPECT_TRUE(SameBits(g[j], expect.Value(j) / double(n))) << "d " << d << " coordinate " << j;
  }
}

TEST(RowKernels, BatchedExactSumEqualsRowByRowAcrossTheFlushWindow) {
  // 70,000 rows of the largest contribution: past the 2^16 additions after
  // which the int64 partials move into the 128-bit totals.
  const int d = 3;
  const int64_t n = 70000, stride = d + 1;
  std::vector<double> rows(size_t(n * stride), 1.0);
  std::vector<double> c(size_t(n), 1.0);
  const double q = dperm::SumGrid(1.0);
  dperm::ExactSum batched(d + 1, q), single(d + 1, q);
  batched.AddScaled(0, 1.0, rows.data(), d, true);  // start mid-window
  single.AddScaled(0, 1.0, rows.data(), d, true);
  batched.AddScaledRows(0, c.data(), rows.data(), stride, n, d, true);
  for (int64_t i = 0; i < n; i++)
    single.AddScaled(0, c[size_t(i)], rows.data() + i * stride, d, true);
  for (int j = 0; j <= d; j++) {
    EXPECT_TRUE(batched.Units(j) == single.Units(j)) << j;
    EXPECT_TRUE(batched.Units(j) == __int128(n + 1) * (__int128(1) << 45)) << j;
  }
}

// The in-memory objective's exact gradient and the streaming pass's sums
// are the same integers: margins in FourSumDot's order on both sides.
TEST(RowKernels, InMemoryGradientEqualsTheStreamingPassBitForBit) {
  for (dperm::LossKind loss : {dperm::LossKind::kLogistic, dperm::LossKind::kHuber}) {
    for (int d : {4, 9, 42}) {
      const int n = 3000;
      dperm::Options o;
      o.epsilon = 1;
      o.delta = 1e-6;
      o.algorithm = dperm::Algorithm::kDpGd;
      o.has_algorithm = true;
      o.iterations = 5;
      const dperm::Plan plan = dperm::PlanRelease(o, loss, n, d);
      std::vector<double> rows = SpreadRows(n, d, d + 1, uint64_t(d + 7));
      for (int i = 0; i < n; i++) {
        double* row = rows.data() + size_t(i) * size_t(d + 1);
        std::vector<double> clipped(static_cast<size_t>(d));
        dperm::ClipRow(row, d, o.feature_bound, clipped.data());
        std::copy(clipped.begin(), clipped.end(), row);
        const double s = std::sin(0.37 * i) + std::cos(1.1 * i);
        row[d] = loss == dperm::LossKind::kLogistic ? dperm::LogisticLabel(s)
                                                    : dperm::HuberTarget(3 * s, o.target_bound);
      }
      const std::unique_ptr<dperm::Objective> mem = dperm::MakeObjective(plan, rows.data());
      const Eigen::VectorXd w = Eigen::VectorXd::LinSpaced(plan.dim, -0.9, 1.3);
      const Eigen::VectorXd g = mem->LossGradient(w);  // the exact sum / n
      dperm::PassSpec spec = dperm::PassSpecFor(plan);
      spec.with_loss = false;
      std::vector<double> state(size_t(dperm::PassStateSize(spec))), scratch(1);
      dperm::PassInitState(state.data());
      for (int i = 0; i < n; i++) {
        const double* row = rows.data() + size_t(i) * size_t(d + 1);
        dperm::PassAddRow(spec, w.data(), row, row[d], state.data(), scratch.data());
      }
      std::vector<double> streamed(size_t(plan.dim));
      dperm::PassStateSums(spec, state.data(), streamed.data());
      for (double& v : streamed) v /= double(n);
      for (int j = 0; j < plan.dim; j++)
        EXPECT_TRUE(SameBits(g[j], streamed[size_t(j)]))
            << dperm::LossName(loss) << " d " << d << " coordinate " << j << ": " << g[j] << " vs "
            << streamed[size_t(j)];
    }
  }
}

}  // namespace
