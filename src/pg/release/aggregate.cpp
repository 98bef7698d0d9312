// The training aggregates dp_logreg, dp_huber and dp_softmax (docs/design.md
// section 3, item 2), and any other loss's of losses.def: the transition
// functions below are one per label rule (row_buffer.hpp), and the loss is
// the one whose aggregate is running (AggregateLoss).
//
// The first row builds the release's request (release_request.hpp) from
// public inputs only: the options parsed once, the relations read, d. The
// transition function appends each row, clipped and sanitised, to the
// release's row buffer in the aggregate memory context (row_buffer.hpp:
// stride d + 1, the d features, then the label, target or class index); the
// core views it with Eigen::Map, no copy.
// The buffer is capped by dperm.max_buffer; past it the rows are only
// counted and the final function refuses (RaiseBufferRefusal). The aggregates are
// PARALLEL RESTRICTED with no combine function: shipping every row from the
// workers to the leader made a parallel plan slower than a serial one and
// overflowed the 1 GB limit of a serialised state; tables that do not fit
// train by dperm.train's streaming mode (streaming.cpp). The final function
// hands the request and the buffer to the release pipeline (release.cpp).
#include "dperm/options/options.hpp"

#include "base/citus.hpp"
#include "types/options_pg.hpp"
#include "guard/privacy_unit.hpp"
#include "release/progress.hpp"
#include "guard/relations.hpp"
#include "release/release.hpp"
#include "release/release_checks.hpp"
#include "release/release_guard.hpp"
#include "release/row_buffer.hpp"

extern "C" {
#include "miscadmin.h"
#include "nodes/primnodes.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
}

namespace dperm::pg {
namespace {

// Aggregate state; plain data, lives in the aggregate memory context.
struct RowState {
  ReleaseRequest request;  // built at the first row (NewRequest)
  RowBuffer rows;
  uint64 progress;  // the dperm.progress row it began, or 0
  int64 read;       // rows read while it reports
};

// The loss of the running aggregate: the one whose SQL aggregate
// (losses.def, LossAggregateName) has its name, and whose label kind the
// transition's rule stores. Each loss's aggregate has a transition
// function of its own in SQL (never another loss's: PostgreSQL shares one
// transition state between aggregates of the same transition function and
// arguments in a statement), all of them one of the C functions below.
LossKind AggregateLoss(FunctionCallInfo fcinfo, LabelRule rule) {
  Aggref* aggref = AggGetAggref(fcinfo);
  char* name = aggref != nullptr ? get_func_name(aggref->aggfnoid) : nullptr;
  LossKind loss;
  if (name == nullptr || !dperm::LossForAggregate(name, &loss) ||
      dperm::LossLabel(loss) != LabelKindOf(rule))
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("aggregate %s is not a dperm training aggregate of this label",
                           name != nullptr ? name : "?")));
  return loss;
}

MemoryContext AggregateContext(FunctionCallInfo fcinfo, const char* what) {
  MemoryContext context;
  int kind = AggCheckCallContext(fcinfo, &context);
  if (kind == 0)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("%s called in non-aggregate context", what)));
  if (kind == AGG_CONTEXT_WINDOW)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("dperm training aggregates cannot be used as window functions"),
                    errhint("Every window frame would be a separate release.")));
  return context;
}

