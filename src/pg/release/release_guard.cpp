// The release guard (docs/design.md sections 4 and 6): a release charged to a
// budgeted or protected relation is private with respect to that
// relation's rows only if nothing but the noisy model depends on a row. The
// aggregates sanitise every row (aggregate.cpp); what is left is the
// statement around them, which this file checks before the statement reads
// its first row:
//
//  * the aggregate reads every row of its relations exactly once: no WHERE,
//    join, GROUP BY, HAVING, FILTER, DISTINCT, LIMIT below the aggregate,
//    subquery or row-level policy. Otherwise the model would state the
//    exact size of a filtered input (n = 1 for WHERE id = 7), and a grouped
//    or filtered input that is empty would give no row where its neighbour
//    gives a model or an error;
//  * what it evaluates per row (features, label, a projection below it)
//    cannot fail on one row: the function rule of dperm.train_query
//    (query_functions.hpp). An error that depends on one row reveals it,
//    whatever was charged;
//  * d is declared (the option `dimension`, or `feature_names`);
//  * the options are the same for every row.
//
// The checks run from an ExecutorRun hook, so they do not depend on whether
// the statement has rows: a grouped statement over an empty input never
// calls the aggregate at all. The hook is installed when the library loads,
// at the latest while the executor initialises the first dperm aggregate
// (which loads the library before ExecutorRun reads the hook). The
// aggregates repeat the checks that need no plan (NewRequest, aggregate.cpp).
// dperm.train and dperm.evaluate read through no aggregate: they make the
// catalog's checks before they count (CheckReleaseReads), and the count of a
// view has its plan checked here before it reads a row (RunReleaseCount).
#include "dperm/options/options.hpp"

#include "base/arrays.hpp"
#include "base/citus.hpp"
#include "base/internal_sql.hpp"
#include "types/options_pg.hpp"
#include "guard/privacy_unit.hpp"
#include "guard/query_functions.hpp"
#include "guard/relations.hpp"
#include "release/release_checks.hpp"
#include "release/release_guard.hpp"
#include "release/row_reader.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/nodeAgg.h"
#include "executor/spi.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "utils/array.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

Datum dperm_logreg_bool_transition(PG_FUNCTION_ARGS);
Datum dperm_logreg_float_transition(PG_FUNCTION_ARGS);
Datum dperm_huber_transition(PG_FUNCTION_ARGS);
Datum dperm_softmax_transition(PG_FUNCTION_ARGS);
Datum dperm_binary_bool_transition(PG_FUNCTION_ARGS);
Datum dperm_binary_float_transition(PG_FUNCTION_ARGS);
Datum dperm_target_transition(PG_FUNCTION_ARGS);
Datum dperm_class_transition(PG_FUNCTION_ARGS);
}

