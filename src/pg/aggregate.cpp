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
#include "dperm/budget.hpp"
#include "dperm/model.hpp"
#include "dperm/random.hpp"
#include "dperm/registry.hpp"
#include "dperm/rows.hpp"
#include "dperm/select_l2.hpp"
#include "dperm/train.hpp"

#include <cmath>
#include <ctime>

#include "dperm_pg.hpp"
#include "progress.hpp"

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

// A row-dependent error found while reading the rows. It is not raised at
// once (it would tell the caller something about the rows for free): the
// rest of the rows are skipped, and the final function charges the release
// before it raises the error.
enum DeferredError : int32 { kNoError = 0, kRaggedRow = 1, kMultiDimRow = 2, kOptionsDiffer = 3 };

// Aggregate state; plain data, lives in the aggregate memory context.
struct RowState {
  int32 loss;          // LossKind
  int32 d;             // features per row, -1 until the first row
  int64 n;             // rows kept
  int64 seen;          // rows the release would keep, counted even when not
                       // buffered (past dperm.max_buffer, after a deferred error)
  int32 shape_d;       // element count of the first counted features array, -1 before
  int64 capacity;      // rows the buffer holds
  double* rows;        // capacity * (d + 1) doubles
  Jsonb* options_raw;  // the options as given, to check every row agrees
  Options options;
  int32 deferred;      // DeferredError
  int32 deferred_dim;  // the offending row's dimension
  bool stable_options; // the options argument is a constant or parameter: the
                       // same for every row, so compared on the first row only
  bool impute;         // dperm.train: rows with NULLs are imputed, never skipped
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

RowState* NewState(MemoryContext context, LossKind loss, Jsonb* options) {
  RowState* st = static_cast<RowState*>(MemoryContextAllocZero(context, sizeof(RowState)));
  st->loss = static_cast<int32>(loss);
  st->d = -1;
  st->shape_d = -1;
  st->options = ParseOptionsJsonb(options).options;
  // Checked before any row is read: dp_softmax's transition needs K, and an
  // option error must not depend on the rows.
  const Options& o = st->options;
  RunCore([&] { CheckOptionsForLoss(o, loss); });
  CheckSeedAllowed(o);
  st->options_raw = static_cast<Jsonb*>(MemoryContextAlloc(context, VARSIZE(options)));
  memcpy(st->options_raw, options, VARSIZE(options));
  // dperm.train: the dimension is the column's public shape, read before.
  st->impute = OidIsValid(g_release.caller);
  if (st->impute) st->d = st->shape_d = g_release.dimension;
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
  if (st->impute) {
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

// Whether the aggregate's options argument (its third) is a constant or a
// query parameter, hence the same value for every row of the aggregate.
bool OptionsArgumentIsConstant(FunctionCallInfo fcinfo) {
  Aggref* aggref = AggGetAggref(fcinfo);
  if (aggref == nullptr || list_length(aggref->args) < 3) return false;
  Node* arg = reinterpret_cast<Node*>(static_cast<TargetEntry*>(list_nth(aggref->args, 2))->expr);
  return IsA(arg, Const) ||
         (IsA(arg, Param) && reinterpret_cast<Param*>(arg)->paramkind == PARAM_EXTERN);
}

bool SameOptions(const Jsonb* a, const Jsonb* b) {
  return VARSIZE(a) == VARSIZE(b) && memcmp(a, b, VARSIZE(a)) == 0;
}

void Defer(RowState* st, DeferredError error, int dim) {
  if (st->deferred != kNoError) return;
  st->deferred = error;
  st->deferred_dim = dim;
}

// Sets the dimension on the first row (the public shape: the coefficient
// cap applies to it at once); false when a later row disagrees.
bool SetDimension(RowState* st, int d) {
  if (st->d < 0) {
    CheckCoefficientCount(static_cast<LossKind>(st->loss), d, st->options);
    st->d = d;
  }
  return st->d == d;
}

// dperm.max_buffer in bytes.
Size BufferLimit() { return static_cast<Size>(g_max_buffer_kb) * 1024; }

// Whether `rows` rows of shape d (plus the label) fit under dperm.max_buffer.
bool BufferFits(int64 rows, int32 d) {
  return d < 0 || static_cast<double>(rows) * (d + 1) * sizeof(double) <=
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

// Reads a float8[] row (NULL elements become NaN and are then sanitised
// like NaN); *ndim > 1 means a multi-dimensional array, which is not read.
double* ReadFeatures(ArrayType* array, int* d, int* ndim) {
  *ndim = ARR_NDIM(array);
  if (*ndim > 1) return nullptr;
  int n = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
  *d = n;
  if (!ARR_HASNULL(array)) return reinterpret_cast<double*>(ARR_DATA_PTR(array));
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

// Whether the row's label makes it a training row: not NULL, and for
// dp_softmax a class in 0 .. K-1. A class outside that range is skipped
// exactly like a NULL label, never an error: an error would depend on the
// data (DESIGN.md section 4). Like NULL rows, skipped rows are not counted
// in n, which is public.
bool KeepRow(FunctionCallInfo fcinfo, LabelRule rule, const RowState* st) {
  if (PG_ARGISNULL(1) || PG_ARGISNULL(2)) return false;
  if (rule != LabelRule::kClass) return true;
  int32 k = PG_GETARG_INT32(2);
  return k >= 0 && k < st->options.classes;
}

// The stored label of a row. Under dperm.train (st->impute) every row of a
// protected relation is kept, so that n is the relation's row count whatever
// columns and options the analyst picks; a NULL label is imputed as a NaN
// one (logistic: negative; Huber: 0), a NULL class as class 0, and a class
// outside 0 .. K-1 is clamped into it, as features are clipped.
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

// One transition: skip NULL rows (and classes out of range) or, under
// dperm.train, impute them; else clip and append. A row-dependent error is
// deferred to the final function, which charges before raising it.
Datum Transition(FunctionCallInfo fcinfo, LossKind loss, LabelRule rule,
                 const char* name) {
  MemoryContext context = AggregateContext(fcinfo, name);
  if (PG_ARGISNULL(3))
    ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                    errmsg("dperm options must not be NULL")));
  Jsonb* options = PG_GETARG_JSONB_P(3);
  RowState* st = PG_ARGISNULL(0) ? nullptr : reinterpret_cast<RowState*>(PG_GETARG_POINTER(0));
  if (st == nullptr) {
    // Before the first row is kept: not on a Citus table or shard (citus.cpp).
    List* relids = RangeTableRelations(fcinfo);
    RefuseCitusRelations(relids, name);
    st = NewState(context, loss, options);
    st->stable_options = OptionsArgumentIsConstant(fcinfo);
    StartProgress(context, st, relids == NIL ? InvalidOid : linitial_oid(relids));
  } else if (!st->stable_options && !SameOptions(st->options_raw, options)) {
    Defer(st, kOptionsDiffer, 0);
  }
  if (st->reports) {
    st->read++;
    ProgressCountRow();
  }
  if (!st->impute && !KeepRow(fcinfo, rule, st)) PG_RETURN_POINTER(st);
  // Counted whatever happens next, so that the buffer refusal depends on
  // (n, d) only, never on which rows are ragged (BufferRefusal).
  st->seen++;
  if (st->shape_d < 0 && !PG_ARGISNULL(1)) {
    ArrayType* first = PG_GETARG_ARRAYTYPE_P(1);
    st->shape_d = ArrayGetNItems(ARR_NDIM(first), ARR_DIMS(first));
  }
  if (st->deferred != kNoError || !BufferFits(st->seen, st->shape_d)) {
    if (st->rows != nullptr) {  // past the cap: the rows are dropped, the count goes on
      pfree(st->rows);
      st->rows = nullptr;
      st->capacity = 0;
    }
    PG_RETURN_POINTER(st);
  }

  int d = st->d, ndim = 1;
  double* x = nullptr;
  if (!PG_ARGISNULL(1)) {
    x = ReadFeatures(PG_GETARG_ARRAYTYPE_P(1), &d, &ndim);
  } else {  // imputed: the zero vector of the public dimension
    x = static_cast<double*>(palloc0(sizeof(double) * Max(d, 1)));
  }
  if (ndim > 1) {
    Defer(st, kMultiDimRow, ndim);
    PG_RETURN_POINTER(st);
  }
  if (!SetDimension(st, d)) {
    Defer(st, kRaggedRow, d);
    PG_RETURN_POINTER(st);
  }
  Reserve(context, st, 1);
  double* row = st->rows + st->n * (d + 1);
  ClipRow(x, d, st->options.feature_bound, row);
  row[d] = StoredLabel(fcinfo, rule, st);
  st->n++;
  PG_RETURN_POINTER(st);
}

// The deferred error of a state, as it is raised after the charge.
void DescribeDeferred(const RowState* st, CoreError* error) {
  error->raised = true;
  switch (st->deferred) {
    case kRaggedRow:
      error->sqlstate = ERRCODE_ARRAY_SUBSCRIPT_ERROR;
      snprintf(error->message, sizeof error->message,
               "features have %d dimensions, expected %d", st->deferred_dim, st->d);
      strlcpy(error->hint, "Every row of a training aggregate needs the same number of features.",
              sizeof error->hint);
      break;
    case kMultiDimRow:
      error->sqlstate = ERRCODE_ARRAY_SUBSCRIPT_ERROR;
      snprintf(error->message, sizeof error->message,
               "features must be a one-dimensional array, not %d-dimensional", st->deferred_dim);
      break;
    default:
      error->sqlstate = ERRCODE_INVALID_PARAMETER_VALUE;
      strlcpy(error->message, "dperm options must be the same for every row of an aggregate",
              sizeof error->message);
      break;
  }
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
// replay of dperm--0.1.0.sql still needs their symbols.
DPERM_FUNCTION(dperm_combine) {
  ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                  errmsg("dperm training aggregates no longer combine partial states"),
                  errhint("ALTER EXTENSION dperm UPDATE, then train large tables with dperm.train.")));
  PG_RETURN_NULL();
}
DPERM_FUNCTION(dperm_serialize) { return dperm_combine_body(fcinfo); }
DPERM_FUNCTION(dperm_deserialize) { return dperm_combine_body(fcinfo); }

namespace dperm::pg {
namespace {

// Charges a release that failed after reading the rows, then raises its
// error: the error depends on the rows, so it is paid for like a model.
[[noreturn]] void ChargeAndRaise(const CoreError& failure, const Options& o, LossKind loss,
                                 const RowState* st, const Oid* relations, int n_relations) {
  ChargeRequest charge = {o.has_algorithm ? AlgorithmName(o.algorithm) : "none",
                          "none (the release failed after reading the rows)",
                          LossName(loss),
                          "replace_one",
                          o.epsilon,
                          o.delta,
                          st->n,
                          Max(st->d, 0),
                          nullptr,
                          0,
                          o.has_seed};
  ChargeRelease(charge, relations, n_relations);
  ereport(ERROR, (errcode(failure.sqlstate), errmsg("%s", failure.message),
                  errdetail("The release was charged epsilon = %g and delta = %g in dperm.ledger: "
                            "this error depends on the rows read.",
                            o.epsilon, o.delta),
                  failure.hint[0] ? errhint("%s", failure.hint) : 0));
  pg_unreachable();
}

}  // namespace

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
  AggregateContext(fcinfo, "dperm_final");
  if (PG_ARGISNULL(0)) PG_RETURN_NULL();  // no rows at all
  RowState* st = reinterpret_cast<RowState*>(PG_GETARG_POINTER(0));
  if (st->reports) ProgressEndPass(st->read);
  if (!BufferFits(st->seen, st->shape_d)) RaiseBufferRefusal();
  // Only skipped rows: nothing is released (under dperm.train no row is
  // skipped, so this means an empty relation, whose n = 0 is public).
  if (st->n == 0 && st->deferred == kNoError) PG_RETURN_NULL();
  ParsedOptions parsed = ParseOptionsJsonb(st->options_raw);
  const dperm::Options& o = parsed.options;
  LossKind loss = static_cast<LossKind>(st->loss);
  int n_relations = 0;
  Oid* relations = RelationsRead(fcinfo, parsed.dataset, &n_relations);

  // From here on every outcome depends on the rows: a failure is charged
  // before it is raised (ChargeAndRaise), a success before it is computed.
  CoreError failure;
  PgBox<dperm::Plan> plan(CurrentMemoryContext);
  PgBox<std::vector<double>> curve(CurrentMemoryContext);
  PgBox<dperm::L2Selection> selection(CurrentMemoryContext);  // l2 => 'auto'
  double memory = 0;  // the training's estimated memory (public inputs only)
  if (st->deferred != kNoError) {
    DescribeDeferred(st, &failure);
  } else if (o.n_feature_names >= 0 && o.n_feature_names != st->d) {
    failure.raised = true;
    failure.sqlstate = ERRCODE_INVALID_PARAMETER_VALUE;
    snprintf(failure.message, sizeof failure.message,
             "feature_names has %d names, but the rows have %d features", o.n_feature_names, st->d);
  } else {
    CaptureCore([&] {
      if (o.l2_auto) {
        // One release: the selection's curve covers every candidate and
        // the scores (select_l2.hpp); the row names the first candidate.
        selection.Emplace(dperm::PlanL2Selection(o, loss, st->n, st->d));
        plan.Emplace(dperm::SelectionChargePlan(*selection));
        curve.Emplace(selection->rdp_curve);
        memory = dperm::SelectionMemoryBytes(*selection);
      } else {
        plan.Emplace(dperm::PlanRelease(o, loss, st->n, st->d));
        curve.Emplace(dperm::ReleaseRdpCurve(*plan));
        memory = dperm::ReleaseMemoryBytes(*plan, false);
      }
    }, &failure);
  }
  if (failure.raised && failure.sqlstate == ERRCODE_QUERY_CANCELED) ReportCoreError(failure);
  // Refused before the charge: the estimate needs n, d and the options only.
  if (!failure.raised) CheckReleaseMemory(memory, "the release");
  if (st->reports) ProgressSetPhase(ProgressPhase::kCharging);
  if (failure.raised) ChargeAndRaise(failure, o, loss, st, relations, n_relations);

  // Charged before the model is computed: a refused release trains nothing.
  if (st->reports) ProgressSetAlgorithm(plan->algorithm);
  ChargeRelease(PlanCharge(*plan, o, *curve), relations, n_relations);
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
      dperm::L2SelectionResult r = dperm::TrainL2Selection(*selection, st->rows, rng);
      selection_json.Emplace(dperm::L2SelectionJson(*selection, &r));
      m.l2_selection_json = selection_json->c_str();
      m.release_epsilon = o.epsilon;
      m.release_delta = o.delta;
      offset = std::move(r.offset);
      w.Emplace(std::move(r.w));
      json.Emplace(dperm::ModelJson(selection->candidates[size_t(r.chosen)], *w, m));
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