// The request of a release whose first row arrives: every check here
// needs only public inputs (the options, the statement's relations and the
// catalog) and runs before the first row is kept; the release guard
// (release_guard.cpp) made the same checks before the statement read any
// row. Built in the aggregate's memory (`context`), for the current user.
void NewRequest(FunctionCallInfo fcinfo, MemoryContext context, LossKind loss, Jsonb* options,
                const char* name, ReleaseRequest* r) {
  MemoryContext old = MemoryContextSwitchTo(context);
  r->loss = loss;
  r->role = GetUserId();
  r->parsed = ParseOptionsJsonb(options);
  r->options = static_cast<Jsonb*>(palloc(VARSIZE(options)));
  memcpy(r->options, options, VARSIZE(options));
  MemoryContextSwitchTo(old);
  const Options& o = r->parsed.options;
  RunCore([&] { CheckOptionsForLoss(o, loss); });
  CheckSeedAllowed(o);
  CheckRowIndependentOptions(fcinfo, name);
  // Nothing here bounds a unit's rows (privacy_unit.hpp): only dperm.train does.
  CheckUnitOption(o, 0, name);
  old = MemoryContextSwitchTo(context);
  r->relations = RelationsRead(fcinfo, r->parsed.dataset, &r->n_relations);
  MemoryContextSwitchTo(old);
  RefuseUnitRelations(r->relations, r->n_relations, name);
  r->strict = ChargedStrictly(r->relations, r->n_relations);
  r->d = DeclaredDimension(o);
  if (r->strict && r->d < 0) RaiseUndeclaredDimension(name);
  if (r->d >= 0) CheckCoefficientCount(loss, r->d, o);
}

// Ends the dperm.progress row of a state whose final function did not.
void EndStateProgress(void* arg) { ProgressEnd(static_cast<RowState*>(arg)->progress); }

// dperm.progress for a new state: a row of its own on `relid`, the
// statement's first relation (unless the backend reports something else),
// ended by the final function or, should that never run (a LIMIT that
// stops a grouped scan), when the aggregate's memory is reset.
void StartProgress(MemoryContext context, RowState* st, Oid relid) {
  st->progress = ProgressBegin(relid, st->request.loss);
  st->request.reports = st->progress != 0;
  if (!st->request.reports) return;
  MemoryContextCallback* end = static_cast<MemoryContextCallback*>(
      MemoryContextAlloc(context, sizeof(MemoryContextCallback)));
  end->func = EndStateProgress;
  end->arg = st;
  MemoryContextRegisterResetCallback(context, end);
  ProgressSetMode(ProgressMode::kInMemory);
  const Options& o = st->request.parsed.options;
  if (o.has_algorithm) ProgressSetAlgorithm(o.algorithm);
  ProgressSetPassesPlanned(1);  // the rows are read once, then trained on in memory
  ProgressSetPhase(ProgressPhase::kReadingRows);
  ProgressStartPass();
}

// One transition. Every row is kept (the row buffer's rule): features of
// any shape are read in storage order and truncated or padded with zeros
// to the public d, NULL features are the zero vector, then clipped; labels
// by StoredLabel. Nothing here fails on a row's values or shape.
Datum Transition(FunctionCallInfo fcinfo, LabelRule rule) {
  MemoryContext context = AggregateContext(fcinfo, "dperm's training transition");
  if (PG_ARGISNULL(3))
    ereport(ERROR,
            (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("dperm options must not be NULL")));
  RowState* st = PG_ARGISNULL(0) ? nullptr : reinterpret_cast<RowState*>(PG_GETARG_POINTER(0));
  if (st == nullptr) {
    const LossKind loss = AggregateLoss(fcinfo, rule);
    const char* name = dperm::LossAggregateName(loss);
    // Before the first row is kept: not on a Citus table or shard (citus.cpp).
    List* relids = RangeTableRelations(fcinfo);
    RefuseCitusRelations(relids, name);
    st = static_cast<RowState*>(MemoryContextAllocZero(context, sizeof(RowState)));
    NewRequest(fcinfo, context, loss, PG_GETARG_JSONB_P(3), name, &st->request);
    const Options& o = st->request.parsed.options;
    InitRowBuffer(&st->rows, context, st->request.d, rule, o, o.classes);
    StartProgress(context, st, relids == NIL ? InvalidOid : linitial_oid(relids));
  }
  if (st->request.reports) {
    st->read++;
    ProgressCountRow();
  }
  RowBuffer* rows = &st->rows;
  double label = StoredLabel(fcinfo, rule, rows->target_bound, rows->classes);
  ArrayType* features = PG_ARGISNULL(1) ? nullptr : PG_GETARG_ARRAYTYPE_P(1);
  if (features != nullptr && rows->d < 0) {
    // d not declared: the first non-NULL features decide it (public only
    // when no budget or protection applies: NewRequest).
    const int d = ArrayGetNItems(ARR_NDIM(features), ARR_DIMS(features));
    CheckCoefficientCount(st->request.loss, d, st->request.parsed.options);
    SetRowDimension(rows, d);
  }
  AddRow(rows, features, label);
  PG_RETURN_POINTER(st);
}

}  // namespace

}  // namespace dperm::pg

