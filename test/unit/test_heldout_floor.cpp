// Held-out quality floors on real data ("CI checks ... one held-out
// accuracy floor per loss on a real dataset"); the full benchmark is
// bench/scripts/heldout/heldout.sh -> docs/heldout.md. Each test loads a dataset of
// $DPERM_SHARED/data (real_datasets.hpp), splits
// it 70/30 with a fixed seed, trains dperm's default (no algorithm given:
// DefaultAlgorithm) on the 70 % with a seeded generator and scores the 30 %.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"
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
  o.has_l2 = false;  // l2 not given: DefaultL2 (plan_release.hpp), as a SQL release
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
  DPERM_SKIP_WITHOUT_SHARED("data/raw");
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

// BANK at epsilon = 0.1, where the intercept matters most (the
// default used to fall below the majority baseline at small epsilon): the
// default, with its private offset (offset.hpp), is not below the majority
// class's test accuracy by more than that accuracy's standard error
// sqrt(a (1 - a) / t), for each of three training seeds. Measured when
// added: 0.8843 for each seed, the majority's accuracy (s.e. 0.0027): at
// this epsilon the model predicts the majority class; a wrong-signed or
// unclamped offset would put it far below.
TEST(HeldoutFloor, BankLogisticAtSmallEpsilonNotBelowMajority) {
  DPERM_SKIP_WITHOUT_SHARED("data/raw");
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
    std::printf(
        "BANK held-out accuracy, default at epsilon = 0.1, seed %d: %.4f (majority %.4f, s.e. %.4f)\n",
        int(seed), acc, base, se);
    EXPECT_GE(acc, base - se);
  }
}

// WINE (n = 6497, d = 12, quality scaled to [0, 1]), Huber: the default's
// test R² is positive and beats predicting the training mean (the
// target: R² > 0 at epsilon >= 1). The default huber_delta = 0.1
// target_bound (options.hpp) made it so: with huber_delta = 1, the old
// default, it was -0.50 (split seed 1, training seed 11) and -0.50..-0.06
// over split seeds 1..3 x training seeds 11, 12. Measured when enabled:
// 0.2136 (split seed 1, training seed 11); over split seeds 1..3 x training
// seeds 11, 12: 0.2136, 0.2124, 0.1925, 0.2172, 0.2507, 0.2409, against
// -0.0007..0 for the training mean. docs/heldout.md has the 10-seed picture.
TEST(HeldoutFloor, WineHuberDefaultBeatsTheMean) {
  DPERM_SKIP_WITHOUT_SHARED("data/raw");
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
  std::printf("WINE held-out R^2, Huber default at epsilon = 1: %.4f (training mean %.4f)\n", r2,
              r2_mean);
  EXPECT_GT(r2, 0.0);
  EXPECT_GT(r2, r2_mean);
}

// ---------------------------------------------------------------------------
// Softmax on WINE as three classes (real_datasets.hpp: quality <= 5, 6, >= 7;
// the shared data's only multi-class problem).

// The predicted class: the largest of the K margins (a class block is d
// weights, then its intercept, as SoftmaxObjective lays them out).
int PredictClass(const std::vector<double>& w, const double* x, int d, int classes) {
  int best = 0;
  double top = -HUGE_VAL;
  for (int k = 0; k < classes; k++) {
    const double m =
        Margin(std::vector<double>(w.begin() + k * (d + 1), w.begin() + (k + 1) * (d + 1)), x, d);
    if (m > top) top = m, best = k;
  }
  return best;
}

// Test accuracy of w, and of the training split's most frequent class.
std::pair<double, double> SoftmaxAccuracy(const Split& s, const std::vector<double>& w, int d,
                                          int classes) {
  const int stride = d + 1;
  std::vector<int64_t> counts(size_t(classes), 0);
  for (size_t i = 0; i < s.train.size(); i += stride) counts[size_t(s.train[i + d])]++;
  const int majority = int(std::max_element(counts.begin(), counts.end()) - counts.begin());
  int64_t correct = 0, correct_majority = 0, t = int64_t(s.test.size() / stride);
  for (int64_t i = 0; i < t; i++) {
    const double* r = &s.test[size_t(i) * stride];
    correct += PredictClass(w, r, d, classes) == int(r[d]);
    correct_majority += majority == int(r[d]);
  }
  return {double(correct) / t, double(correct_majority) / t};
}

