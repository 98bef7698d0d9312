// Unit tests of streaming training (streaming.hpp): the per-row pass sums equal
// the in-memory objective's sums, and a seeded streaming release equals the
// in-memory one (same mechanism code, one pass per gradient), for every
// loss and every streamable algorithm; the spec round-trips and bad specs
// are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "dperm/release/streaming.hpp"
#include "dperm/rows/rows.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"
#include "dperm/rows/row_parts.hpp"

namespace {

using dperm::Algorithm;
using dperm::LossKind;
using dperm::Options;
using dperm::PassSpec;
using dperm::Plan;

// Rows of stride d + 1 as the in-memory aggregate stores them: clipped
// features, then the stored label.
std::vector<double> MakeRows(LossKind loss, int n, int d, int classes, double bound) {
  std::vector<double> rows(static_cast<size_t>(n) * (d + 1));
  std::vector<double> raw(d);
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < d; j++) raw[j] = 1.7 * std::sin(0.37 * i + 1.3 * j) + (j == 0 ? 0.2 : 0);
    double* row = &rows[static_cast<size_t>(i) * (d + 1)];
    dperm::ClipRow(raw.data(), d, bound, row);
    double s = std::sin(0.37 * i) + std::cos(1.1 * i);
    if (loss == LossKind::kLogistic) row[d] = dperm::LogisticLabel(s);
    else if (loss == LossKind::kHuber) row[d] = dperm::HuberTarget(3 * s, Options().target_bound);
    else row[d] = i % classes;
  }
  return rows;
}

// A pass over rows held in memory, through PassAddRow.
class MemoryRunner final : public dperm::PassRunner {
 public:
  MemoryRunner(const std::vector<double>& rows, int n) : rows_(rows), n_(n) {}
  void Run(const PassSpec& spec, const Eigen::VectorXd& w, double* state) override {
    scratch_.resize(size_t(std::max(spec.classes, 1)));
    for (int i = 0; i < n_; i++) {
      const double* row = &rows_[static_cast<size_t>(i) * (spec.d + 1)];
      dperm::PassAddRow(spec, w.data(), row, row[spec.d], state, scratch_.data());
    }
  }

 private:
  const std::vector<double>& rows_;
  int n_;
  std::vector<double> scratch_;
};

// Row i of the rows the raw-row tests add (d features into x): inside the
// bound, near it, above it and at 1e300 in turn, with a NaN and a -inf now
// and then; and its stored label for `loss`.
void HostileRow(int64_t i, int d, double* x) {
  const double scale = i % 4 == 0 ? 0.05 : i % 4 == 1 ? 0.3 : i % 4 == 2 ? 3 : 1e300;
  for (int j = 0; j < d; j++) x[j] = scale * std::sin(0.7 * double(i) + 1.9 * j);
  if (i % 5 == 1) x[i % d] = NAN;
  if (i % 7 == 3) x[(i + 2) % d] = -std::numeric_limits<double>::infinity();
}
double HostileLabel(LossKind loss, int64_t i, int classes) {
  return loss == LossKind::kSoftmax ? double(i % classes)
         : loss == LossKind::kHuber ? std::cos(double(i))
                                    : (i % 3 ? 1.0 : -1.0);
}

Options Opts(Algorithm a, double delta, double l2, int classes, int64_t iterations) {
  Options o;
  o.epsilon = 1;
  o.delta = delta;
  o.l2 = l2;
  o.algorithm = a;
  o.has_algorithm = true;
  o.classes = classes;
  o.iterations = iterations;
  o.seed = 11;
  o.has_seed = true;
  return o;
}

struct Case {
  LossKind loss;
  Algorithm algorithm;
  double delta;
  double l2;
  int64_t iterations;
};