using namespace dperm::pg;

// The transitions of a training aggregate (float8[], label, jsonb), one per
// label rule: a new loss's SQL transition function names one of the four
// generic symbols (docs/architecture.md, "How to add"). The older names
// are those the shipped SQL scripts name, the same functions.

// A binary label given as boolean (dp_logreg(float8[], boolean, jsonb)).
DPERM_FUNCTION(dperm_binary_bool_transition) { return Transition(fcinfo, LabelRule::kBoolean); }
DPERM_FUNCTION(dperm_logreg_bool_transition) { return Transition(fcinfo, LabelRule::kBoolean); }

// A binary label given as float8, positive when > 0 (dp_logreg(float8[], float8, jsonb)).
DPERM_FUNCTION(dperm_binary_float_transition) {
  return Transition(fcinfo, LabelRule::kBinaryFloat);
}
DPERM_FUNCTION(dperm_logreg_float_transition) {
  return Transition(fcinfo, LabelRule::kBinaryFloat);
}

// A float8 target (dp_huber(float8[], float8, jsonb)).
DPERM_FUNCTION(dperm_target_transition) { return Transition(fcinfo, LabelRule::kTarget); }
DPERM_FUNCTION(dperm_huber_transition) { return Transition(fcinfo, LabelRule::kTarget); }

// An int class index 0 .. K-1 (dp_softmax(float8[], int, jsonb)).
DPERM_FUNCTION(dperm_class_transition) { return Transition(fcinfo, LabelRule::kClass); }
DPERM_FUNCTION(dperm_softmax_transition) { return Transition(fcinfo, LabelRule::kClass); }

// dperm.combine, dperm.serialize, dperm.deserialize: the support functions
// of the aggregates up to 0.5.0, dropped by the 0.6.0 upgrade. Only the
// replay of sql/dperm--0.1.0.sql still needs their symbols.
DPERM_FUNCTION(dperm_combine) {
  ereport(ERROR,
          (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
           errmsg("dperm training aggregates no longer combine partial states"),
           errhint("ALTER EXTENSION dperm UPDATE, then train large tables with dperm.train.")));
  PG_RETURN_NULL();
}
DPERM_FUNCTION(dperm_serialize) { return dperm_combine_body(fcinfo); }
DPERM_FUNCTION(dperm_deserialize) { return dperm_combine_body(fcinfo); }

// Final: the request and the rows to the release pipeline (release.cpp),
// which plans from public inputs, charges the ledger, trains and releases.
DPERM_FUNCTION(dperm_final) {
  AggregateContext(fcinfo, "dperm_final");
  if (PG_ARGISNULL(0)) PG_RETURN_NULL();  // no rows at all: n = 0
  RowState* st = reinterpret_cast<RowState*>(PG_GETARG_POINTER(0));
  ReleaseRequest& request = st->request;
  if (request.reports) ProgressEndPass(st->read);
  if (st->rows.d < 0) CheckCoefficientCount(request.loss, 0, request.parsed.options);
  FinishRows(&st->rows);  // every features value NULL: d = 0
  if (st->rows.over_buffer) RaiseBufferRefusal();
  request.n = st->rows.n;
  request.d = st->rows.d;
  ReleaseInput input = {&st->rows, nullptr, nullptr, nullptr};
  Datum model = Release(request, input);
  ProgressEnd(st->progress);
  PG_RETURN_DATUM(model);
}
