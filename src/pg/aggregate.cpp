// The training aggregates dp_logreg, dp_huber and dp_softmax (docs/design.md
// section 3, item 2).
//
// The transition function appends each row, clipped and sanitised, to one
// contiguous buffer in the aggregate memory context (stride d + 1: the d
// features, then the label, target or class index); the core views it with
// Eigen::Map, no copy.
// The buffer is capped by dperm.max_buffer; past it the rows are only
// counted and the final function refuses (BufferRefusal). The aggregates are
// PARALLEL RESTRICTED with no combine function: shipping every row from the
// workers to the leader made a parallel plan slower than a serial one and
// overflowed the 1 GB limit of a serialised state; tables that do not fit
// train by dperm.train's streaming mode (streaming.cpp). The final function
// hands the buffer to the release pipeline (release.cpp).
#include "dperm/algorithms/registry.hpp"
#include "dperm/rows/rows.hpp"

#include <cmath>

#include "aggregate.hpp"
#include "privacy_unit.hpp"
#include "arrays.hpp"
#include "charge.hpp"
#include "citus.hpp"
#include "internal_sql.hpp"
#include "model_type.hpp"
#include "settings.hpp"
#include "options_pg.hpp"
#include "pass_aggregate.hpp"
#include "relations.hpp"
#include "release_checks.hpp"
#include "streaming.hpp"
#include "progress.hpp"
#include "release.hpp"
#include "release_guard.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "nodes/primnodes.h"
#include "utils/array.h"
#include "utils/guc.h"
}