TEST(Pass, StreamingEqualsInMemory) {
  const int n = 500, d = 4;
  const Case cases[] = {
      {LossKind::kLogistic, Algorithm::kOutputGd, 0, 0.05, 0},
      {LossKind::kLogistic, Algorithm::kOutputGd, 0, 0, 30},
      {LossKind::kLogistic, Algorithm::kDpGd, 1e-6, 0, 40},
      {LossKind::kHuber, Algorithm::kOutputGd, 0, 0.05, 0},
      {LossKind::kHuber, Algorithm::kDpGd, 1e-6, 0.01, 40},
      {LossKind::kHuber, Algorithm::kDpAccmd, 1e-6, 0, 20},
      {LossKind::kSoftmax, Algorithm::kOutputGd, 0, 0.05, 0},
      {LossKind::kSoftmax, Algorithm::kDpGd, 1e-6, 0, 30},
      {LossKind::kLogistic, Algorithm::kDpNewton, 1e-6, 0, 0},
      {LossKind::kLogistic, Algorithm::kDpNewton, 1e-6, 0.01, 3},
  };
  for (const Case& c : cases) {
    int classes = c.loss == LossKind::kSoftmax ? 3 : 0;
    Options o = Opts(c.algorithm, c.delta, c.l2, classes, c.iterations);
    Plan plan = dperm::PlanRelease(o, c.loss, n, d);
    std::vector<double> rows = MakeRows(c.loss, n, d, classes, o.feature_bound);
    dperm::SecureRng rng_mem = dperm::SecureRng::FromSeed(o.seed);
    std::vector<double> w_mem = dperm::TrainModel(plan, rows.data(), rng_mem);
    MemoryRunner runner(rows, n);
    dperm::SecureRng rng_str = dperm::SecureRng::FromSeed(o.seed);
    int64_t passes = 0;
    std::vector<double> w_str = dperm::TrainStreaming(plan, runner, rng_str, &passes);
    ASSERT_EQ(w_mem.size(), w_str.size());
    // Margins and class scores are FourSumDot's on both sides
    // (row_kernels.hpp): the same model bits.
    for (size_t j = 0; j < w_mem.size(); j++)
      EXPECT_EQ(w_mem[j], w_str[j]) << dperm::AlgorithmName(c.algorithm) << " "
                                    << dperm::LossName(c.loss) << " coordinate " << j;
    EXPECT_EQ(passes, plan.iterations) << "one pass per full-batch gradient";
  }
}

// A curvature pass (dp_newton's) sums exactly the in-memory objective's
// packed sums: row by row, through PassAddRecords on any number of parts,
// and combined from two partial states; with and without an intercept; and
// the in-memory sums are the same on 1 and 2 threads.
TEST(Pass, CurvaturePassEqualsInMemorySums) {
  const int n = 30000, d = 5;
  for (bool intercept : {true, false}) {
    Options o = Opts(Algorithm::kDpNewton, 1e-6, 0, 0, 0);
    o.fit_intercept = intercept;
    Plan plan = dperm::PlanRelease(o, LossKind::kLogistic, n, d);
    std::vector<double> rows = MakeRows(LossKind::kLogistic, n, d, 0, o.feature_bound);
    std::unique_ptr<dperm::Objective> mem = dperm::MakeObjective(plan, rows.data());
    Eigen::VectorXd w = Eigen::VectorXd::LinSpaced(plan.dim, -0.8, 1.1);
    const double gamma = 0.75, grid = std::ldexp(1.0, -44);
    Eigen::VectorXd expected = mem->CurvatureSums(w, gamma, grid);
    PassSpec spec = dperm::PassSpecFor(plan);
    spec.with_loss = false;
    spec.curvature_weight = gamma;
    spec.sum_grid = grid;
    spec.sum_inv = 1 / grid;
    ASSERT_EQ(spec.sums(), expected.size());
    ASSERT_EQ(dperm::PassStateSize(spec), 4 + 2 * (plan.dim + plan.dim * (plan.dim + 1) / 2));
    // Row by row, in two halves combined.
    const int size = dperm::PassStateSize(spec);
    std::vector<double> a(size, 0.0), b(size, 0.0), scratch(1);
    dperm::PassInitState(a.data());
    dperm::PassInitState(b.data());
    for (int i = 0; i < n; i++) {
      const double* row = &rows[size_t(i) * (d + 1)];
      dperm::PassAddRow(spec, w.data(), row, row[d], i < n / 3 ? a.data() : b.data(),
                        scratch.data());
    }
    ASSERT_TRUE(dperm::PassCombine(a.data(), b.data(), size));
    std::vector<double> got(size_t(spec.sums()));
    dperm::PassStateSums(spec, a.data(), got.data());
    for (int j = 0; j < spec.sums(); j++)
      EXPECT_EQ(got[size_t(j)], expected(j)) << "intercept " << intercept << " sum " << j;
    // PassAddRecords (the spill's pass) on 1 and 2 threads.
    for (int threads : {1, 2}) {
      dperm::SetRowThreadLimit(threads);
      EXPECT_EQ(dperm::RowParts(n, uint64_t(spec.sums()) + 8), threads);
      std::vector<double> state(size, 0.0);
      dperm::PassInitState(state.data());
      dperm::PassAddRecords(spec, w.data(), rows.data(), n, state.data());
      std::vector<double> recs(size_t(spec.sums()));
      dperm::PassStateSums(spec, state.data(), recs.data());
      for (int j = 0; j < spec.sums(); j++) EXPECT_EQ(recs[size_t(j)], expected(j)) << threads;
      // The in-memory sums on as many threads: the same integers.
      EXPECT_EQ(dperm::RowParts(n, uint64_t(spec.sums())), threads);
      Eigen::VectorXd split = mem->CurvatureSums(w, gamma, grid);
      for (int j = 0; j < spec.sums(); j++) EXPECT_EQ(split(j), expected(j)) << threads;
    }
    dperm::SetRowThreadLimit(1);
  }
}

