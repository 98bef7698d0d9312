// Held-out quality floors on real data (issue 15: "CI checks ... one held-out
// accuracy floor per loss on a real dataset"); the full benchmark is
// bench/heldout.sh -> docs/heldout.md. Each test loads a dataset of
// $DPERM_SHARED/data (real_datasets.hpp), splits
// it 70/30 with a fixed seed, trains dperm's default (no algorithm given:
// DefaultAlgorithm) on the 70 % with a seeded generator and scores the 30 %.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dperm/options.hpp"
#include "dperm/plan.hpp"
#include "dperm/random.hpp"
#include "dperm/train.hpp"
#include "real_datasets.hpp"

namespace dperm::testing {
namespace {

struct Split {
  std::vector<double> train, test;
};

// 70/30 by a seeded permutation.
Split SplitRows(const Dataset& data, uint64_t seed) {
  SecureRng rng = SecureRng::FromSeed(seed);
  std::vector<int64_t> perm = RandomPermutation(rng, data.n());
  const int64_t m = std::llround(0.7 * double(data.n()));
  const int stride = data.d + 1;
  Split s;
  for (int64_t k = 0; k < data.n(); k++) {
    auto& dst = k < m ? s.train : s.test;
    const double* r = &data.rows[size_t(perm[k]) * stride];
    dst.insert(dst.end(), r, r + stride);
  }
  return s;
}

// The default release (no algorithm, l2 not given: DefaultL2) at epsilon (1 unless
// given), delta = 1e-6.
std::vector<double> TrainDefault(const std::vector<double>& train, int d, LossKind loss,
                                 uint64_t seed, double epsilon = 1) {
  Options o;
  o.epsilon = epsilon;
  o.delta = 1e-6;
  o.has_algorithm = false;
  o.has_l2 = false;  // l2 not given: DefaultL2 (train.hpp), as a SQL release
  o.fit_intercept = true;
  o.intercept_offset = true;  // as every SQL release (ParseOptions)
  Plan plan = PlanRelease(o, loss, int64_t(train.size() / (d + 1)), d);
  SecureRng rng = SecureRng::FromSeed(seed);
  return TrainModel(plan, train.data(), rng);
}

double Margin(const std::vector<double>& w, const double* x, int d) {
  double z = w[d];  // the intercept
  for (int j = 0; j < d; j++) z += w[j] * x[j];
  return z;
}

// BANK (n = 45211, d = 42, 11.7 % positive), logistic: the default's test
// accuracy beats predicting the training majority class for every row.
// Measured when added: 0.8940 against 0.8843 (split seed 1, training seed
// 11); over split seeds 1..3 x training seeds 11, 12: 0.8907..0.8940 against
// 0.8829..0.8843. docs/heldout.md has the 10-seed picture.
TEST(HeldoutFloor, BankLogisticDefaultBeatsMajorityClass) {
  Dataset bank = LoadCopy("bank");
  ASSERT_EQ(bank.n(), 45211);
  ASSERT_EQ(bank.d, 42);
  const int d = bank.d, stride = d + 1;
  Split s = SplitRows(bank, 1);
  std::vector<double> w = TrainDefault(s.train, d, LossKind::kLogistic, 11);
  int64_t train_pos = 0, m = int64_t(s.train.size() / stride);
  for (int64_t i = 0; i < m; i++) train_pos += s.train[size_t(i) * stride + d] > 0;
  const double majority = train_pos * 2 > m ? 1.0 : -1.0;
  int64_t correct = 0, correct_majority = 0, t = int64_t(s.test.size() / stride);
  for (int64_t i = 0; i < t; i++) {
    const double* r = &s.test[size_t(i) * stride];
    const double y = r[d];
    correct += (Margin(w, r, d) > 0 ? 1.0 : -1.0) == y;
    correct_majority += majority == y;
  }
  const double acc = double(correct) / t, base = double(correct_majority) / t;
  std::printf("BANK held-out accuracy, default at epsilon = 1: %.4f (majority %.4f)\n", acc, base);
  EXPECT_GT(acc, base);
}

// BANK at epsilon = 0.1, where the intercept matters most (issue 15: the
// default used to fall below the majority baseline at small epsilon): the
// default, with its private offset (offset.hpp), is not below the majority
// class's test accuracy by more than that accuracy's standard error
// sqrt(a (1 - a) / t), for each of three training seeds. Measured when
// added: 0.8843 for each seed, the majority's accuracy (s.e. 0.0027): at
// this epsilon the model predicts the majority class; a wrong-signed or
// unclamped offset would put it far below.
TEST(HeldoutFloor, BankLogisticAtSmallEpsilonNotBelowMajority) {
  Dataset bank = LoadCopy("bank");
  ASSERT_EQ(bank.n(), 45211);
  const int d = bank.d, stride = d + 1;
  Split s = SplitRows(bank, 1);
  int64_t train_pos = 0, m = int64_t(s.train.size() / stride), t = int64_t(s.test.size() / stride);
  for (int64_t i = 0; i < m; i++) train_pos += s.train[size_t(i) * stride + d] > 0;
  const double majority = train_pos * 2 > m ? 1.0 : -1.0;
  int64_t correct_majority = 0;
  for (int64_t i = 0; i < t; i++) correct_majority += majority == s.test[size_t(i) * stride + d];
  const double base = double(correct_majority) / t;
  const double se = std::sqrt(base * (1 - base) / t);
  for (uint64_t seed : {11, 12, 13}) {
    std::vector<double> w = TrainDefault(s.train, d, LossKind::kLogistic, seed, 0.1);
    int64_t correct = 0;
    for (int64_t i = 0; i < t; i++) {
      const double* r = &s.test[size_t(i) * stride];
      correct += (Margin(w, r, d) > 0 ? 1.0 : -1.0) == r[d];
    }
    const double acc = double(correct) / t;
    std::printf("BANK held-out accuracy, default at epsilon = 0.1, seed %d: %.4f (majority %.4f, s.e. %.4f)\n",
                int(seed), acc, base, se);
    EXPECT_GE(acc, base - se);
  }
}

// WINE (n = 6497, d = 12, quality scaled to [0, 1]), Huber: the default's
// test R² is positive and beats predicting the training mean (issue 16's
// target: R² > 0 at epsilon >= 1). The default huber_delta = 0.1
// target_bound (options.hpp) made it so: with huber_delta = 1, the old
// default, it was -0.50 (split seed 1, training seed 11) and -0.50..-0.06
// over split seeds 1..3 x training seeds 11, 12. Measured when enabled:
// 0.2136 (split seed 1, training seed 11); over split seeds 1..3 x training
// seeds 11, 12: 0.2136, 0.2124, 0.1925, 0.2172, 0.2507, 0.2409, against
// -0.0007..0 for the training mean. docs/heldout.md has the 10-seed picture.
TEST(HeldoutFloor, WineHuberDefaultBeatsTheMean) {
  Dataset wine = LoadCopy("wine");
  ASSERT_EQ(wine.n(), 6497);
  ASSERT_EQ(wine.d, 12);
  const int d = wine.d, stride = d + 1;
  Split s = SplitRows(wine, 1);
  std::vector<double> w = TrainDefault(s.train, d, LossKind::kHuber, 11);
  int64_t m = int64_t(s.train.size() / stride), t = int64_t(s.test.size() / stride);
  double train_mean = 0, test_mean = 0;
  for (int64_t i = 0; i < m; i++) train_mean += s.train[size_t(i) * stride + d] / m;
  for (int64_t i = 0; i < t; i++) test_mean += s.test[size_t(i) * stride + d] / t;
  double sse = 0, sse_mean = 0, sst = 0;
  for (int64_t i = 0; i < t; i++) {
    const double* r = &s.test[size_t(i) * stride];
    sse += std::pow(Margin(w, r, d) - r[d], 2);
    sse_mean += std::pow(train_mean - r[d], 2);
    sst += std::pow(test_mean - r[d], 2);
  }
  const double r2 = 1 - sse / sst, r2_mean = 1 - sse_mean / sst;
  std::printf("WINE held-out R^2, Huber default at epsilon = 1: %.4f (training mean %.4f)\n",
              r2, r2_mean);
  EXPECT_GT(r2, 0.0);
  EXPECT_GT(r2, r2_mean);
}

}  // namespace
}  // namespace dperm::testing