namespace dperm::pg {
namespace {

ExecutorRun_hook_type g_previous_run = nullptr;

// Whether `fn` is a transition function of dperm's training aggregates
// (aggregate.cpp, one per label rule; every loss's aggregate names one):
// only dperm's own C functions match.
bool IsTrainingTransition(PGFunction fn) {
  return fn == dperm_logreg_bool_transition || fn == dperm_logreg_float_transition ||
         fn == dperm_huber_transition || fn == dperm_softmax_transition ||
         fn == dperm_binary_bool_transition || fn == dperm_binary_float_transition ||
         fn == dperm_target_transition || fn == dperm_class_transition;
}

// The SQL name of the training aggregate `aggref` calls when its transition
// function is `fn` (its loss's aggregate, losses.def), or nullptr.
const char* TrainingAggregate(PGFunction fn, Aggref* aggref) {
  if (!IsTrainingTransition(fn)) return nullptr;
  const char* name = aggref != nullptr ? get_func_name(aggref->aggfnoid) : nullptr;
  return name != nullptr ? name : "a dperm training aggregate";
}

// The options argument (the third) of a training aggregate call.
Expr* OptionsArgument(Aggref* aggref) {
  if (aggref == nullptr || list_length(aggref->args) < 3) return nullptr;
  return static_cast<TargetEntry*>(list_nth(aggref->args, 2))->expr;
}

// Whether an expression has the same value for every row of one
// aggregation: no column, no subquery, nothing volatile.
bool RowIndependent(Expr* expr) {
  Node* node = reinterpret_cast<Node*>(expr);
  return node == nullptr || (!contain_var_clause(node) && !contain_subplans(node) &&
                             !contain_volatile_functions(node));
}

// Whether an expression reads a PARAM_EXEC parameter (set by an outer plan
// node per row: not known before the statement runs).
bool ReadsExecParam(Node* node, void*) {
  if (node == nullptr) return false;
  if (IsA(node, Param) && reinterpret_cast<Param*>(node)->paramkind == PARAM_EXEC) return true;
  return expression_tree_walker(
      node, reinterpret_cast<bool (*)()>(reinterpret_cast<void (*)()>(ReadsExecParam)), nullptr);
}

// The value of a row-independent options expression, evaluated in the
// statement's executor state (external parameters included); 0 when it
// reads a parameter an outer plan node sets per row (not known before the
// statement runs) or is NULL.
Datum EvaluateOptions(Expr* options, EState* estate) {
  if (options == nullptr || ReadsExecParam(reinterpret_cast<Node*>(options), nullptr))
    return (Datum)0;
  MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);
  ExprState* state = ExecPrepareExpr(options, estate);
  bool isnull = false;
  Datum value = ExecEvalExprSwitchContext(state, GetPerTupleExprContext(estate), &isnull);
  MemoryContextSwitchTo(old);
  return isnull ? (Datum)0 : value;
}

// Whether dperm's catalog has table `name` (a 0.1.0 catalog that is not
// yet updated has no dperm.protected).
bool CatalogHas(const char* name) {
  Oid nsp = get_namespace_oid("dperm", true);
  return OidIsValid(nsp) && OidIsValid(get_relname_relid(name, nsp));
}

// Why the plan below a strict aggregate does not read every row of its
// relations exactly once, or nullptr. `scanned` collects the relations read.
const char* PartialRead(PlanState* ps, List** scanned) {
  if (ps == nullptr) return "it reads no relation";
  Plan* plan = ps->plan;
  Node* targets = reinterpret_cast<Node*>(plan->targetlist);
  if (contain_subplans(targets) || ReadsExecParam(targets, nullptr) || plan->initPlan != NIL)
    return "a subquery computes its input";
  if (plan->qual != NIL)
    return "a WHERE clause, join condition or row-level security policy filters its input";
  switch (nodeTag(ps)) {
    case T_SeqScanState: {
      Oid relid = RelationGetRelid(reinterpret_cast<ScanState*>(ps)->ss_currentRelation);
      if (list_member_oid(*scanned, relid)) return "it reads a relation twice";
      *scanned = lappend_oid(*scanned, relid);
      return nullptr;
    }
    case T_GatherState: return PartialRead(outerPlanState(ps), scanned);
    case T_AppendState: {
      AppendState* append = reinterpret_cast<AppendState*>(ps);
      for (int i = 0; i < append->as_nplans; i++)
        if (const char* why = PartialRead(append->appendplans[i], scanned)) return why;
      return nullptr;
    }
    case T_SubqueryScanState:
      return PartialRead(reinterpret_cast<SubqueryScanState*>(ps)->subplan, scanned);
    case T_ResultState:
      if (reinterpret_cast<Result*>(plan)->resconstantqual != nullptr)
        return "a WHERE clause filters its input";
      return PartialRead(outerPlanState(ps), scanned);
    default: return "its input is joined, sorted, limited, sampled, grouped or made by a function";
  }
}

// Why the statement does not read every row of each budgeted or protected
// relation it is charged to (`strict`), or nullptr: a partition read on
// its own is a subset of its budgeted parent, and partition pruning drops
// both the partitions and the WHERE clause that pruned them.
const char* UnreadRows(List* strict, List* scanned) {
  ListCell* lc;
  foreach (lc, strict) {
    if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_VIEW) continue;  // its tables are listed too
    ListCell* member;
    foreach (member, find_all_inheritors(lfirst_oid(lc), AccessShareLock, nullptr)) {
      char kind = get_rel_relkind(lfirst_oid(member));
      if (kind == RELKIND_PARTITIONED_TABLE || kind == RELKIND_VIEW) continue;
      if (!list_member_oid(scanned, lfirst_oid(member)))
        return "it reads only some partitions or children of a budgeted relation";
    }
  }
  return nullptr;
}

