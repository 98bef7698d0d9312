// The iteration hook (interrupt.hpp) that dperm.progress shows during
// in-memory training: every algorithm whose loop length the plan fixes
// reports done of planned, from 0 up to planned, with planned fixed by the
// plan; rrpsgd (a secret, random number of rounds) and objective_approx (a
// random stop inside each epoch) report nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"
#include "dperm/util/interrupt.hpp"
#include "erm_reference.hpp"
#include "test_helpers.hpp"

namespace {

using dperm::Algorithm;
using dperm::LossKind;

std::vector<std::pair<int64_t, int64_t>> g_calls;

void Record(int64_t done, int64_t planned) { g_calls.emplace_back(done, planned); }

// The calls of one in-memory training of `algorithm` (500 rows, d = 3).
std::vector<std::pair<int64_t, int64_t>> CallsOf(Algorithm algorithm, dperm::Plan* plan) {
  dperm::Options o = dperm::testing::Opts(1, 1e-6, 0.1);
  o.algorithm = algorithm;
  o.has_algorithm = true;
  *plan = dperm::PlanRelease(o, LossKind::kLogistic, 500, 3);
  std::vector<double> rows = dperm::testing::ErmRows(LossKind::kLogistic, 500, 3, 7);
  dperm::SecureRng rng = dperm::SecureRng::FromSeed(3);
  g_calls.clear();
  dperm::SetIterationHook(&Record);
  dperm::TrainModel(*plan, rows.data(), rng);
  dperm::SetIterationHook(nullptr);
  return g_calls;
}

TEST(IterationHook, PlannedLoopsReportDoneOfPlanned) {
  for (Algorithm a : dperm::AllAlgorithms()) {
    SCOPED_TRACE(dperm::AlgorithmName(a));
    dperm::Plan plan;
    std::vector<std::pair<int64_t, int64_t>> calls = CallsOf(a, &plan);
    if (a == Algorithm::kRrpsgd || a == Algorithm::kObjectiveApprox) {
      EXPECT_TRUE(calls.empty());
      continue;
    }
    ASSERT_FALSE(calls.empty());
    const int64_t planned = calls.front().second;
    EXPECT_GT(planned, 0);
    EXPECT_EQ(calls.front().first, 0);
    EXPECT_EQ(calls.back().first, planned);
    for (size_t i = 1; i < calls.size(); i++) {
      EXPECT_EQ(calls[i].second, planned);
      EXPECT_EQ(calls[i].first, calls[i - 1].first + 1);  // every iteration, in order
    }
    // The loops that run the plan's iterations report exactly those.
    if (a == Algorithm::kDpGd || a == Algorithm::kOutputGd || a == Algorithm::kDpAccmd ||
        a == Algorithm::kDpSgd || a == Algorithm::kObjective) {
      EXPECT_EQ(planned, plan.iterations);
    }
  }
}

// Without a hook nothing is called (and training runs as before).
TEST(IterationHook, NoHookNoCalls) {
  dperm::SetIterationHook(nullptr);
  g_calls.clear();
  dperm::ReportIterations(1, 2);
  EXPECT_TRUE(g_calls.empty());
}

}  // namespace
