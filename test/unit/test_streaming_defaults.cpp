// Streaming defaults (plan_release.hpp, PlanStreamingDefault):
// (a) for every loss x regulariser x delta the default streaming plan runs at
//     most kStreamingMaxPasses passes whatever n (up to 10^10 rows), where the
//     in-memory rule's T grows with n;
// (b) the disabled StreamingDefaultsTable.Print compares, on the five real
//     datasets, the excess empirical risk of the in-memory default with the
//     streaming default (trained in memory: the streaming model equals it for
//     a seed, test_pass.cpp), for docs/scale.md:
//       ./test/unit/run_unit_tests --gtest_also_run_disabled_tests
//         --gtest_filter='StreamingDefaultsTable.DISABLED_Print'
// (c) the disabled StreamingDefaultsTable.Synthetic does the same on the
//     synthetic ladder of bench/scripts/time/scale.sh (the same rows, generated here by the
//     formula of its SQL), for docs/scale.md's excess-risk cell:
//       SCALE_EXCESS_LADDER="452000x42 4500000x42" SCALE_EXCESS_SEEDS=3
//       ./test/unit/run_unit_tests --gtest_also_run_disabled_tests
//         --gtest_filter='StreamingDefaultsTable.DISABLED_Synthetic'
//     (SCALE_EXCESS_DELTA=1e-6 SCALE_EXCESS_L2=default: the delta > 0
//     defaults without l2, where streaming runs dp_newton above its ratio;
//     SCALE_EXCESS_STREAMING_DPGD=1: streaming dp_gd, the default before)'
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "dperm/algorithms/dp_gd.hpp"
#include "dperm/release/streaming.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"
#include "real_datasets.hpp"
#include "../../bench/lib/reference_solvers.hpp"

namespace dperm::testing {
namespace {

struct Setting {
  double l2;
  double l1;
  double delta;
};
const Setting kSettings[] = {
    {0.1, 0, 1e-6}, {0.1, 0, 0}, {1e-4, 0, 1e-6}, {0, 0, 1e-6}, {0, 0, 0}, {0.01, 0.001, 1e-6},
};

Options SettingOptions(const Setting& s, LossKind loss) {
  Options o;
  o.epsilon = 1;
  o.delta = s.delta;
  o.l2 = s.l2;
  o.l1 = s.l1;
  o.classes = loss == LossKind::kSoftmax ? 3 : 0;
  o.has_algorithm = false;  // the default's choice
  return o;
}

TEST(StreamingDefaults, PassesDoNotGrowWithN) {
  for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber, LossKind::kSoftmax}) {
    for (const Setting& s : kSettings) {
      int64_t in_memory_largest = 0;
      for (int64_t n :
           {int64_t(45211), int64_t(4521100), int64_t(10000000), int64_t(10000000000)}) {
        Options o = SettingOptions(s, loss);
        Plan p = PlanStreamingRelease(o, loss, n, 50);
        EXPECT_TRUE(SupportsStreaming(p.algorithm));
        EXPECT_LE(p.iterations, kStreamingMaxPasses)
            << LossName(loss) << " l2=" << s.l2 << " l1=" << s.l1 << " delta=" << s.delta
            << " n=" << n << ": " << p.iterations_rule << " / " << p.algorithm_rule;
        EXPECT_GT(p.noise_scale, 0);
        // A given T is kept, capped or not.
        o.iterations = 3 * kStreamingMaxPasses;
        EXPECT_EQ(PlanStreamingRelease(o, loss, n, 50).iterations, 3 * kStreamingMaxPasses);
        o.iterations = 0;
        // Logistic at l2 = 0, delta > 0: dp_newton from n >= 10^5 and
        // n epsilon/d^2 >= 56 (n >= 140000 at d = 50), dp_gd below.
        const bool newton =
            loss == LossKind::kLogistic && s.l2 == 0 && s.l1 == 0 && s.delta > 0 && n >= 140000;
        EXPECT_EQ(p.algorithm == Algorithm::kDpNewton, newton) << LossName(loss) << " n=" << n;
        if (newton) continue;
        o.algorithm = p.algorithm;
        o.has_algorithm = true;
        in_memory_largest = std::max(in_memory_largest, PlanRelease(o, loss, n, 50).iterations);
      }
      // The cap is what bounds the passes where the algorithm's own rule
      // grows; dp_gd's own rule for logistic and softmax (delta > 0) stops
      // at its accelerated schedule (dp_gd.hpp), in memory too.
      if (s.l2 == 0 && s.l1 == 0) {
        if (s.delta > 0 && loss != LossKind::kHuber)
          EXPECT_EQ(in_memory_largest, kAcceleratedSteps) << LossName(loss);
        else
          EXPECT_GT(in_memory_largest, kStreamingMaxPasses)
              << LossName(loss) << " delta=" << s.delta;
      }
    }
  }
}