namespace dperm::pg {
namespace {

// Aggregate state; plain data, lives in the aggregate memory context.
struct RowState {
  int32 loss;          // LossKind
  int32 d;             // the public d: declared, or (a release charged to no
                       // budgeted or protected relation, d not declared) the
                       // length of the first non-NULL features; -1 before
  int64 n;             // rows read: every row counts (ReadRow's rule)
  int64 capacity;      // rows the buffer holds
  double* rows;        // capacity * (d + 1) doubles
  double* pending;     // labels of rows read before d was known (d not declared)
  int64 n_pending;
  int64 pending_capacity;
  bool over_buffer;    // n (d + 1) float8 passed dperm.max_buffer: rows only counted
  Jsonb* options_raw;  // the options as given (the same for every row: checked
                       // to be row-independent before the first row)
  Options options;
  Oid* relations;      // the relations the release is charged to
  int n_relations;
  bool strict;         // charged to a budgeted or protected relation
  bool reports;        // counts its rows in dperm.progress (StartProgress)
  uint64 progress;     // the dperm.progress row it began itself, or 0
  int64 read;          // rows read while it reports
};

Size RowBytes(int64 rows, int32 d) {
  return static_cast<Size>(rows) * (d + 1) * sizeof(double);
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

// A new state: every check here needs only public inputs (the options, the
// statement's relations and the catalog) and runs before the first row is
// kept; the release guard (release_guard.cpp) made the same checks before
// the statement read any row.
RowState* NewState(FunctionCallInfo fcinfo, MemoryContext context, LossKind loss, Jsonb* options,
                   const char* name) {
  RowState* st = static_cast<RowState*>(MemoryContextAllocZero(context, sizeof(RowState)));
  st->loss = static_cast<int32>(loss);
  ParsedOptions parsed = ParseOptionsJsonb(options);
  st->options = parsed.options;
  const Options& o = st->options;
  RunCore([&] { CheckOptionsForLoss(o, loss); });
  CheckSeedAllowed(o);
  CheckRowIndependentOptions(fcinfo, name);
  CheckUnitOption(o, g_release.unit_rows, name);
  MemoryContext old = MemoryContextSwitchTo(context);
  st->options_raw = static_cast<Jsonb*>(palloc(VARSIZE(options)));
  memcpy(st->options_raw, options, VARSIZE(options));
  st->relations = RelationsRead(fcinfo, parsed.dataset, &st->n_relations);
  MemoryContextSwitchTo(old);
  // Only dperm.train bounds a unit's rows (the release guard refused this
  // statement already; here for a statement the guard did not see).
  if (!OidIsValid(g_release.caller)) RefuseUnitRelations(st->relations, st->n_relations, name);
  st->strict = g_release.strict || ChargedStrictly(st->relations, st->n_relations);
  // dperm.train decided d before reading (declared, or its own public rule).
  st->d = OidIsValid(g_release.caller) ? g_release.dimension : DeclaredDimension(o);
  if (st->strict && st->d < 0) RaiseUndeclaredDimension(name);
  if (st->d >= 0) CheckCoefficientCount(loss, st->d, o);
  return st;
}

// Ends the dperm.progress row of a state whose final function did not.
void EndStateProgress(void* arg) { ProgressEnd(static_cast<RowState*>(arg)->progress); }

// dperm.progress for a new state. Under dperm.train its rows count in the
// row dperm.train began; called directly, the aggregate begins a row of its
// own on `relid`, the statement's first relation (unless the backend
// reports something else), ended by the final function or, should that
// never run (a LIMIT that stops a grouped scan), when the aggregate's memory
// is reset.
void StartProgress(MemoryContext context, RowState* st, Oid relid) {
  if (OidIsValid(g_release.caller)) {
    st->reports = g_progress.active;
  } else {
    st->progress = ProgressBegin(relid, static_cast<LossKind>(st->loss));
    st->reports = st->progress != 0;
    if (!st->reports) return;
    MemoryContextCallback* end = static_cast<MemoryContextCallback*>(
        MemoryContextAlloc(context, sizeof(MemoryContextCallback)));
    end->func = EndStateProgress;
    end->arg = st;
    MemoryContextRegisterResetCallback(context, end);
    ProgressSetMode(ProgressMode::kInMemory);
  }
  if (!st->reports) return;
  if (st->options.has_algorithm) ProgressSetAlgorithm(st->options.algorithm);
  ProgressSetPassesPlanned(1);  // the rows are read once, then trained on in memory
  ProgressSetPhase(ProgressPhase::kReadingRows);
  ProgressStartPass();
}

// dperm.max_buffer in bytes.
Size BufferLimit() { return static_cast<Size>(g_max_buffer_kb) * 1024; }

// Whether `rows` rows of shape d (plus the label) fit under dperm.max_buffer.
bool BufferFits(int64 rows, int32 d) {
  return static_cast<double>(rows) * (Max(d, 0) + 1) * sizeof(double) <=
         static_cast<double>(BufferLimit());
}

// Room for `more` rows in the buffer (doubling, huge allocations allowed).
void Reserve(MemoryContext context, RowState* st, int64 more) {
  if (st->n + more <= st->capacity) return;
  // Start with up to 1024 rows, but no more than about 8 MB.
  int64 first = Max((int64)1, Min((int64)1024, (int64)(8 << 20) / (int64)RowBytes(1, st->d)));
  int64 capacity = Max(st->capacity * 2, Max(st->n + more, first));
  // Never more than dperm.max_buffer (the caller checked that n + more fit).
  capacity = Max(st->n + more, Min(capacity, (int64)(BufferLimit() / RowBytes(1, st->d))));
  Size bytes = RowBytes(capacity, st->d);
  st->rows = static_cast<double*>(
      st->rows == nullptr ? MemoryContextAllocHuge(context, bytes)
                          : repalloc_huge(st->rows, bytes));
  st->capacity = capacity;
}

// The first min(elements, d) elements of a float8[] of any shape, in
// storage order (NULL elements become NaN, which ClipRow makes 0); *count
// is their number. Reads none past d (AppendRow drops them anyway): a row's
// cost does not grow with its array's length.
const double* ArrayElements(ArrayType* array, int d, int* count) {
  int n = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
  *count = Min(n, d);
  if (!ARR_HASNULL(array)) return reinterpret_cast<const double*>(ARR_DATA_PTR(array));
  double* out = static_cast<double*>(palloc(sizeof(double) * Max(*count, 1)));
  *count = Float8ArrayPrefix(array, d, out);
  return out;
}

// Keeps a label of a row read before d is known (d not declared, and
// every features value so far NULL): the row is the zero vector.
void AddPending(MemoryContext context, RowState* st, double label) {
  if (st->n_pending == st->pending_capacity) {
    st->pending_capacity = Max((int64)64, 2 * st->pending_capacity);
    Size bytes = sizeof(double) * st->pending_capacity;
    st->pending = static_cast<double*>(st->pending == nullptr
                                           ? MemoryContextAllocHuge(context, bytes)
                                           : repalloc_huge(st->pending, bytes));
  }
  st->pending[st->n_pending++] = label;
}

// Appends one sanitised row: its features (nullptr: NULL) truncated or
// padded with zeros to d, then clipped (ClipRow), and its label.
void AppendRow(MemoryContext context, RowState* st, const double* x, int count, double label) {
  int d = st->d;
  if (!BufferFits(st->n + 1, d)) {  // past the cap: the rows are dropped, the count goes on
    st->over_buffer = true;
    if (st->rows != nullptr) pfree(st->rows);
    st->rows = nullptr;
    st->capacity = 0;
  }
  if (st->over_buffer) {
    st->n++;
    return;
  }
  Reserve(context, st, 1);
  double* row = st->rows + st->n * (d + 1);
  if (x != nullptr && count >= d) {
    ClipRow(x, d, st->options.feature_bound, row);
  } else {
    double* padded = static_cast<double*>(palloc0(sizeof(double) * Max(d, 1)));
    if (x != nullptr) memcpy(padded, x, sizeof(double) * count);
    ClipRow(padded, d, st->options.feature_bound, row);
    pfree(padded);
  }
  row[d] = label;
  st->n++;
}

// Fixes d at `d` (the first non-NULL features of a release whose d is not
// declared) and appends the rows read before it as zero vectors.
void SetDimension(MemoryContext context, RowState* st, int d) {
  CheckCoefficientCount(static_cast<LossKind>(st->loss), d, st->options);
  st->d = d;
  for (int64 i = 0; i < st->n_pending; i++) AppendRow(context, st, nullptr, 0, st->pending[i]);
  st->n_pending = 0;
}

// One transition. Every row is kept (ReadRow's rule): features of any
// shape are read in storage order and truncated or padded with zeros to the
// public d, NULL features are the zero vector, then clipped; labels by
// StoredLabel. Nothing here fails on a row's values or shape.
Datum Transition(FunctionCallInfo fcinfo, LossKind loss, LabelRule rule,
                 const char* name) {
  MemoryContext context = AggregateContext(fcinfo, name);
  if (PG_ARGISNULL(3))
    ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                    errmsg("dperm options must not be NULL")));
  RowState* st = PG_ARGISNULL(0) ? nullptr : reinterpret_cast<RowState*>(PG_GETARG_POINTER(0));
  if (st == nullptr) {
    // Before the first row is kept: not on a Citus table or shard (citus.cpp).
    List* relids = RangeTableRelations(fcinfo);
    RefuseCitusRelations(relids, name);
    st = NewState(fcinfo, context, loss, PG_GETARG_JSONB_P(3), name);
    StartProgress(context, st, relids == NIL ? InvalidOid : linitial_oid(relids));
  }
  if (st->reports) {
    st->read++;
    ProgressCountRow();
  }
  double label = StoredLabel(fcinfo, rule, st->options.target_bound, st->options.classes);
  if (PG_ARGISNULL(1)) {
    if (st->d < 0)
      AddPending(context, st, label);
    else
      AppendRow(context, st, nullptr, 0, label);
    PG_RETURN_POINTER(st);
  }
  ArrayType* array = PG_GETARG_ARRAYTYPE_P(1);
  int count = 0;
  if (st->d < 0) SetDimension(context, st, ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array)));
  const double* x = st->over_buffer ? nullptr : ArrayElements(array, st->d, &count);
  AppendRow(context, st, x, count, label);
  PG_RETURN_POINTER(st);
}

}  // namespace

}  // namespace dperm::pg

