// Which relations a release reads and is charged to (docs/design.md section 3,
// item 4): the plan walk below a training aggregate, the relations of a
// view, and the closure under ancestors and the `dataset` option.
#include "guard/relation_access.hpp"
#include "guard/relations.hpp"

extern "C" {
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/pg_class.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_rewrite.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "executor/executor.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
}

namespace dperm::pg {

// relids plus every ancestor of each (a budget on a parent covers releases
// that read its partitions or inheritance children directly), as a palloc'd
// array of at most kMaxRelations.
static Oid* WithAncestors(List* relids, int* count) {
  int read = list_length(relids);
  for (int i = 0; i < read; i++) {
    ListCell* lc;
    foreach (lc, AncestorsOf(list_nth_oid(relids, i)))
      relids = list_append_unique_oid(relids, lfirst_oid(lc));
  }
  if (list_length(relids) > kMaxRelations)
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("a release may read at most %d relations", kMaxRelations)));
  Oid* out = static_cast<Oid*>(palloc(sizeof(Oid) * Max(list_length(relids), 1)));
  int i = 0;
  ListCell* lc;
  foreach (lc, relids) out[i++] = lfirst_oid(lc);
  *count = i;
  return out;
}

List* EStateRelations(EState* estate) {
  List* relids = NIL;
  ListCell* lc;
  foreach (lc, estate->es_range_table) {
    RangeTblEntry* rte = lfirst_node(RangeTblEntry, lc);
    if (rte->rtekind == RTE_RELATION) relids = list_append_unique_oid(relids, rte->relid);
  }
  return relids;
}

List* RangeTableRelations(FunctionCallInfo fcinfo) {
  if (fcinfo->context != nullptr && IsA(fcinfo->context, AggState))
    return EStateRelations(reinterpret_cast<AggState*>(fcinfo->context)->ss.ps.state);
  return NIL;
}

// `relids` plus the `dataset` option's relation (checked here for the
// current user, who releases), with every ancestor of each.
static Oid* WithDataset(List* relids, const char* dataset, int* count) {
  // `dataset` adds a relation to charge; it never removes inferred ones.
  if (dataset != nullptr) {
    SPI_connect();
    relids = list_append_unique_oid(relids, CheckDataset(dataset, GetUserId()));
    SPI_finish();
  }
  return WithAncestors(relids, count);
}

static List* ViewReads(Oid view);

