// The one home of a release's planning from public inputs only (options, n,
// d): what the pipeline plans before anything is charged or read -- the
// plan, its RDP curve and its memory, in memory or by passes. The pieces:
// the mechanism's plan (plan_release.hpp), l2 => 'auto'
// (plan_l2_selection.hpp), a privacy unit (unit_level.hpp), the release's
// RDP curve (release_curve.hpp), the memory estimate (memory.hpp),
// dp_explain (explain.hpp).
#pragma once
#include "dperm/options/options.hpp"
#include "dperm/plan/l2_selection.hpp"
#include "dperm/plan/plan.hpp"

#include <cstdint>
#include <vector>

namespace dperm {

// A release's plan and its charge, from public inputs only: the plan
// charged, its curve, and the memory training will need. Each way to train
// has its one function, called before the charge: in memory (the
// aggregates' final function; dperm.train, which charges such a release
// before the first row is read) PlanInMemoryRelease, by passes (dperm.train
// in streaming mode) PlanReleaseByPasses.
struct ReleasePlan {
  Plan plan;                  // the plan charged
  std::vector<double> curve;  // the release's RDP curve on LedgerOrders()
  bool selects = false;       // l2 => 'auto' (in memory only)
  L2Selection selection;      // when selects
  double memory = 0;          // the training's peak memory besides the rows (bytes)
};

// In memory: l2 => 'auto' plans a selection (the charge is the selection's
// curve, the plan its first candidate's), any other release PlanRelease.
ReleasePlan PlanInMemoryRelease(const Options& options, LossKind loss, int64_t n, int d);

// By passes (streaming mode): PlanStreamingRelease's plan, its curve, and
// its memory with no rows in memory (ReleaseMemoryBytes, streaming).
ReleasePlan PlanReleaseByPasses(const Options& options, LossKind loss, int64_t n, int d);

}  // namespace dperm
