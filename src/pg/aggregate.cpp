// The training aggregates dp_logreg, dp_huber and dp_softmax (DESIGN.md
// section 3.2).
//
// The transition function appends each row, clipped and sanitised, to one
// contiguous buffer in the aggregate memory context (stride d + 1: the d
// features, then the label, target or class index); the core views it with
// Eigen::Map, no copy.
// The buffer is capped by dperm.max_buffer; past it the rows are only
// counted and the final function refuses (BufferRefusal). The aggregates are
// PARALLEL RESTRICTED with no combine function: shipping every row from the
// workers to the leader made a parallel plan slower than a serial one and
// overflowed the 1 GB limit of a serialised state (issue 12); tables that do
// not fit train by dperm.train's streaming mode (streaming.cpp). The final
// function plans, charges the ledger, then trains.
#include "dperm/accounting/budget.hpp"
#include "dperm/model/model.hpp"
#include "dperm/noise/random.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/rows/rows.hpp"
#include "dperm/release/select_l2.hpp"
#include "dperm/release/train_model.hpp"

#include <cmath>
#include <ctime>

#include "dperm_pg.hpp"
#include "progress.hpp"
#include "protect.hpp"
#include "release_guard.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "nodes/primnodes.h"
#include "port.h"
#include "utils/array.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
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
  MemoryContext old = MemoryContextSwitchTo(context);
  st->options_raw = static_cast<Jsonb*>(palloc(VARSIZE(options)));
  memcpy(st->options_raw, options, VARSIZE(options));
  st->relations = RelationsRead(fcinfo, parsed.dataset, &st->n_relations);
  MemoryContextSwitchTo(old);
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

// The elements of a float8[] of any shape, in storage order (NULL elements
// become NaN, which ClipRow makes 0); *count is their number.
const double* ArrayElements(ArrayType* array, int* count) {
  int n = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
  *count = n;
  if (!ARR_HASNULL(array)) return reinterpret_cast<const double*>(ARR_DATA_PTR(array));
  Datum* values;
  bool* nulls;
  deconstruct_array(array, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
                    &values, &nulls, &n);
  double* out = static_cast<double*>(palloc(sizeof(double) * Max(n, 1)));
  for (int i = 0; i < n; i++) out[i] = nulls[i] ? NAN : DatumGetFloat8(values[i]);
  return out;
}

// How the label argument becomes the stored label.
enum class LabelRule { kBoolean, kLogisticFloat, kHuberTarget, kClass };

// The stored label of a row (the sanitising rule of DESIGN.md section 4:
// every row is kept, so n is the number of rows read whatever their
// values): a NULL label is imputed as a NaN one (logistic: negative;
// Huber: 0), a NULL class as class 0, and a class outside 0 .. K-1 is
// clamped into it, as features are clipped.
double StoredLabel(FunctionCallInfo fcinfo, LabelRule rule, const RowState* st) {
  bool null_label = PG_ARGISNULL(2);
  switch (rule) {
    case LabelRule::kBoolean: return !null_label && PG_GETARG_BOOL(2) ? 1.0 : -1.0;
    case LabelRule::kLogisticFloat: return LogisticLabel(null_label ? NAN : PG_GETARG_FLOAT8(2));
    case LabelRule::kHuberTarget:
      return HuberTarget(null_label ? NAN : PG_GETARG_FLOAT8(2), st->options.target_bound);
    case LabelRule::kClass:
      return null_label ? 0 : Max(0, Min(st->options.classes - 1, PG_GETARG_INT32(2)));
  }
  return 0;
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
  double label = StoredLabel(fcinfo, rule, st);
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
  const double* x = st->over_buffer ? nullptr : ArrayElements(array, &count);
  AppendRow(context, st, x, count, label);
  PG_RETURN_POINTER(st);
}

}  // namespace

// ISO 8601 UTC time of the release.
char* NowIso8601() {
  time_t now = timestamptz_to_time_t(GetCurrentTimestamp());
  struct tm parts;
  gmtime_r(&now, &parts);
  char* out = static_cast<char*>(palloc(32));
  strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return out;
}

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

void CheckReleaseMemory(double bytes, const char* what) {
  const double limit = static_cast<double>(g_max_release_memory_kb) * 1024;
  if (!(bytes > limit)) return;
  ereport(ERROR,
          (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
           errmsg("%s needs about %.0f MB of memory, more than dperm.max_release_memory (%s)",
                  what, ceil(bytes / (1024 * 1024)),
                  GetConfigOptionByName("dperm.max_release_memory", nullptr, false)),
           errdetail("The estimate (memory_bytes in dp_explain) counts the training's vectors of "
                     "the model's dimension, its per-row arrays and its work blocks, from n, d, "
                     "the classes and the options only. Nothing was charged."),
           errhint("Use fewer classes or features, another algorithm (dp_explain shows each "
                   "one's memory_bytes), or ask a superuser to raise dperm.max_release_memory.")));
}

}  // namespace dperm::pg