TEST(Pass, SpecRoundTripsAndRejectsBadValues) {
  PassSpec s;
  s.loss = LossKind::kSoftmax;
  s.d = 7;
  s.classes = 4;
  s.fit_intercept = false;
  s.feature_bound = 2.5;
  s.huber_delta = 0.5;
  s.target_bound = 7.5;
  s.sum_grid = std::ldexp(1.0, -40);
  double v[dperm::kPassSpecSize];
  dperm::EncodePassSpec(s, v);
  PassSpec back;
  ASSERT_TRUE(dperm::DecodePassSpec(v, dperm::kPassSpecSize, &back));
  EXPECT_EQ(back.d, 7);
  EXPECT_EQ(back.classes, 4);
  EXPECT_EQ(back.dim(), 28);
  EXPECT_EQ(back.huber_delta, 0.5);
  EXPECT_EQ(back.target_bound, 7.5);
  EXPECT_EQ(back.sum_grid, s.sum_grid);
  EXPECT_FALSE(dperm::DecodePassSpec(v, dperm::kPassSpecSize - 1, &back));
  EXPECT_TRUE(back.with_loss);
  s.with_loss = false;
  dperm::EncodePassSpec(s, v);
  ASSERT_TRUE(dperm::DecodePassSpec(v, dperm::kPassSpecSize, &back));
  EXPECT_FALSE(back.with_loss);
  EXPECT_EQ(back.curvature_weight, 0);
  EXPECT_EQ(back.sums(), back.dim());
  static_assert(dperm::kPassSpecSize == 10, "the specs below list every field");
  double good[dperm::kPassSpecSize] = {1, 3, 1, 1, 1, 0, 1, 0, -45, 0};  // Huber, d = 3
  EXPECT_TRUE(dperm::DecodePassSpec(good, dperm::kPassSpecSize, &back));
  EXPECT_EQ(back.sum_grid, std::ldexp(1.0, -45));
  EXPECT_EQ(back.sum_inv, std::ldexp(1.0, 45));
  double bad[dperm::kPassSpecSize] = {0, 3, 1, 1, 1, 2, 1, 1, -45, 0};  // logistic with classes
  EXPECT_FALSE(dperm::DecodePassSpec(bad, dperm::kPassSpecSize, &back));
  double nan[dperm::kPassSpecSize] = {0, NAN, 1, 1, 1, 0, 1, 1, -45, 0};
  EXPECT_FALSE(dperm::DecodePassSpec(nan, dperm::kPassSpecSize, &back));
  double neg[dperm::kPassSpecSize] = {1, 3, 1, -1, 1, 0, 1, 1, -45, 0};
  EXPECT_FALSE(dperm::DecodePassSpec(neg, dperm::kPassSpecSize, &back));
  double no_bound[dperm::kPassSpecSize] = {1, 3, 1, 1, 1, 0, 0, 1, -45, 0};  // target_bound 0
  EXPECT_FALSE(dperm::DecodePassSpec(no_bound, dperm::kPassSpecSize, &back));
  double half_loss[dperm::kPassSpecSize] = {1, 3, 1, 1, 1, 0, 1, 0.5, -45, 0};  // with_loss 0 or 1
  EXPECT_FALSE(dperm::DecodePassSpec(half_loss, dperm::kPassSpecSize, &back));
  // The sums' grid is a power of two given by an integer exponent in range.
  double half_grid[dperm::kPassSpecSize] = {1, 3, 1, 1, 1, 0, 1, 0, -45.5, 0};
  EXPECT_FALSE(dperm::DecodePassSpec(half_grid, dperm::kPassSpecSize, &back));
  double tiny_grid[dperm::kPassSpecSize] = {1, 3, 1, 1, 1, 0, 1, 0, -1074, 0};
  EXPECT_FALSE(dperm::DecodePassSpec(tiny_grid, dperm::kPassSpecSize, &back));
  // A curvature pass: a positive weight, a margin loss, no loss sum, and
  // PackedCount(dim) sums.
  double curvature[dperm::kPassSpecSize] = {0, 3, 1, 1, 1, 0, 1, 0, -45, 2.5};
  ASSERT_TRUE(dperm::DecodePassSpec(curvature, dperm::kPassSpecSize, &back));
  EXPECT_EQ(back.curvature_weight, 2.5);
  EXPECT_EQ(back.sums(), 4 + 10);
  EXPECT_EQ(dperm::PassStateSize(back), 4 + 2 * 14);
  double curvature_loss[dperm::kPassSpecSize] = {0, 3, 1, 1, 1, 0, 1, 1, -45, 2.5};
  EXPECT_FALSE(dperm::DecodePassSpec(curvature_loss, dperm::kPassSpecSize, &back));
  double curvature_softmax[dperm::kPassSpecSize] = {2, 3, 1, 1, 1, 3, 1, 0, -45, 2.5};
  EXPECT_FALSE(dperm::DecodePassSpec(curvature_softmax, dperm::kPassSpecSize, &back));
  double curvature_neg[dperm::kPassSpecSize] = {0, 3, 1, 1, 1, 0, 1, 0, -45, -1};
  EXPECT_FALSE(dperm::DecodePassSpec(curvature_neg, dperm::kPassSpecSize, &back));
  double curvature_wide[dperm::kPassSpecSize] = {0, 512, 1, 1, 1, 0, 1, 0, -45, 1};  // dim 513
  EXPECT_FALSE(dperm::DecodePassSpec(curvature_wide, dperm::kPassSpecSize, &back));
  curvature_wide[2] = 0;  // dim 512, dp_newton's cap
  EXPECT_TRUE(dperm::DecodePassSpec(curvature_wide, dperm::kPassSpecSize, &back));
}