// dp_newton is the streaming default exactly where NewtonStreamsByDefault
// says: logistic, l2 = l1 = 0, delta > 0, n >= 10^5, n epsilon/d^2 >= 56,
// at most 64 coordinates; its 6 passes are a public constant.
TEST(StreamingDefaults, NewtonWhereTheRatioAndWidthAllow) {
  Options o = SettingOptions({0, 0, 1e-6}, LossKind::kLogistic);
  auto algorithm = [&](int64_t n, int d) {
    return PlanStreamingRelease(o, LossKind::kLogistic, n, d).algorithm;
  };
  EXPECT_EQ(algorithm(100000, 42), Algorithm::kDpNewton);  // ratio 56.7
  EXPECT_EQ(algorithm(100000, 43), Algorithm::kDpGd);      // ratio 54.1
  EXPECT_EQ(algorithm(99999, 8), Algorithm::kDpGd);        // ratio 1562, below 10^5 rows
  EXPECT_EQ(PlanStreamingRelease(o, LossKind::kLogistic, 100000, 42).iterations, 6);
  EXPECT_EQ(algorithm(10000000, 63), Algorithm::kDpNewton);  // 64 coordinates
  EXPECT_EQ(algorithm(10000000, 64), Algorithm::kDpGd);      // 65
  o.fit_intercept = false;
  EXPECT_EQ(algorithm(10000000, 64), Algorithm::kDpNewton);
  o.fit_intercept = true;
  o.epsilon = 0.1;  // ratio 5.7 at 10^5 x 42
  EXPECT_EQ(algorithm(100000, 42), Algorithm::kDpGd);
  o.epsilon = 1;
  o.delta = 0;
  EXPECT_EQ(algorithm(10000000, 8), Algorithm::kOutputGd);
  o.delta = 1e-6;
  o.l2 = 1e-4;
  EXPECT_EQ(algorithm(10000000, 8), Algorithm::kOutputGd);
  o.l2 = 0;
  o.l1 = 1e-4;
  EXPECT_EQ(algorithm(10000000, 8), Algorithm::kDpGd);
  o.l1 = 0;
  Options huber = SettingOptions({0, 0, 1e-6}, LossKind::kHuber);
  EXPECT_EQ(PlanStreamingRelease(huber, LossKind::kHuber, 10000000, 8).algorithm, Algorithm::kDpGd);
  // A given algorithm is kept.
  o.algorithm = Algorithm::kDpGd;
  o.has_algorithm = true;
  EXPECT_EQ(algorithm(10000000, 8), Algorithm::kDpGd);
}

// ---------------------------------------------------------------------------
// The table of docs/scale.md ("Defaults that scale").
struct Problem {
  std::string name;
  LossKind loss;
};

// Mean excess F(w) - F(w*) over seeds 1..seeds of the models the plans `mem`
// and `str` release on `rows`, F the objective of `mem`, w* by Newton.
struct Excess {
  double minimum = 0;  // F(w*)
  double in_memory = 0;
  double streaming = 0;
};
Excess MeanExcess(const Plan& mem, const Plan& str, const std::vector<double>& rows, int seeds) {
  std::unique_ptr<Objective> f = MakeObjective(mem, rows.data());
  const double best = f->Value(NewtonMinimiser(*f));
  Excess e;
  e.minimum = best;
  for (int seed = 1; seed <= seeds; seed++) {
    e.in_memory += (f->Value(TrainSeeded(mem, rows, seed)) - best) / seeds;
    e.streaming += (f->Value(TrainSeeded(str, rows, seed)) - best) / seeds;
  }
  return e;
}

TEST(StreamingDefaultsTable, DISABLED_Print) {
  DPERM_SKIP_WITHOUT_SHARED("data/raw");
  const Problem problems[] = {{"bank", LossKind::kLogistic},
                              {"adult", LossKind::kLogistic},
                              {"creditcard", LossKind::kLogistic},
                              {"wine", LossKind::kHuber},
                              {"bike", LossKind::kHuber}};
  const int kSeeds = 5;
  std::printf(
      "| dataset | loss | l2 | l1 | delta | in-memory default | T | excess | "
      "streaming default | passes | excess |\n|---|---|---:|---:|---:|---|---:|---:|---|---:|---:|\n");
  for (const Problem& pr : problems) {
    Dataset data = LoadCopy(pr.name);
    if (data.n() == 0) continue;
    for (const Setting& s : kSettings) {
      if (s.l1 > 0) continue;  // the reference minimiser is Newton's: smooth objectives only
      Options o = SettingOptions(s, pr.loss);
      Plan mem, str;
      try {
        mem = PlanRelease(o, pr.loss, data.n(), data.d);
        str = PlanStreamingRelease(o, pr.loss, data.n(), data.d);
      } catch (const Error& e) {
        std::printf("| %s | %s | %g | %g | %g | refused: %s |\n", pr.name.c_str(),
                    LossName(pr.loss), s.l2, s.l1, s.delta, e.what());
        continue;
      }
      const Excess e = MeanExcess(mem, str, data.rows, kSeeds);
      std::printf("| %s | %s | %g | %g | %g | %s | %lld | %.4g | %s | %lld | %.4g |\n",
                  pr.name.c_str(), LossName(pr.loss), s.l2, s.l1, s.delta,
                  AlgorithmName(mem.algorithm), static_cast<long long>(mem.iterations), e.in_memory,
                  AlgorithmName(str.algorithm), static_cast<long long>(str.iterations),
                  e.streaming);
      std::fflush(stdout);
    }
  }
}