// Final: plan from public inputs, charge the ledger, train, release.
DPERM_FUNCTION(dperm_final) {
  MemoryContext context = AggregateContext(fcinfo, "dperm_final");
  if (PG_ARGISNULL(0)) PG_RETURN_NULL();  // no rows at all: n = 0
  RowState* st = reinterpret_cast<RowState*>(PG_GETARG_POINTER(0));
  if (st->reports) ProgressEndPass(st->read);
  if (st->d < 0) SetDimension(context, st, 0);  // every features value NULL
  if (st->over_buffer) RaiseBufferRefusal();
  ParsedOptions parsed = ParseOptionsJsonb(st->options_raw);
  const dperm::Options& o = parsed.options;
  LossKind loss = static_cast<LossKind>(st->loss);
  // Every error up to the charge needs only public inputs (the options, n
  // and d) and costs nothing; after it, every outcome is paid for.
  if (o.n_feature_names >= 0 && o.n_feature_names != st->d)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("feature_names has %d names, but the rows have %d features",
                           o.n_feature_names, st->d)));
  PgBox<dperm::InMemoryRelease> planned(CurrentMemoryContext);
  RunCore([&] { planned.Emplace(dperm::PlanInMemoryRelease(o, loss, st->n, st->d)); });
  const dperm::Plan* plan = &planned->plan;
  // Refused before the charge: the estimate needs n, d and the options only.
  CheckReleaseMemory(planned->memory, "the release");
  if (st->reports) ProgressSetPhase(ProgressPhase::kCharging);
  if (st->reports) ProgressSetAlgorithm(plan->algorithm);
  if (g_release.precharged) {
    // dperm.train charged this plan before the first row was read, from
    // the n it counted in the same snapshot.
    if (st->n != g_release.n)
      elog(ERROR, "dperm.train counted %lld rows but read %lld", (long long)g_release.n,
           (long long)st->n);
  } else {
    ChargeRelease(PlanCharge(*plan, o, planned->curve), st->relations, st->n_relations);
  }
  if (st->reports) ProgressSetPhase(ProgressPhase::kTraining);

  uint8 key[32];
  if (!o.has_seed && !pg_strong_random(key, sizeof key))
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                    errmsg("could not generate a random key for the noise")));
  dperm::ModelMeta meta;
  meta.created_at = NowIso8601();
  meta.options_json = JsonbText(st->options_raw);
  meta.feature_names = parsed.feature_names;
  meta.seeded = o.has_seed;
  PgBox<std::vector<double>> w(CurrentMemoryContext);
  PgBox<std::string> json(CurrentMemoryContext);
  PgBox<std::string> selection_json(CurrentMemoryContext);
  RunCore([&] {
    std::array<uint8_t, 32> k;
    memcpy(k.data(), key, sizeof key);
    dperm::SecureRng rng = o.has_seed ? dperm::SecureRng::FromSeed(o.seed) : dperm::SecureRng(k);
    std::vector<double> offset;  // b0 of stage 0 (offset.hpp), recorded in the JSON
    dperm::ModelMeta m = meta;  // a copy: m.offset points into this scope
    m.offset = &offset;
    if (o.l2_auto) {
      dperm::L2SelectionResult r = dperm::TrainL2Selection(planned->selection, st->rows, rng);
      selection_json.Emplace(dperm::L2SelectionJson(planned->selection, &r));
      m.l2_selection_json = selection_json->c_str();
      m.release_epsilon = o.epsilon;
      m.release_delta = o.delta;
      offset = std::move(r.offset);
      w.Emplace(std::move(r.w));
      json.Emplace(dperm::ModelJson(planned->selection.candidates[size_t(r.chosen)], *w, m));
    } else {
      w.Emplace(dperm::TrainModel(*plan, st->rows, rng, &offset));
      json.Emplace(dperm::ModelJson(*plan, *w, m));
    }
  });
  explicit_bzero(key, sizeof key);
  Datum model = MakeModelDatum(loss, st->d, plan->classes, o.fit_intercept, o.feature_bound,
                               plan->options.huber_delta, w->data(), json->c_str());
  ProgressEnd(st->progress);  // a row of its own (under dperm.train, dperm.train ends it)
  PG_RETURN_DATUM(model);
}