namespace {

// What the plan below one aggregate reads (AggregateReads).
struct ReadWalk {
  EState* estate = nullptr;
  List* relids = NIL;         // relations scanned
  List* walked = NIL;         // plan_ids of the subplans walked
  List* setters = NIL;        // pairs (param id, plan_id of the initPlan that sets it)
  bool unattributed = false;  // rows or values reach it in a way not attributed here
};

// The relation of range-table entry `index`, if it is one.
void AddRangeTableRelation(ReadWalk* w, Index index) {
  if (index == 0 || index > static_cast<Index>(list_length(w->estate->es_range_table))) {
    w->unattributed = true;
    return;
  }
  RangeTblEntry* rte = exec_rt_fetch(index, w->estate);
  if (rte->rtekind == RTE_RELATION) w->relids = list_append_unique_oid(w->relids, rte->relid);
}

void AddRangeTableRelations(ReadWalk* w, Bitmapset* indexes) {
  int i = -1;
  while ((i = bms_next_member(indexes, i)) >= 0) AddRangeTableRelation(w, static_cast<Index>(i));
}

// Records, for every initPlan attached to a node of `plan`'s tree, the
// parameters it sets (its plan_id per parameter).
void CollectSetters(Plan* plan, List** setters) {
  if (plan == nullptr) return;
  ListCell* lc;
  foreach (lc, plan->initPlan) {
    SubPlan* sub = lfirst_node(SubPlan, lc);
    ListCell* p;
    foreach (p, sub->setParam)
      *setters = lappend(*setters, list_make2_int(lfirst_int(p), sub->plan_id));
  }
  CollectSetters(plan->lefttree, setters);
  CollectSetters(plan->righttree, setters);
  List* children = NIL;
  switch (nodeTag(plan)) {
    case T_Append: children = reinterpret_cast<Append*>(plan)->appendplans; break;
    case T_MergeAppend: children = reinterpret_cast<MergeAppend*>(plan)->mergeplans; break;
    case T_BitmapAnd: children = reinterpret_cast<BitmapAnd*>(plan)->bitmapplans; break;
    case T_BitmapOr: children = reinterpret_cast<BitmapOr*>(plan)->bitmapplans; break;
    case T_CustomScan: children = reinterpret_cast<CustomScan*>(plan)->custom_plans; break;
    case T_SubqueryScan:
      CollectSetters(reinterpret_cast<SubqueryScan*>(plan)->subplan, setters);
      break;
    default: break;
  }
  foreach (lc, children) CollectSetters(static_cast<Plan*>(lfirst(lc)), setters);
}

bool WalkReads(PlanState* ps, void* context);
void WalkParameters(ReadWalk* w, Plan* plan);

// Walks subplan `plan_id` (an initPlan or a CTE's plan) once.
void WalkSubplan(ReadWalk* w, int plan_id) {
  if (list_member_int(w->walked, plan_id)) return;
  w->walked = lappend_int(w->walked, plan_id);
  if (plan_id < 1 || plan_id > list_length(w->estate->es_subplanstates)) {
    w->unattributed = true;
    return;
  }
  PlanState* root = static_cast<PlanState*>(list_nth(w->estate->es_subplanstates, plan_id - 1));
  if (root == nullptr) {
    w->unattributed = true;
    return;
  }
  WalkParameters(w, root->plan);
  WalkReads(root, w);
}

// The parameters the tree under `plan` reads but does not set (extParam,
// which covers the whole tree: its subqueries and initPlans included): one
// an initPlan sets brings that initPlan's reads (a CTE's, an uncorrelated
// subquery's, a one-time filter's); any other comes from an enclosing plan
// node (an outer query's row, a lateral or nested-loop parameter), whose
// reads this walk does not follow.
void WalkParameters(ReadWalk* w, Plan* plan) {
  int param = -1;
  while ((param = bms_next_member(plan->extParam, param)) >= 0) {
    int setter = 0;
    ListCell* lc;
    foreach (lc, w->setters)
      if (linitial_int(static_cast<List*>(lfirst(lc))) == param)
        setter = lsecond_int(static_cast<List*>(lfirst(lc)));
    if (setter == 0) w->unattributed = true;
    else WalkSubplan(w, setter);
  }
}

// planstate_tree_walker's visitor: the relations each node scans, the
// subplans it reads (initPlans and subqueries in its expressions are
// children here; CTEs and parameters are followed explicitly).
bool WalkReads(PlanState* ps, void* context) {
  ReadWalk* w = static_cast<ReadWalk*>(context);
  if (ps == nullptr) return false;
  Plan* plan = ps->plan;
  switch (nodeTag(plan)) {
    case T_SeqScan:
    case T_SampleScan:
    case T_IndexScan:
    case T_IndexOnlyScan:
    case T_BitmapHeapScan:
    case T_TidScan:
    case T_TidRangeScan: AddRangeTableRelation(w, reinterpret_cast<Scan*>(plan)->scanrelid); break;
    case T_ForeignScan: {
      ForeignScan* scan = reinterpret_cast<ForeignScan*>(plan);
      if (scan->scan.scanrelid > 0) AddRangeTableRelation(w, scan->scan.scanrelid);
      else if (bms_is_empty(scan->fs_relids)) w->unattributed = true;
      AddRangeTableRelations(w, scan->fs_relids);
      break;
    }
    case T_CustomScan:  // another extension's scan: what it reads is its own
      w->unattributed = true;
      break;
    case T_Append:  // a partitioned or inheritance parent read through its members
      AddRangeTableRelations(w, reinterpret_cast<Append*>(plan)->apprelids);
      break;
    case T_MergeAppend:
      AddRangeTableRelations(w, reinterpret_cast<MergeAppend*>(plan)->apprelids);
      break;
    case T_ModifyTable: {  // a data-modifying CTE returns the rows it changes
      ListCell* lc;
      foreach (lc, reinterpret_cast<ModifyTable*>(plan)->resultRelations)
        AddRangeTableRelation(w, static_cast<Index>(lfirst_int(lc)));
      break;
    }
    case T_CteScan: WalkSubplan(w, reinterpret_cast<CteScan*>(plan)->ctePlanId); break;
    default: break;
  }
  return planstate_tree_walker(
      ps, reinterpret_cast<bool (*)()>(reinterpret_cast<void (*)()>(WalkReads)), w);
}

// Whether view `view` reads one of `relids` (or their ancestors), or no
// relation at all (its rows come from functions or VALUES: it cannot be
// told apart from the others, so it counts as read).
bool ViewFeeds(Oid view, List* relids_with_ancestors) {
  List* reads = ViewReads(view);
  bool reads_a_table = false;
  ListCell* lc;
  foreach (lc, reads) {
    if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_VIEW) continue;
    reads_a_table = true;
    if (list_member_oid(relids_with_ancestors, lfirst_oid(lc))) return true;
  }
  return !reads_a_table;
}

}  // namespace

List* AggregateReads(AggState* agg) {
  EState* estate = agg->ss.ps.state;
  ReadWalk w;
  w.estate = estate;
  if (estate->es_plannedstmt == nullptr) return EStateRelations(estate);
  CollectSetters(estate->es_plannedstmt->planTree, &w.setters);
  ListCell* lc;
  foreach (lc, estate->es_plannedstmt->subplans)
    CollectSetters(static_cast<Plan*>(lfirst(lc)), &w.setters);
  WalkParameters(&w, agg->ss.ps.plan);
  WalkReads(&agg->ss.ps, &w);
  if (w.unattributed) return EStateRelations(estate);  // over-charging is safe
  // Views: the statement's range table keeps each view it expanded; one
  // counts as read when the relations it reads are among the scanned ones.
  List* with_ancestors = list_copy(w.relids);
  foreach (lc, w.relids)
    with_ancestors = list_concat_unique_oid(with_ancestors, AncestorsOf(lfirst_oid(lc)));
  foreach (lc, estate->es_range_table) {
    RangeTblEntry* rte = lfirst_node(RangeTblEntry, lc);
    if (rte->rtekind == RTE_RELATION && get_rel_relkind(rte->relid) == RELKIND_VIEW &&
        !list_member_oid(w.relids, rte->relid) && ViewFeeds(rte->relid, with_ancestors))
      w.relids = lappend_oid(w.relids, rte->relid);
  }
  return w.relids;
}

