// Streaming defaults (issue 12, item 3; train.hpp PlanStreamingDefault):
// (a) for every loss x regulariser x delta the default streaming plan runs at
//     most kStreamingMaxPasses passes whatever n (up to 10^10 rows), where the
//     in-memory rule's T grows with n;
// (b) the disabled StreamingDefaultsTable.Print compares, on the five real
//     datasets, the excess empirical risk of the in-memory default with the
//     streaming default (trained in memory: the streaming model equals it for
//     a seed, test_pass.cpp), for docs/scale.md:
//       ./test/unit/run_unit_tests --gtest_also_run_disabled_tests
//         --gtest_filter='StreamingDefaultsTable.*'
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "dperm/pass.hpp"
#include "dperm/train.hpp"
#include "real_datasets.hpp"
#include "reference_solvers.hpp"

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
      for (int64_t n : {int64_t(45211), int64_t(4521100), int64_t(10000000), int64_t(10000000000)}) {
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
        o.algorithm = p.algorithm;
        o.has_algorithm = true;
        in_memory_largest = std::max(in_memory_largest, PlanRelease(o, loss, n, 50).iterations);
      }
      // The cap is what bounds the passes where the algorithm's own rule grows.
      if (s.l2 == 0 && s.l1 == 0) {
        EXPECT_GT(in_memory_largest, kStreamingMaxPasses) << LossName(loss) << " delta=" << s.delta;
      }
    }
  }
}

// ---------------------------------------------------------------------------
// The table of docs/scale.md ("Defaults that scale").
struct Problem {
  std::string name;
  LossKind loss;
};

TEST(StreamingDefaultsTable, DISABLED_Print) {
  const Problem problems[] = {{"bank", LossKind::kLogistic},
                              {"adult", LossKind::kLogistic},
                              {"creditcard", LossKind::kLogistic},
                              {"wine", LossKind::kHuber},
                              {"bike", LossKind::kHuber}};
  const int kSeeds = 5;
  std::printf("| dataset | loss | l2 | l1 | delta | in-memory default | T | excess | "
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
        std::printf("| %s | %s | %g | %g | %g | refused: %s |\n", pr.name.c_str(), LossName(pr.loss),
                    s.l2, s.l1, s.delta, e.what());
        continue;
      }
      std::unique_ptr<Objective> f = MakeObjective(mem, data.rows.data());
      const double best = f->Value(NewtonMinimiser(*f));
      double excess_mem = 0, excess_str = 0;
      for (int seed = 1; seed <= kSeeds; seed++) {
        excess_mem += (f->Value(TrainSeeded(mem, data.rows, seed)) - best) / kSeeds;
        excess_str += (f->Value(TrainSeeded(str, data.rows, seed)) - best) / kSeeds;
      }
      std::printf("| %s | %s | %g | %g | %g | %s | %lld | %.4g | %s | %lld | %.4g |\n",
                  pr.name.c_str(), LossName(pr.loss), s.l2, s.l1, s.delta,
                  AlgorithmName(mem.algorithm), static_cast<long long>(mem.iterations), excess_mem,
                  AlgorithmName(str.algorithm), static_cast<long long>(str.iterations), excess_str);
      std::fflush(stdout);
    }
  }
}

}  // namespace
}  // namespace dperm::testing