// A pass with the loss sums what the in-memory objective's LossValue does; a
// gradient-only pass leaves the loss sum 0 and sums the same gradient.
TEST(Pass, GradientOnlyPassSkipsTheLoss) {
  const int n = 300, d = 4;
  for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber, LossKind::kSoftmax}) {
    int classes = loss == LossKind::kSoftmax ? 3 : 0;
    Options o = Opts(Algorithm::kOutputGd, 0, 0.05, classes, 5);
    Plan plan = dperm::PlanRelease(o, loss, n, d);
    std::vector<double> rows = MakeRows(loss, n, d, classes, o.feature_bound);
    std::unique_ptr<dperm::Objective> mem = dperm::MakeObjective(plan, rows.data());
    Eigen::VectorXd w = Eigen::VectorXd::LinSpaced(plan.dim, -0.5, 0.7);
    PassSpec spec = dperm::PassSpecFor(plan);
    MemoryRunner runner(rows, n);
    std::vector<double> with(dperm::PassStateSize(spec)), without(with.size());
    dperm::PassInitState(with.data());
    dperm::PassInitState(without.data());
    spec.with_loss = true;
    runner.Run(spec, w, with.data());
    spec.with_loss = false;
    runner.Run(spec, w, without.data());
    ASSERT_TRUE(dperm::PassStateValid(with.data(), int(with.size())));
    EXPECT_NEAR(with[3] / n, mem->LossValue(w), 1e-12) << dperm::LossName(loss);
    EXPECT_GT(with[3], 0) << dperm::LossName(loss);
    EXPECT_EQ(without[3], 0) << dperm::LossName(loss);
    Eigen::VectorXd g = mem->LossGradient(w);
    std::vector<double> g_with(plan.dim), g_without(plan.dim);
    dperm::PassStateSums(spec, with.data(), g_with.data());
    dperm::PassStateSums(spec, without.data(), g_without.data());
    for (int j = 0; j < plan.dim; j++) {
      EXPECT_EQ(g_with[j], g_without[j]);
      EXPECT_NEAR(g_without[j] / n, g[j], 1e-12) << dperm::LossName(loss) << " " << j;
    }
  }
}