Oid* AggregateRelations(AggState* agg, const char* dataset, int* count) {
  return WithDataset(AggregateReads(agg), dataset, count);
}

Oid* RelationsRead(FunctionCallInfo fcinfo, const char* dataset, int* count) {
  if (fcinfo->context != nullptr && IsA(fcinfo->context, AggState))
    return AggregateRelations(reinterpret_cast<AggState*>(fcinfo->context), dataset, count);
  return WithDataset(NIL, dataset, count);
}

Oid* StatementRelations(EState* estate, const char* dataset, int* count) {
  return WithDataset(EStateRelations(estate), dataset, count);
}

// The rules of view `view` (its "_RETURN" rule, and any other), by OID.
static List* RulesOf(Oid view) {
  List* rules = NIL;
  Relation rewrite = table_open(RewriteRelationId, AccessShareLock);
  ScanKeyData key;
  ScanKeyInit(&key, Anum_pg_rewrite_ev_class, BTEqualStrategyNumber, F_OIDEQ,
              ObjectIdGetDatum(view));
  SysScanDesc scan = systable_beginscan(rewrite, RewriteRelRulenameIndexId, true, nullptr, 1, &key);
  HeapTuple tuple;
  while (HeapTupleIsValid(tuple = systable_getnext(scan)))
    rules = lappend_oid(rules, reinterpret_cast<Form_pg_rewrite>(GETSTRUCT(tuple))->oid);
  systable_endscan(scan);
  table_close(rewrite, AccessShareLock);
  return rules;
}

// Every relation (table, partitioned table, materialized view, foreign
// table, view) the rules of view `view` read, recursively through the views
// among them (pg_depend of each view's "_RETURN" rule), nearest first.
static List* ViewReads(Oid view) {
  List* read = NIL;
  List* pending = list_make1_oid(view);
  Relation depend = table_open(DependRelationId, AccessShareLock);
  while (pending != NIL) {
    Oid current = linitial_oid(pending);
    pending = list_delete_first(pending);
    ListCell* rule;
    foreach (rule, RulesOf(current)) {
      ScanKeyData keys[2];
      ScanKeyInit(&keys[0], Anum_pg_depend_classid, BTEqualStrategyNumber, F_OIDEQ,
                  ObjectIdGetDatum(RewriteRelationId));
      ScanKeyInit(&keys[1], Anum_pg_depend_objid, BTEqualStrategyNumber, F_OIDEQ,
                  ObjectIdGetDatum(lfirst_oid(rule)));
      SysScanDesc scan = systable_beginscan(depend, DependDependerIndexId, true, nullptr, 2, keys);
      HeapTuple tuple;
      while (HeapTupleIsValid(tuple = systable_getnext(scan))) {
        Form_pg_depend dep = reinterpret_cast<Form_pg_depend>(GETSTRUCT(tuple));
        Oid target = dep->refobjid;
        if (dep->refclassid != RelationRelationId || target == view || target == current ||
            list_member_oid(read, target))
          continue;
        // Only relations whose rows a query reads (a sequence or a type's
        // relation is named, not read).
        char kind = get_rel_relkind(target);
        if (kind != RELKIND_RELATION && kind != RELKIND_PARTITIONED_TABLE &&
            kind != RELKIND_MATVIEW && kind != RELKIND_FOREIGN_TABLE && kind != RELKIND_VIEW)
          continue;
        read = lappend_oid(read, target);
        if (kind == RELKIND_VIEW) pending = lappend_oid(pending, target);
      }
      systable_endscan(scan);
    }
  }
  table_close(depend, AccessShareLock);
  return read;
}

Oid* TrainRelations(Oid relid, Oid dataset, int* count) {
  List* relids = find_all_inheritors(relid, AccessShareLock, nullptr);
  // A view: every relation its body reads, through nested views, with their
  // partitions and inheritance children, as the rewritten query's range
  // table lists them (the view itself stays in it too).
  if (get_rel_relkind(relid) == RELKIND_VIEW) {
    ListCell* lc;
    foreach (lc, ViewReads(relid)) {
      ListCell* member;
      foreach (member, find_all_inheritors(lfirst_oid(lc), AccessShareLock, nullptr))
        relids = list_append_unique_oid(relids, lfirst_oid(member));
    }
  }
  if (OidIsValid(dataset)) relids = list_append_unique_oid(relids, dataset);
  return WithAncestors(relids, count);
}

}  // namespace dperm::pg