// Refuses a strict aggregate whose statement does not read every row of its
// relations exactly once (public: the plan).
void CheckWholeRelations(AggState* agg, Aggref* aggref, List* strict, const char* name) {
  Agg* plan = reinterpret_cast<Agg*>(agg->ss.ps.plan);
  const char* why = nullptr;
  List* scanned = NIL;
  if (plan->aggstrategy != AGG_PLAIN || plan->groupingSets != NIL) why = "it is grouped (GROUP BY)";
  else if (plan->plan.qual != NIL) why = "HAVING filters it";
  else if (aggref->aggfilter != nullptr) why = "FILTER selects its rows";
  else if (aggref->aggdistinct != NIL) why = "DISTINCT drops rows";
  else if (contain_subplans(reinterpret_cast<Node*>(aggref->args)) ||
           ReadsExecParam(reinterpret_cast<Node*>(aggref->args), nullptr) ||
           plan->plan.initPlan != NIL)
    why = "a subquery computes its arguments";
  else if ((why = PartialRead(outerPlanState(agg), &scanned)) == nullptr)
    why = UnreadRows(strict, scanned);
  if (why == nullptr) return;
  ereport(ERROR,
          (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
           errmsg("%s must read every row of a budgeted or protected relation, but %s", name, why),
           errdetail("A release charged to a budgeted relation is private with respect to its "
                     "rows only when it reads all of them once: the model states n, and a "
                     "filtered, grouped or joined input would make it the exact size of a "
                     "subset. Nothing was charged."),
           errhint("Train on the whole relation: SELECT %s(...) FROM it with no WHERE, JOIN, "
                   "GROUP BY, HAVING, FILTER or DISTINCT, or dperm.train(relation, features, "
                   "label, loss, options). To filter, derive a label, join a lookup or train "
                   "per group, use dperm.train_query(query, features, label, loss, options) or "
                   "dperm.train_query_groups: their input's size is released noisily.",
                   name)));
}

// Checks every target list of the plan below a strict aggregate under the
// function rule: a projection the planner put in a scan, a subquery's or a
// UNION ALL branch's. CheckWholeRelations has admitted only scans, Gather,
// Append, SubqueryScan and Result there, none with a qual.
bool CheckPlanFunctions(PlanState* ps, void* context) {
  if (ps == nullptr) return false;
  const char* name = static_cast<const char*>(context);
  CheckExpressionFunctions(reinterpret_cast<Node*>(ps->plan->targetlist), name);
  CheckExpressionFunctions(reinterpret_cast<Node*>(ps->plan->qual), name);
  return planstate_tree_walker(
      ps, reinterpret_cast<bool (*)()>(reinterpret_cast<void (*)()>(CheckPlanFunctions)), context);
}

// Refuses (0A000, before the charge) a strict aggregate whose per-row
// expressions could fail on one row: the arguments of every aggregate its
// node computes (this one's features, label and ORDER BY; another's, e.g.
// sum(100 / x) beside it, is evaluated on the same rows and would raise as
// well), but a training aggregate's options, which are row-independent,
// and the plan below it.
void CheckRowFunctions(AggState* agg, const char* name) {
  for (int t = 0; t < agg->numtrans; t++) {
    Aggref* aggref = agg->pertrans[t].aggref;
    Expr* options = TrainingAggregate(agg->pertrans[t].transfn.fn_addr, aggref) != nullptr
                        ? OptionsArgument(aggref)
                        : nullptr;
    ListCell* lc;
    foreach (lc, aggref->args) {
      TargetEntry* arg = static_cast<TargetEntry*>(lfirst(lc));
      if (arg->expr != options) CheckExpressionFunctions(reinterpret_cast<Node*>(arg->expr), name);
    }
    CheckExpressionFunctions(reinterpret_cast<Node*>(aggref->aggfilter), name);
  }
  CheckPlanFunctions(outerPlanState(agg), const_cast<char*>(name));
}