// PassAddRawRow (the transition's step on a row as read) sums exactly what
// ClipRow then PassAddRow sum, for rows inside the bound (read in place,
// margin fused with the clipping test), above it, with NaN and with an
// infinity, for every loss, with and without the loss sum.
TEST(Pass, RawRowEqualsClipThenAdd) {
  const int d = 9;
  for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber, LossKind::kSoftmax}) {
    for (bool with_loss : {true, false}) {
      int classes = loss == LossKind::kSoftmax ? 3 : 0;
      Options o = Opts(Algorithm::kOutputGd, 0, 0.05, classes, 5);
      PassSpec spec = dperm::PassSpecFor(dperm::PlanRelease(o, loss, 100, d));
      spec.with_loss = with_loss;
      Eigen::VectorXd w = Eigen::VectorXd::LinSpaced(spec.dim(), -0.5, 0.7);
      std::vector<double> a(dperm::PassStateSize(spec)), b(a.size());
      std::vector<double> x(d), clipped(d), scratch(std::max(classes, 1));
      for (int i = 0; i < 40; i++) {
        HostileRow(i, d, x.data());
        double label = HostileLabel(loss, i, classes);
        dperm::PassAddRawRow(spec, w.data(), x.data(), label, a.data(), clipped.data(),
                             scratch.data());
        dperm::ClipRow(x.data(), d, spec.feature_bound, clipped.data());
        dperm::PassAddRow(spec, w.data(), clipped.data(), label, b.data(), scratch.data());
      }
      EXPECT_EQ(a[0], 40);
      for (size_t k = 0; k < a.size(); k++)
        EXPECT_NEAR(a[k], b[k], 1e-12 * (1 + std::fabs(b[k])))
            << dperm::LossName(loss) << " " << with_loss << " " << k;
    }
  }
}