// One softmax release on the training split: the default (no l2, no
// algorithm) unless `algorithm` / `l2` are given (l2 < 0: not given).
std::vector<double> TrainSoftmax(const Split& s, int d, uint64_t seed, double epsilon,
                                 std::optional<Algorithm> algorithm = std::nullopt,
                                 double l2 = -1) {
  Options o;
  o.epsilon = epsilon;
  o.delta = 1e-6;
  o.classes = 3;
  o.fit_intercept = true;
  o.intercept_offset = true;
  o.has_l2 = l2 >= 0;
  o.l2 = l2 >= 0 ? l2 : 0;
  o.has_algorithm = algorithm.has_value();
  if (algorithm) o.algorithm = *algorithm;
  Plan plan = PlanRelease(o, LossKind::kSoftmax, int64_t(s.train.size() / (d + 1)), d);
  SecureRng rng = SecureRng::FromSeed(seed);
  return TrainModel(plan, s.train.data(), rng);
}

// The softmax default (DefaultL2 gives 0, so dp_gd) beats the majority
// class on held-out WINE at epsilon = 1. Measured when added (split seed 1,
// training seed 11): 0.5290 against 0.4310; the 10-seed table of
// DISABLED_PrintWineSoftmax (docs/heldout.md, "Softmax") has the spread.
TEST(HeldoutFloor, WineSoftmaxDefaultBeatsMajorityClass) {
  DPERM_SKIP_WITHOUT_SHARED("data/raw");
  Dataset wine = WineThreeClasses(LoadCopy("wine"));
  ASSERT_EQ(wine.n(), 6497);
  const int d = wine.d;
  Split s = SplitRows(wine, 1);
  const auto [acc, base] = SoftmaxAccuracy(s, TrainSoftmax(s, d, 11, 1.0), d, 3);
  std::printf(
      "WINE 3-class held-out accuracy, softmax default at epsilon = 1: %.4f (majority %.4f)\n", acc,
      base);
  EXPECT_GT(acc, base);
}

// The evidence for the softmax default (docs/heldout.md, "Softmax"): mean
// test accuracy over split seeds 1..DPERM_SOFTMAX_SEEDS (default 10), 70/30,
// of the default and of the alternatives DefaultL2 weighed, per epsilon.
TEST(HeldoutFloor, DISABLED_PrintWineSoftmax) {
  DPERM_SKIP_WITHOUT_SHARED("data/raw");
  Dataset wine = WineThreeClasses(LoadCopy("wine"));
  const int d = wine.d;
  const char* env = std::getenv("DPERM_SOFTMAX_SEEDS");
  const int seeds = env != nullptr ? std::atoi(env) : 10;
  struct Arm {
    const char* name;
    std::optional<Algorithm> algorithm;
    double l2;
  };
  const Algorithm gd = Algorithm::kDpGd, bolton = Algorithm::kBolton;
  const std::vector<Arm> arms = {
      {"default (no l2)", std::nullopt, -1}, {"dp_gd, l2 = 0", gd, 0},
      {"dp_gd, l2 = 0.001", gd, 1e-3},       {"dp_gd, l2 = 0.01", gd, 1e-2},
      {"bolton, l2 = 0.001", bolton, 1e-3},  {"bolton, l2 = 0.01", bolton, 1e-2},
      {"bolton, l2 = 0.1", bolton, 0.1}};
  std::printf("| arm | eps | test accuracy (mean ± s.e.) | majority |\n|---|---:|---:|---:|\n");
  for (double eps : {0.1, 0.5, 1.0, 2.0}) {
    for (const Arm& arm : arms) {
      double sum = 0, sq = 0, base_sum = 0;
      for (int k = 1; k <= seeds; k++) {
        Split s = SplitRows(wine, uint64_t(k));
        const auto [acc, base] = SoftmaxAccuracy(
            s, TrainSoftmax(s, d, 10 + uint64_t(k), eps, arm.algorithm, arm.l2), d, 3);
        sum += acc, sq += acc * acc, base_sum += base;
      }
      const double mean = sum / seeds,
                   se = std::sqrt(std::max(0.0, sq / seeds - mean * mean) / (seeds - 1));
      std::printf("| %s | %g | %.4f ± %.4f | %.4f |\n", arm.name, eps, mean, se, base_sum / seeds);
    }
  }
}

}  // namespace
}  // namespace dperm::testing
