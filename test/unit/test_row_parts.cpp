// Unit tests of full passes split across threads (row_parts.hpp): every row
// is visited once whatever the split; the helper threads run with every
// signal blocked; an exception in any part reaches the caller after all
// threads are joined; small passes are not split; and the gradients of the
// logistic, Huber and softmax objectives are the same bits at 1, 2, 3 and 8
// threads (the exact sums do not depend on the split).
#include <gtest/gtest.h>

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "dperm/losses/loss.hpp"
#include "dperm/losses/softmax.hpp"
#include "dperm/rows/exact_sum.hpp"
#include "dperm/rows/row_parts.hpp"

namespace {

using dperm::ForRowParts;
using dperm::RowParts;
using dperm::SetRowThreadLimit;

// Restores the limit a test changed (1: the core's default).
struct ThreadLimit {
  explicit ThreadLimit(int threads) { SetRowThreadLimit(threads); }
  ~ThreadLimit() { SetRowThreadLimit(1); }
};

TEST(RowParts, EveryRowOnceInContiguousParts) {
  for (int parts : {1, 2, 3, 7}) {
    const int64_t n = 1001;
    std::vector<std::atomic<int>> seen(n);
    std::vector<int64_t> firsts(size_t(parts), -1), ends(size_t(parts), -1);
    ForRowParts(n, parts, [&](int part, int64_t begin, int64_t end) {
      firsts[size_t(part)] = begin;
      ends[size_t(part)] = end;
      for (int64_t i = begin; i < end; i++) seen[size_t(i)]++;
    });
    for (int64_t i = 0; i < n; i++) EXPECT_EQ(seen[size_t(i)].load(), 1) << "row " << i;
    EXPECT_EQ(firsts[0], 0);
    EXPECT_EQ(ends[size_t(parts - 1)], n);
    for (int p = 1; p < parts; p++) EXPECT_EQ(firsts[size_t(p)], ends[size_t(p - 1)]);
  }
}

TEST(RowParts, HelpersBlockEverySignalAndTheCallerKeepsItsMask) {
  sigset_t before, after;
  pthread_sigmask(SIG_SETMASK, nullptr, &before);
  std::vector<int> blocked(3, -1);
  std::vector<pthread_t> ids(3);
  ForRowParts(3, 3, [&](int part, int64_t, int64_t) {
    sigset_t mask;
    pthread_sigmask(SIG_SETMASK, nullptr, &mask);
    blocked[size_t(part)] = sigismember(&mask, SIGINT) && sigismember(&mask, SIGUSR1) &&
                            sigismember(&mask, SIGTERM) && sigismember(&mask, SIGALRM);
    ids[size_t(part)] = pthread_self();
  });
  EXPECT_TRUE(pthread_equal(ids[0], pthread_self()));  // part 0: the caller
  EXPECT_FALSE(pthread_equal(ids[1], pthread_self()));
  EXPECT_EQ(blocked[1], 1);
  EXPECT_EQ(blocked[2], 1);
  pthread_sigmask(SIG_SETMASK, nullptr, &after);
  EXPECT_EQ(sigismember(&after, SIGINT), sigismember(&before, SIGINT));
  EXPECT_EQ(sigismember(&after, SIGUSR1), sigismember(&before, SIGUSR1));
}

TEST(RowParts, AnExceptionReachesTheCallerAfterEveryPartRan) {
  for (int thrower : {0, 1, 2}) {
    std::atomic<int> finished{0};
    try {
      ForRowParts(300, 3, [&](int part, int64_t, int64_t) {
        if (part == thrower) throw std::runtime_error("part " + std::to_string(part));
        finished++;
      });
      ADD_FAILURE() << "no exception from part " << thrower;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "part " + std::to_string(thrower));
    }
    EXPECT_EQ(finished.load(), 2);  // joined: the other parts are done
  }
}