// PassAddRecords (a streaming pass over the rows kept in a temporary file:
// clipped rows and labels) gives the gradient sums of one PassAddRow call
// per record, exactly, on 1, 2 and 3 threads: enough rows that RowParts
// splits them, rows clipped from inside and outside the bound, NaN and
// infinities, every loss, gradient-only (binary models: the block kernels)
// and with the loss (row by row).
TEST(Pass, RecordsEqualRowByRowOnAnyThreads) {
  const int d = 5;
  const int64_t m = 90000;
  for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber, LossKind::kSoftmax}) {
    for (bool with_loss : {false, true}) {
      int classes = loss == LossKind::kSoftmax ? 3 : 0;
      Options o = Opts(Algorithm::kOutputGd, 0, 0.05, classes, 5);
      PassSpec spec = dperm::PassSpecFor(dperm::PlanRelease(o, loss, m, d));
      spec.with_loss = with_loss;
      Eigen::VectorXd w = Eigen::VectorXd::LinSpaced(spec.dim(), -0.5, 0.7);
      std::vector<double> records(static_cast<size_t>(m) * (d + 1)), raw(d);
      for (int64_t i = 0; i < m; i++) {
        double* r = &records[static_cast<size_t>(i) * (d + 1)];
        HostileRow(i, d, raw.data());
        dperm::ClipRow(raw.data(), d, spec.feature_bound, r);
        r[d] = HostileLabel(loss, i, classes);
      }
      const size_t size = size_t(dperm::PassStateSize(spec));
      std::vector<double> one(size, 0.0), scratch(std::max(classes, 1));
      dperm::PassInitState(one.data());
      for (int64_t i = 0; i < m; i++) {
        const double* r = &records[static_cast<size_t>(i) * (d + 1)];
        dperm::PassAddRow(spec, w.data(), r, r[d], one.data(), scratch.data());
      }
      std::vector<double> expected(static_cast<size_t>(spec.dim()));
      dperm::PassStateSums(spec, one.data(), expected.data());
      for (int threads : {1, 2, 3}) {
        dperm::SetRowThreadLimit(threads);
        EXPECT_EQ(dperm::RowParts(m, uint64_t(spec.dim()) + 8), threads);
        std::vector<double> state(size, 0.0), got(expected.size());
        dperm::PassInitState(state.data());
        dperm::PassAddRecords(spec, w.data(), records.data(), m, state.data());
        EXPECT_TRUE(dperm::PassStateValid(state.data(), int(size)));
        EXPECT_EQ(state[0], double(m));
        dperm::PassStateSums(spec, state.data(), got.data());
        for (size_t k = 0; k < got.size(); k++)
          EXPECT_EQ(got[k], expected[k]) << dperm::LossName(loss) << " with_loss " << with_loss
                                         << " threads " << threads << " " << k;
        EXPECT_NEAR(state[3], one[3], 1e-9 * (1 + std::fabs(one[3])));
        if (with_loss) {
          EXPECT_NE(state[3], 0);
        }
      }
      dperm::SetRowThreadLimit(1);
    }
  }
}

// A streaming plan has no intercept offset (named algorithm or default), so
// output_gd's default T uses the unshifted bound on ||w_hat||: an options
// object from SQL (intercept_offset on) plans as one without it, and never
// more passes than the in-memory output_gd with the offset.
TEST(Pass, StreamingDefaultHasNoOffset) {
  for (int64_t n : {45211, 10000000}) {
    Options o;
    o.epsilon = 1;
    o.l2 = 0.1;
    o.intercept_offset = true;
    Plan with = dperm::PlanStreamingRelease(o, LossKind::kLogistic, n, 42);
    EXPECT_EQ(with.algorithm, Algorithm::kOutputGd);
    EXPECT_FALSE(with.options.intercept_offset);
    EXPECT_EQ(with.offset.epsilon, 0);
    o.intercept_offset = false;
    EXPECT_EQ(dperm::PlanStreamingRelease(o, LossKind::kLogistic, n, 42).iterations,
              with.iterations);
    o.intercept_offset = true;
    o.algorithm = Algorithm::kOutputGd;
    o.has_algorithm = true;
    Plan in_memory = dperm::PlanRelease(o, LossKind::kLogistic, n, 42);
    EXPECT_GT(in_memory.offset.epsilon, 0);
    EXPECT_LT(with.iterations, in_memory.iterations) << "n=" << n;
  }
}

TEST(Pass, DefaultsAndRefusals) {
  Options o;
  o.epsilon = 1;
  o.l2 = 0.1;  // in memory: n l2 = 100, objective (pure)
  o.has_algorithm = false;
  EXPECT_EQ(dperm::PlanRelease(o, LossKind::kLogistic, 1000, 3).algorithm, Algorithm::kObjective);
  EXPECT_EQ(dperm::PlanRelease(o, LossKind::kLogistic, 1001, 3).algorithm, Algorithm::kBolton);
  EXPECT_EQ(dperm::PlanStreamingRelease(o, LossKind::kLogistic, 1000, 3).algorithm,
            Algorithm::kOutputGd);
  o.algorithm = Algorithm::kDpSgd;
  o.has_algorithm = true;
  o.delta = 1e-6;
  EXPECT_THROW(dperm::PlanStreamingRelease(o, LossKind::kLogistic, 1000, 3), dperm::Error);
}

}  // namespace
