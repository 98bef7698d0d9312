// dperm.train_query_groups (docs/design.md section 4, "per-group models";
// docs/user-guide.md, "Per-group models"): one model per key of a declared
// public domain of one output column of a query's input, all in one
// statement, charged once.
//
// How: the query is validated and its groups cast and checked
// (query_groups.cpp) before anything is charged; the statement is charged
// ONE release of dperm.train_query (ChargeUnitRelease: the count's share
// and the model, at the row) in one ledger row whose neighbours name the
// groups; then, for each declared key in the declared order, dperm.train_query's
// pipeline runs on the canonical query with `group_by = key` ANDed into its
// WHERE clause (GroupFilter): a noisy count of the group's rows, then a
// model on exactly that many slots (a random subset, or public dummies), or
// NULL when the noisy count is 0. No group charges again
// (request.count_charged).
//
// Why it is (epsilon, delta)-DP with respect to one row added or removed
// (the row unit, k = 1: no budget of the relation's family names a unit):
// - Let D and D' differ in one row x. The query is 1-stable (train_query.cpp):
//   x yields at most one input row, with one key. The keys are pairwise
//   unequal under the column type's equality (an opclass's: an equivalence),
//   so that input row is in at most one group g (none when its key is NULL
//   or outside the domain). For every other group h the filtered inputs of D
//   and D' are the same rows, so its count and model have the same
//   distribution on both.
// - Group g's count and model are dperm.train_query's mechanism on its
//   input: (epsilon, delta)-DP for one input row added or removed (the
//   count at 0.1 epsilon, the model on the m slots at the rest; the
//   argument of train_query.cpp).
// - The groups draw independent randomness: each group's noise key and
//   sampling order are fresh (pg_strong_random), or, under the
//   superuser-only seed, derived from the seed and the group's index
//   (GroupSeed), so no two groups share noise.
// - Parallel composition ([McS09], PINQ, Thm 4; its (epsilon, delta) form
//   follows the same way: the joint output is a product in which only
//   group g's factor differs): the vector of all groups' releases is
//   (max over groups of epsilon, max delta)-DP = (epsilon, delta)-DP, as
//   every group has the same options. So the statement is charged exactly
//   what one dperm.train_query release is charged.
// - The set and order of groups released is the declaration (public); a
//   NULL model is a function of its group's noisy count only.
//
// The unit rule (RefuseUnitGroups, query_groups.cpp): on a relation whose budget declares a unit (k rows per
// unit), one unit's rows may span several groups, and the per-group read
// bounds each group to k rows of the unit, so a unit could move every
// group: parallel composition does not hold at the unit. dperm refuses
// (0A000, nothing charged) rather than charge the sum over groups; train
// each group with dperm.train_query (each charged) instead.
#include "dperm/options/options.hpp"

#include "types/model_type.hpp"
#include "guard/privacy_unit.hpp"
#include "guard/protect.hpp"
#include "guard/query_groups.hpp"
#include "guard/query_input.hpp"
#include "release/progress.hpp"
#include "release/release_sums.hpp"
#include "release/train_query.hpp"
#include "release/train_steps.hpp"

extern "C" {
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
}

using namespace dperm::pg;

// dperm.train_query_groups(query text, features text, label text, loss
// text, options jsonb, group_by text, groups jsonb [, mode text]) -> SETOF
// (group_key text, model dp_model): one private model per declared key of
// the query's output column group_by, charged once (parallel composition).
DPERM_FUNCTION(dperm_train_query_groups) {
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  const char* query_text = text_to_cstring(PG_GETARG_TEXT_PP(0));
  TrainInput in = QueryArguments(fcinfo);
  const char* group_by = text_to_cstring(PG_GETARG_TEXT_PP(5));
  Jsonb* groups_json = PG_GETARG_JSONB_P(6);
  in.mode =
      PG_NARGS() > 7 ? ParseTrainMode(text_to_cstring(PG_GETARG_TEXT_PP(7))) : TrainMode::kAuto;
  SPI_connect();
  // Steps 1 to 3 as dperm.train_query: the query, who reads, the columns;
  // then the groups (query_groups.cpp); the request, the charge's relations
  // and the unit (the row only).
  const QueryInput q = ResolveQueryReader(query_text, &in);
  const QueryGroups groups = AnalyseQueryGroups(q, group_by, groups_json);
  ReleaseRequest request = {};
  const char* unit_column = ResolveQueryRequest(q, &in, &request);
  if (unit_column != nullptr)
    RefuseUnitGroups("dperm.train_query_groups", "dperm.train_query", in.name, unit_column);
  const uint64 progress = ProgressBegin(in.relid, in.loss);
  ProgressSetPhase(ProgressPhase::kCountingRows);
  // The statement's one charge, before any group reads a row: one release's
  // cost, its ledger row naming the groups.
  ChargeUnitRelease(request,
                    psprintf("%s; groups by %s: %d declared, disjoint", NeighborsOf(request.unit),
                             quote_identifier(group_by), groups.n));
  request.count_charged = true;
  request.group_by = group_by;
  request.groups = groups.n;
  const dperm::Options& o = request.parsed.options;
  const uint64 seed = static_cast<uint64>(o.seed);
  // Each group's work in a context of its own, reset after its row is
  // stored (the tuplestore copies it).
  MemoryContext group_context =
      AllocSetContextCreate(CurrentMemoryContext, "dperm group", ALLOCSET_DEFAULT_SIZES);
  for (int i = 0; i < groups.n; i++) {
    CHECK_FOR_INTERRUPTS();
    MemoryContext caller = MemoryContextSwitchTo(group_context);
    ReleaseRequest r = request;
    r.group_key = groups.texts[i];
    if (o.has_seed) r.parsed.options.seed = GroupSeed(seed, i);
    TrainInput gin = in;
    gin.qualified = psprintf(
        "(%s)", CanonicalQueryText(q, in.features, in.label, nullptr, GroupFilter(q, groups, i)));
    // Steps 4 to 6 as dperm.train_query, on the group's rows.
    bool nulls[2] = {false, true};
    Datum values[2] = {CStringGetTextDatum(groups.texts[i]), CountAndRelease(gin, &r, &nulls[1])};
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    MemoryContextSwitchTo(caller);
    MemoryContextReset(group_context);
  }
  SPI_finish();
  ProgressEnd(progress);
  return (Datum)0;
}