// The checks of one training aggregate call of a statement about to run.
void CheckTrainingCall(AggState* agg, Aggref* aggref, const char* name) {
  EState* estate = agg->ss.ps.state;
  // Citus rewrites the statement (its options become a column of the
  // distributed scan): refused as in the transition, with its own hint.
  RefuseCitusRelations(EStateRelations(estate), name);
  Expr* options = OptionsArgument(aggref);
  if (!RowIndependent(options))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("the options of %s must be the same for every row", name),
                    errdetail("They reference a column, run a subquery or call a volatile "
                              "function: one row's options would decide the release. Nothing "
                              "was charged."),
                    errhint("Pass a constant, a parameter or dp_options(...) of constants.")));
  // The options when known before the statement runs, parsed once.
  Datum value = EvaluateOptions(options, estate);
  ParsedOptions parsed;
  if (value != (Datum)0) parsed = ParseOptionsJsonb(DatumGetJsonbP(value));
  int n_relations = 0;
  Oid* relations = AggregateRelations(agg, parsed.dataset, &n_relations);
  // Nothing here bounds a unit's rows (privacy_unit.hpp).
  RefuseUnitRelations(relations, n_relations, name);
  if (value != (Datum)0) CheckUnitOption(parsed.options, 0, name);
  List* strict = StrictRelations(relations, n_relations);
  if (strict == NIL) return;
  if (value != (Datum)0 && dperm::DeclaredDimension(parsed.options) < 0)
    RaiseUndeclaredDimension(name);
  CheckWholeRelations(agg, aggref, strict, name);
  CheckRowFunctions(agg, name);
}

// Whether an expression calls a dperm training aggregate as a window
// function (its transition function's address is dperm's).
bool CallsTrainingWindow(Node* node, void*) {
  if (node == nullptr) return false;
  if (IsA(node, WindowFunc) && reinterpret_cast<WindowFunc*>(node)->winagg) {
    HeapTuple tuple =
        SearchSysCache1(AGGFNOID, ObjectIdGetDatum(reinterpret_cast<WindowFunc*>(node)->winfnoid));
    if (HeapTupleIsValid(tuple)) {
      Oid transfn = reinterpret_cast<Form_pg_aggregate>(GETSTRUCT(tuple))->aggtransfn;
      ReleaseSysCache(tuple);
      FmgrInfo info;
      fmgr_info(transfn, &info);
      if (IsTrainingTransition(info.fn_addr)) return true;
    }
  }
  return expression_tree_walker(
      node, reinterpret_cast<bool (*)()>(reinterpret_cast<void (*)()>(CallsTrainingWindow)),
      nullptr);
}

// Visits every plan node of a statement and checks its training aggregates.
bool CheckNode(PlanState* ps, void* context) {
  if (ps == nullptr) return false;
  // As a window function, every frame would be a release: refused before
  // any row is read (the transition would refuse only once it had a row).
  if (IsA(ps, WindowAggState) &&
      CallsTrainingWindow(reinterpret_cast<Node*>(ps->plan->targetlist), nullptr))
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("dperm training aggregates cannot be used as window functions"),
                    errhint("Every window frame would be a separate release.")));
  if (IsA(ps, AggState)) {
    AggState* agg = reinterpret_cast<AggState*>(ps);
    for (int t = 0; t < agg->numtrans; t++) {
      AggStatePerTrans trans = &agg->pertrans[t];
      if (const char* name = TrainingAggregate(trans->transfn.fn_addr, trans->aggref))
        CheckTrainingCall(agg, trans->aggref, name);
    }
  }
  return planstate_tree_walker(
      ps, reinterpret_cast<bool (*)()>(reinterpret_cast<void (*)()>(CheckNode)), context);
}

// A count of a view of a budgeted or protected relation (RunReleaseCount):
// the view must read every row of them once, checked on the count's plan
// before it runs (and so before the release is charged).
void CheckViewCount(QueryDesc* query) {
  PlanState* ps = query->planstate;
  List* scanned = NIL;
  const char* why = !IsA(ps, AggState) || ps->plan->qual != NIL
                        ? "its plan is not a count"
                        : PartialRead(outerPlanState(ps), &scanned);
  if (why == nullptr) {
    int n_relations = 0;
    Oid* relations = StatementRelations(query->estate, nullptr, &n_relations);
    why = UnreadRows(StrictRelations(relations, n_relations), scanned);
  }
  if (why != nullptr)
    ereport(ERROR,
            (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
             errmsg("a release must read every row of a budgeted or protected relation, but "
                    "in the view, %s",
                    why),
             errdetail("A view that filters, joins or groups the rows of a budgeted relation "
                       "would make the model's n the exact size of a subset. Nothing was "
                       "charged."),
             errhint("Train on the budgeted tables themselves, or on a view that reads them "
                     "whole.")));
}