TEST(RowParts, SmallPassesAndTheDefaultLimitUseOneThread) {
  EXPECT_EQ(RowParts(int64_t(1) << 30, 100), 1);  // the core's limit is 1 until set
  ThreadLimit limit(4);
  EXPECT_EQ(RowParts(1000, 18), 1);  // 18,000 units: far below a part's worth
  EXPECT_EQ(RowParts(int64_t(dperm::kMinPartWork) * 2, 1), 2);
  EXPECT_EQ(RowParts(int64_t(1) << 30, 100), 4);  // never above the limit
  EXPECT_EQ(RowParts(0, 100), 1);
}

// Rows uniform in the unit ball's cube corner, labels +-1 (or classes 0..2).
std::vector<double> Rows(int64_t n, int d, bool classes) {
  std::mt19937_64 gen(11);
  std::uniform_real_distribution<double> u(-0.3, 0.3);
  std::vector<double> rows(size_t(n) * size_t(d + 1));
  for (int64_t i = 0; i < n; i++) {
    for (int k = 0; k < d; k++) rows[size_t(i * (d + 1) + k)] = u(gen);
    rows[size_t(i * (d + 1) + d)] = classes ? double(gen() % 3) : (gen() & 1 ? 1.0 : -1.0);
  }
  return rows;
}

bool SameBits(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * size_t(a.size())) == 0;
}

// The gradient at `threads` threads, on a pass large enough to be split.
template <typename MakeObjective>
void ExpectSameGradientAtEveryThreadCount(MakeObjective make, int d) {
  SetRowThreadLimit(1);
  const auto f = make();
  Eigen::VectorXd w = Eigen::VectorXd::LinSpaced(f->dim(), -0.7, 0.9);
  const Eigen::VectorXd one = f->LossGradient(w);
  for (int threads : {2, 3, 8}) {
    ThreadLimit limit(threads);
    ASSERT_GT(RowParts(f->n(), 2 * uint64_t(d + 1)), 1) << "the pass is not split";
    EXPECT_TRUE(SameBits(f->LossGradient(w), one)) << threads << " threads";
  }
  // Without the grid (the reference solvers' float sums) the gradient is the
  // same function: within rounding of the exact one.
  f->SetSumGrid(0);
  const Eigen::VectorXd floats = f->LossGradient(w);
  EXPECT_FALSE(SameBits(floats, one));  // another sum: the test could tell
  EXPECT_LT((one - floats).norm(), 1e-9);
}

TEST(RowParts, LogisticHuberAndSoftmaxGradientsAreTheSameBitsAtEveryThreadCount) {
  const int d = 8;
  const int64_t n = 120000;  // 120,000 rows x 18 units: 8 parts' worth
  const std::vector<double> binary = Rows(n, d, false), classes = Rows(n, d, true);
  dperm::FeatureMap x(binary.data(), n, d, Eigen::OuterStride<>(d + 1));
  dperm::LabelMap y(binary.data() + d, n, Eigen::InnerStride<>(d + 1));
  dperm::LogisticLoss logistic;
  dperm::HuberLoss huber(0.5);
  for (const dperm::Loss* loss :
       {static_cast<const dperm::Loss*>(&logistic), static_cast<const dperm::Loss*>(&huber)}) {
    ExpectSameGradientAtEveryThreadCount(
        [&] {
          auto f = std::make_unique<dperm::LinearObjective>(*loss, x, y, true, 0.0);
          f->SetSumGrid(dperm::SumGrid(1.0));
          return f;
        },
        d);
  }
  dperm::FeatureMap xc(classes.data(), n, d, Eigen::OuterStride<>(d + 1));
  dperm::LabelMap yc(classes.data() + d, n, Eigen::InnerStride<>(d + 1));
  ExpectSameGradientAtEveryThreadCount(
      [&] {
        auto f = std::make_unique<dperm::SoftmaxObjective>(xc, yc, 3, true, 0.0);
        f->SetSumGrid(dperm::SumGrid(2.0));
        return f;
      },
      d);
}

}  // namespace