using dperm::LossKind;
using namespace dperm::pg;

// dp_logreg(float8[], boolean, jsonb) transition.
DPERM_FUNCTION(dperm_logreg_bool_transition) {
  return Transition(fcinfo, LossKind::kLogistic, LabelRule::kBoolean, "dp_logreg");
}

// dp_logreg(float8[], float8, jsonb) transition: positive when label > 0.
DPERM_FUNCTION(dperm_logreg_float_transition) {
  return Transition(fcinfo, LossKind::kLogistic, LabelRule::kLogisticFloat, "dp_logreg");
}

// dp_huber(float8[], float8, jsonb) transition.
DPERM_FUNCTION(dperm_huber_transition) {
  return Transition(fcinfo, LossKind::kHuber, LabelRule::kHuberTarget, "dp_huber");
}

// dp_softmax(float8[], int, jsonb) transition: the class index 0 .. K-1.
DPERM_FUNCTION(dperm_softmax_transition) {
  return Transition(fcinfo, LossKind::kSoftmax, LabelRule::kClass, "dp_softmax");
}

// dperm.combine, dperm.serialize, dperm.deserialize: the support functions
// of the aggregates up to 0.5.0, dropped by the 0.6.0 upgrade. Only the
// replay of sql/dperm--0.1.0.sql still needs their symbols.
DPERM_FUNCTION(dperm_combine) {
  ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                  errmsg("dperm training aggregates no longer combine partial states"),
                  errhint("ALTER EXTENSION dperm UPDATE, then train large tables with dperm.train.")));
  PG_RETURN_NULL();
}
DPERM_FUNCTION(dperm_serialize) { return dperm_combine_body(fcinfo); }
DPERM_FUNCTION(dperm_deserialize) { return dperm_combine_body(fcinfo); }