void GuardedExecutorRun(QueryDesc* query, ScanDirection direction, uint64 count,
                        bool execute_once) {
  if (!query->already_executed && query->planstate != nullptr) {
    CheckNode(query->planstate, nullptr);
    ListCell* lc;  // WITH queries' plans (a CTE scan does not walk into them)
    foreach (lc, query->estate->es_subplanstates)
      CheckNode(static_cast<PlanState*>(lfirst(lc)), nullptr);
  }
  if (g_previous_run != nullptr) g_previous_run(query, direction, count, execute_once);
  else standard_ExecutorRun(query, direction, count, execute_once);
}

}  // namespace

void InstallReleaseGuard() {
  g_previous_run = ExecutorRun_hook;
  ExecutorRun_hook = GuardedExecutorRun;
}

bool ChargedStrictly(const Oid* relations, int n_relations) {
  return StrictRelations(relations, n_relations) != NIL;
}

List* StrictRelations(const Oid* relations, int n_relations) {
  if (n_relations == 0) return NIL;
  bool has_protected = CatalogHas("protected");
  Oid types[1] = {OIDARRAYOID};
  Datum args[1] = {OidArrayDatum(relations, n_relations)};
  MemoryContext caller = CurrentMemoryContext;
  SPI_connect();
  RunAsCatalogOwner(
      has_protected ? "SELECT r FROM pg_catalog.unnest($1) r WHERE"
                      " EXISTS (SELECT 1 FROM dperm.budgets b WHERE b.relation::pg_catalog.oid"
                      " OPERATOR(pg_catalog.=) r)"
                      " OR EXISTS (SELECT 1 FROM dperm.protected p WHERE p.relation::pg_catalog.oid"
                      " OPERATOR(pg_catalog.=) r)"
                    : "SELECT r FROM pg_catalog.unnest($1) r WHERE"
                      " EXISTS (SELECT 1 FROM dperm.budgets b WHERE b.relation::pg_catalog.oid"
                      " OPERATOR(pg_catalog.=) r)",
      1, types, args, nullptr, SPI_OK_SELECT, true);
  List* strict = NIL;
  for (uint64 i = 0; i < SPI_processed; i++) {
    bool isnull;
    Oid relid =
        DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
    MemoryContext spi = MemoryContextSwitchTo(caller);
    strict = lappend_oid(strict, relid);
    MemoryContextSwitchTo(spi);
  }
  SPI_finish();
  return strict;
}

bool CheckReleaseReads(Oid relid, bool is_protected, const Oid* relations, int n_relations,
                       const char* who) {
  if (!is_protected && !ChargedStrictly(relations, n_relations)) return false;
  if (get_rel_relkind(relid) == RELKIND_VIEW)
    return true;  // its count is checked (RunReleaseCount)
  List* scanned = NIL;
  ListCell* lc;
  foreach (lc, find_all_inheritors(relid, AccessShareLock, nullptr)) {
    char kind = get_rel_relkind(lfirst_oid(lc));
    if (kind != RELKIND_PARTITIONED_TABLE && kind != RELKIND_VIEW)
      scanned = lappend_oid(scanned, lfirst_oid(lc));
  }
  if (const char* why = UnreadRows(StrictRelations(relations, n_relations), scanned))
    ereport(ERROR,
            (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
             errmsg("%s must read every row of a budgeted or protected relation, but %s", who, why),
             errdetail("A partition or child read alone is a subset of its budgeted parent: the "
                       "model's n would be the exact size of the subset. Nothing was charged."),
             errhint("Read the budgeted parent.")));
  return true;
}

void RunReleaseCount(Oid reader, Oid relid, bool strict, const char* sql) {
  if (!strict || get_rel_relkind(relid) != RELKIND_VIEW) {
    RunInternalSql(reader, sql, 0, nullptr, nullptr, nullptr, SPI_OK_SELECT, true);
    return;
  }
  // A view: its plan is checked before the count reads a row.
  Portal portal = OpenInternalCursor(reader, sql);
  if (portal->queryDesc == nullptr) elog(ERROR, "dperm: a count is not a single query");
  CheckViewCount(portal->queryDesc);
  FetchInternalCursor(reader, portal, FETCH_ALL);
  SPI_cursor_close(portal);
}

void CheckRowIndependentOptions(FunctionCallInfo fcinfo, const char* aggregate) {
  if (!RowIndependent(OptionsArgument(AggGetAggref(fcinfo))))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("the options of %s must be the same for every row", aggregate),
                    errhint("Pass a constant, a parameter or dp_options(...) of constants.")));
}

}  // namespace dperm::pg