// bench/scripts/time/scale.sh's table s<n>x<d>, row i = 1..n: feature k = 1..d is
// 0.14 sin(k i + k^2) (||x|| <= 0.14 sqrt(d) < 1 for d <= 50: never
// clipped), the label sin(i) + sin(2i + 4) + 0.3 sin(3i + 9) > 0 (+-1).
// The SQL computes k * i + k * k in int4 and sin in float8, as here.
Dataset SyntheticRung(int64_t n, int d) {
  Dataset out;
  out.d = d;
  out.rows.resize(size_t(n) * (d + 1));
  for (int64_t i = 1; i <= n; i++) {
    double* row = out.rows.data() + size_t(i - 1) * (d + 1);
    for (int k = 1; k <= d; k++) row[k - 1] = 0.14 * std::sin(double(int64_t(k) * i + k * k));
    const double x = double(i);
    row[d] = std::sin(x) + std::sin(2 * x + 4) + 0.3 * std::sin(3 * x + 9) > 0 ? 1.0 : -1.0;
  }
  return out;
}

TEST(StreamingDefaultsTable, DISABLED_Synthetic) {
  const char* ladder_env = std::getenv("SCALE_EXCESS_LADDER");
  const char* seeds_env = std::getenv("SCALE_EXCESS_SEEDS");
  std::istringstream ladder(ladder_env != nullptr ? ladder_env : "452000x42 4500000x42");
  const int seeds = seeds_env != nullptr ? std::atoi(seeds_env) : 3;
  ASSERT_GT(seeds, 0);
  // bench/scripts/time/scale.sh's releases: logistic, epsilon 1, l2 0.1, the default
  // delta; SCALE_EXCESS_DELTA sets delta, and SCALE_EXCESS_L2=default
  // leaves l2 to each mode's default rule (dp_options without l2).
  const char* delta_env = std::getenv("SCALE_EXCESS_DELTA");
  const char* l2_env = std::getenv("SCALE_EXCESS_L2");
  Options o;
  o.epsilon = 1;
  o.l2 = 0.1;
  o.has_algorithm = false;
  if (delta_env != nullptr) o.delta = std::atof(delta_env);
  if (l2_env != nullptr && std::string(l2_env) == "default") {
    o.l2 = 0;
    o.has_l2 = false;
  }
  std::printf(
      "| table | n | d | F(w*) | in-memory default | T | excess | streaming default | passes "
      "| excess | seeds |\n|---|---:|---:|---:|---|---:|---:|---|---:|---:|---:|\n");
  std::string rung;
  while (ladder >> rung) {
    const size_t x = rung.find('x');
    ASSERT_NE(x, std::string::npos) << rung;
    const int64_t n = std::atoll(rung.substr(0, x).c_str());
    const int d = std::atoi(rung.substr(x + 1).c_str());
    Dataset data = SyntheticRung(n, d);
    Plan mem = PlanRelease(o, LossKind::kLogistic, n, d);
    // SCALE_EXCESS_STREAMING_DPGD=1: streaming as dp_gd (its own T, at most
    // 100 accelerated steps: the default before dp_newton) instead.
    Options streamed = o;
    if (std::getenv("SCALE_EXCESS_STREAMING_DPGD") != nullptr) {
      streamed.algorithm = Algorithm::kDpGd;
      streamed.has_algorithm = true;
    }
    Plan str = PlanStreamingRelease(streamed, LossKind::kLogistic, n, d);
    const Excess e = MeanExcess(mem, str, data.rows, seeds);
    // Both are released models of a strongly convex objective: never below
    // its minimum (up to rounding).
    EXPECT_GT(e.in_memory, -1e-12);
    EXPECT_GT(e.streaming, -1e-12);
    std::printf("| s%s | %lld | %d | %.6f | %s | %lld | %.4g | %s | %lld | %.4g | %d |\n",
                rung.c_str(), static_cast<long long>(n), d, e.minimum, AlgorithmName(mem.algorithm),
                static_cast<long long>(mem.iterations), e.in_memory, AlgorithmName(str.algorithm),
                static_cast<long long>(str.iterations), e.streaming, seeds);
    std::fflush(stdout);
  }
}

}  // namespace
}  // namespace dperm::testing