namespace dperm::pg {

bool InMemoryFits(int64 n, int d) { return BufferFits(n, d); }

void RaiseBufferRefusal() {
  ereport(ERROR,
          (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
           errmsg("the rows do not fit in dperm.max_buffer (%s)",
                  GetConfigOptionByName("dperm.max_buffer", nullptr, false)),
           errdetail("dp_logreg, dp_huber and dp_softmax keep every row (d + 1 float8 values) in "
                     "the backend's memory. Nothing was charged: whether n (d + 1) 8 bytes pass "
                     "the limit depends only on n and d, which every release makes public."),
           errhint("Train with dperm.train(relation, features, label, loss, options), which "
                   "streams over the relation in constant memory; or a superuser can raise "
                   "dperm.max_buffer.")));
  pg_unreachable();
}

}  // namespace dperm::pg

// Final: the rows to the release pipeline (release.cpp), which plans from
// public inputs, charges the ledger, trains and releases.
DPERM_FUNCTION(dperm_final) {
  MemoryContext context = AggregateContext(fcinfo, "dperm_final");
  if (PG_ARGISNULL(0)) PG_RETURN_NULL();  // no rows at all: n = 0
  RowState* st = reinterpret_cast<RowState*>(PG_GETARG_POINTER(0));
  if (st->reports) ProgressEndPass(st->read);
  if (st->d < 0) SetDimension(context, st, 0);  // every features value NULL
  if (st->over_buffer) RaiseBufferRefusal();
  ParsedOptions parsed = ParseOptionsJsonb(st->options_raw);
  ReleaseRequest request = {static_cast<LossKind>(st->loss), &parsed, st->options_raw, st->n,
                            st->d, st->relations, st->n_relations, g_release.precharged,
                            st->reports, g_release.unit_column, g_release.unit_rows,
                            g_release.unit_count_epsilon};
  Datum model = ReleaseFromRows(request, st->rows);
  ProgressEnd(st->progress);  // a row of its own (under dperm.train, dperm.train ends it)
  PG_RETURN_DATUM(model);
}
