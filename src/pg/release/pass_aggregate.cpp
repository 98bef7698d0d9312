// The per-pass aggregates of streaming training (docs/design.md section 5):
// dperm.pass_logreg, dperm.pass_huber, dperm.pass_softmax. For a model
// w and a spec (the public shape and options, release/streaming.hpp) passed as constants,
// one scan returns the pass state (rows, loss sum, exact gradient sums as
// integer limbs: release/streaming.hpp) over the training rows,
// clipped and labelled exactly as dp_logreg/dp_huber/dp_softmax store them
// under dperm.train (every row kept, NULLs imputed). The state is a plain
// float8[] and the combine function adds states exactly, so the aggregates
// are PARALLEL SAFE and parallel workers share every pass.
//
// Exact gradients are not private, so the aggregates run only inside
// dperm.train's passes: the driver turns on dperm.internal_pass, a
// superuser-only setting no other role can set (not even through a
// function's SET clause), around each pass, and every transition refuses
// without it. EXECUTE privileges cannot do that job: a pass runs as the role
// whose rights read the relation (its owner, or the caller for a relation
// the caller may read), the same role the check would have to refuse. The
// setting reaches parallel workers with the rest of the leader's settings.
// Whatever else runs during a pass (an owner's row-level security function)
// runs as that same role, on rows it may read anyway.
//
// On a Citus worker the setting is not there (Citus runs the transitions
// over its own connections): there a pass runs only when its spec carries a
// valid token, which dperm.train signs under the nodes' shared secret
// dperm.pass_key (citus.cpp explains why, and what else was weighed).
#include "dperm/release/streaming.hpp"
#include "dperm/rows/rows.hpp"

#include <cmath>

#include "base/arrays.hpp"
#include "base/citus.hpp"
#include "release/pass_aggregate.hpp"
#include "release/progress.hpp"
#include "release/row_buffer.hpp"

extern "C" {
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "storage/proc.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
}

namespace dperm::pg {

bool g_internal_pass = false;

namespace {

// A float8[]'s values when it is one-dimensional with no NULLs, else nullptr.
const double* PlainFloat8s(ArrayType* a, int* n) {
  if (ARR_NDIM(a) > 1 || ARR_HASNULL(a) || ARR_ELEMTYPE(a) != FLOAT8OID) return nullptr;
  *n = ARR_NDIM(a) == 0 ? 0 : ARR_DIMS(a)[0];  // per row: no ArrayGetNItems call
  return reinterpret_cast<const double*>(ARR_DATA_PTR(a));
}

// A zeroed float8[] of n elements in `context`.
ArrayType* NewState(MemoryContext context, int n) {
  Size bytes = ARR_OVERHEAD_NONULLS(1) + sizeof(double) * n;
  ArrayType* a = static_cast<ArrayType*>(MemoryContextAllocZero(context, bytes));
  SET_VARSIZE(a, bytes);
  a->ndim = 1;
  a->dataoffset = 0;
  a->elemtype = FLOAT8OID;
  ARR_DIMS(a)[0] = n;
  ARR_LBOUND(a)[0] = 1;
  return a;
}

// The backend's pass cache: the decoded spec, the features buffer and
// softmax scratch. Every row of a pass repeats the spec, so it is decoded
// once a pass (the raw values are compared instead). It is one per backend,
// not per call site (fn_extra): Citus's worker_partial_agg_sfunc calls the
// transition through a fresh FmgrInfo for every row (fmgr_info on the
// stack), so a call-site cache was rebuilt, and the pass token's HMAC
// computed, on every row of a worker's shard (docs/scale.md, *Citus with 2
// workers*). A backend runs one pass at a time; two passes
// interleaved in one query would only decode their specs again, never mix
// them (the spec is compared on every row).
struct PassCache {
  double spec_values[kPassSpecSize];
  PassSpec spec;
  int d;
  int classes;
  int dim;          // model coordinates (d, classes and fit_intercept)
  double* x;        // d clipped features
  double* raw;      // d raw features (NULL elements as NaN)
  double* scratch;  // max(K, 1)
  // The spec (with its token) and w whose token verified, and the statement
  // that verified it: every row of a pass repeats them, so the HMAC is
  // computed once a statement, as a call-site cache would (the key and the
  // clock are read again by the next statement).
  double* signed_args;  // kPassSpecSize + kPassTokenSize + dim values
  bool has_signed;
  TimestampTz signed_statement;
  LocalTransactionId signed_xact;
};

PassCache* g_pass_cache = nullptr;

void FreePassCache() {
  PassCache* c = g_pass_cache;
  g_pass_cache = nullptr;
  if (c == nullptr) return;
  pfree(c->x);
  pfree(c->raw);
  pfree(c->scratch);
  pfree(c->signed_args);
  pfree(c);
}

// The backend's cache, made for the spec's shape (TopMemoryContext).
PassCache* CacheFor(const PassSpec& spec) {
  PassCache* c = g_pass_cache;
  if (c != nullptr && c->d == spec.d && c->classes == spec.classes && c->dim == spec.dim())
    return c;
  FreePassCache();
  MemoryContext mcxt = TopMemoryContext;
  c = static_cast<PassCache*>(MemoryContextAllocZero(mcxt, sizeof(PassCache)));
  c->d = spec.d;
  c->classes = spec.classes;
  c->dim = spec.dim();
  c->x = static_cast<double*>(MemoryContextAlloc(mcxt, sizeof(double) * Max(spec.d, 1)));
  c->raw = static_cast<double*>(MemoryContextAlloc(mcxt, sizeof(double) * Max(spec.d, 1)));
  c->scratch =
      static_cast<double*>(MemoryContextAlloc(mcxt, sizeof(double) * Max(spec.classes, 1)));
  c->signed_args = static_cast<double*>(
      MemoryContextAlloc(mcxt, sizeof(double) * (kPassSpecSize + kPassTokenSize + spec.dim())));
  g_pass_cache = c;
  return c;
}

[[noreturn]] void RefuseOutsideTrain(const char* detail, const char* hint) {
  ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                  errmsg("dperm per-pass aggregates run only inside dperm.train"),
                  errdetail("%s", detail), errhint("%s", hint)));
  pg_unreachable();
}

// Outside dperm.internal_pass (a Citus worker): the pass runs only under a
// valid token for exactly this spec and w (citus.cpp); `token` follows
// the spec's kPassSpecSize values.
void CheckSignedPass(PassCache* cache, const PassSpec& spec, const double* spec_values,
                     const double* token, const double* w) {
  const int dim = spec.dim();
  double* saved = cache->signed_args;
  const TimestampTz statement = GetCurrentStatementStartTimestamp();
  const LocalTransactionId xact = MyProc->lxid;
  if (cache->has_signed && cache->signed_statement == statement && cache->signed_xact == xact &&
      memcmp(saved, spec_values, sizeof(double) * (kPassSpecSize + kPassTokenSize)) == 0 &&
      memcmp(saved + kPassSpecSize + kPassTokenSize, w, sizeof(double) * dim) == 0)
    return;
  cache->has_signed = false;
  switch (CheckPassToken(spec_values, token, w, dim)) {
    case PassTokenCheck::kValid: break;
    case PassTokenCheck::kNoKey:
      RefuseOutsideTrain("The pass carries a token, but dperm.pass_key is not set on this node.",
                         "Set dperm.pass_key to the same secret in postgresql.conf on the "
                         "coordinator and every worker, and reload.");
    case PassTokenCheck::kExpired:
      RefuseOutsideTrain("The pass's token has expired.",
                         "The nodes' clocks must agree within an hour.");
    case PassTokenCheck::kBadMac:
      RefuseOutsideTrain("The pass's token does not verify under this node's dperm.pass_key.",
                         "dperm.pass_key must be the same on the coordinator and every worker.");
  }
  memcpy(saved, spec_values, sizeof(double) * (kPassSpecSize + kPassTokenSize));
  memcpy(saved + kPassSpecSize + kPassTokenSize, w, sizeof(double) * dim);
  // Once a statement (test/citus.sh counts these against the pass queries).
  elog(DEBUG1, "dperm: verified a pass token");
  cache->signed_statement = statement;
  cache->signed_xact = xact;
  cache->has_signed = true;
}

[[noreturn]] void BadArgument(const char* what) {
  ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                  errmsg("invalid %s for a dperm per-pass aggregate", what)));
  pg_unreachable();
}

// One transition: (state, features, label, w, spec). A per-pass aggregate
// serves every loss of its label rule's kind (the spec names the loss).
Datum PassTransition(FunctionCallInfo fcinfo, LabelRule rule) {
  MemoryContext context;
  if (!AggCheckCallContext(fcinfo, &context))
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("dperm per-pass transition called in non-aggregate context")));
  if (!g_internal_pass && (PG_ARGISNULL(3) || PG_ARGISNULL(4)))
    RefuseOutsideTrain("They return exact, non-private gradient sums.",
                       "Train with dperm.train(relation, features, label, loss, options).");
  if (PG_ARGISNULL(0) || PG_ARGISNULL(3) || PG_ARGISNULL(4)) BadArgument("state, model or spec");
  int spec_size = 0, w_size = 0;
  // The spec: kPassSpecSize values, then a pass token when dperm.train
  // signed the pass (a Citus table).
  const double* spec_values = PlainFloat8s(PG_GETARG_ARRAYTYPE_P(4), &spec_size);
  bool has_token = spec_size == kPassSpecSize + kPassTokenSize;
  if (!g_internal_pass && (spec_values == nullptr || !has_token))
    RefuseOutsideTrain("They return exact, non-private gradient sums.",
                       "Train with dperm.train(relation, features, label, loss, options).");
  if (spec_values == nullptr || (spec_size != kPassSpecSize && !has_token)) BadArgument("spec");
  PassCache* cache = g_pass_cache;
  if (cache == nullptr ||
      memcmp(cache->spec_values, spec_values, sizeof(double) * kPassSpecSize) != 0) {
    PassSpec decoded;
    if (!DecodePassSpec(spec_values, kPassSpecSize, &decoded) ||
        dperm::LossLabel(decoded.loss) != LabelKindOf(rule))
      BadArgument("spec");
    cache = CacheFor(decoded);
    memcpy(cache->spec_values, spec_values, sizeof(double) * kPassSpecSize);
    cache->spec = decoded;
  }
  const PassSpec& spec = cache->spec;
  const double* w = PlainFloat8s(PG_GETARG_ARRAYTYPE_P(3), &w_size);
  if (w == nullptr || w_size != spec.dim()) BadArgument("model");
  if (!g_internal_pass) CheckSignedPass(cache, spec, spec_values, spec_values + kPassSpecSize, w);
  const int size = PassStateSize(spec);

  ArrayType* state = PG_GETARG_ARRAYTYPE_P(0);
  int state_size = 0;
  double* sums = const_cast<double*>(PlainFloat8s(state, &state_size));
  if (sums == nullptr || (state_size != 0 && state_size != size)) BadArgument("state");
  if (state_size == 0) {  // the initial '{}': the sums live in the aggregate context
    state = NewState(context, size);
    sums = reinterpret_cast<double*>(ARR_DATA_PTR(state));
    dperm::PassInitState(sums);
  } else if (sums[1] != dperm::kPassStateFormat) {
    BadArgument("state");
  }
  // Otherwise the state is this aggregate's own array, updated in place as
  // float8_accum does.

  ProgressCountRow();  // dperm.progress; in the leader only (workers never report)
  const double* raw = cache->raw;
  if (PG_ARGISNULL(1)) {  // imputed: the zero vector of the public dimension
    memset(cache->raw, 0, sizeof(double) * spec.d);
  } else {
    // The sanitising rule of the in-memory aggregates (aggregate.cpp):
    // elements in storage order, whatever the array's shape, truncated or
    // padded with zeros to the public d; NULL elements are NaN (ClipRow: 0).
    // Never an error: the outcome must not depend on a row's shape.
    ArrayType* features = PG_GETARG_ARRAYTYPE_P(1);
    int n = ArrayGetNItems(ARR_NDIM(features), ARR_DIMS(features));
    if (!ARR_HASNULL(features) && n >= spec.d) {
      raw = reinterpret_cast<const double*>(ARR_DATA_PTR(features));
    } else if (!ARR_HASNULL(features)) {
      memcpy(cache->raw, ARR_DATA_PTR(features), sizeof(double) * n);
      memset(cache->raw + n, 0, sizeof(double) * (spec.d - n));
    } else {
      // Reads no element past d (a row's cost is bounded by the public d).
      n = Float8ArrayPrefix(features, spec.d, cache->raw);
      for (int i = n; i < spec.d; i++) cache->raw[i] = 0;
    }
  }
  // Labels as the in-memory aggregates store them (row_buffer.hpp).
  double label = StoredLabel(fcinfo, rule, spec.target_bound, spec.classes);
  // Plain loops over plain arrays; no allocation, no throw. A row inside
  // the bound is read in place (no copy).
  const double* x = dperm::ClippedRow(raw, spec.d, spec.feature_bound, cache->x);
  PassAddRow(spec, w, x, label, sums, cache->scratch);
  PG_RETURN_ARRAYTYPE_P(state);
}

}  // namespace
}  // namespace dperm::pg

using namespace dperm::pg;

// The per-pass aggregates, one per label rule (train_input.cpp, TargetFor):
// named for the loss each was first written for, they serve every loss of
// the label kind.

// dperm.pass_logreg(float8[], boolean, float8[], float8[]) transition: binary labels.
DPERM_FUNCTION(dperm_pass_logreg_bool_step) { return PassTransition(fcinfo, LabelRule::kBoolean); }

// dperm.pass_logreg(float8[], float8, float8[], float8[]) transition: binary labels.
DPERM_FUNCTION(dperm_pass_logreg_float_step) {
  return PassTransition(fcinfo, LabelRule::kBinaryFloat);
}

// dperm.pass_huber(float8[], float8, float8[], float8[]) transition: targets.
DPERM_FUNCTION(dperm_pass_huber_step) { return PassTransition(fcinfo, LabelRule::kTarget); }

// dperm.pass_softmax(float8[], int, float8[], float8[]) transition: class indices.
DPERM_FUNCTION(dperm_pass_softmax_step) { return PassTransition(fcinfo, LabelRule::kClass); }

// Combine of the per-pass aggregates ('{}' is the empty state): the exact
// sum of two states (PassCombine: limbs with carries, so the result does
// not depend on which worker or node combined what). Sums arrays only, so
// it needs no guard; a state that is not a valid pass state is refused.
DPERM_FUNCTION(dperm_pass_combine) {
  MemoryContext context;
  if (!AggCheckCallContext(fcinfo, &context))
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("dperm.pass_combine called in non-aggregate context")));
  ArrayType* a = PG_GETARG_ARRAYTYPE_P(0);
  ArrayType* b = PG_GETARG_ARRAYTYPE_P(1);
  int na = 0, nb = 0;
  const double* va = PlainFloat8s(a, &na);
  const double* vb = PlainFloat8s(b, &nb);
  if (va == nullptr || vb == nullptr || (na != 0 && nb != 0 && na != nb))
    ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("invalid dperm per-pass state")));
  if (nb == 0) PG_RETURN_ARRAYTYPE_P(a);
  if (na == 0) {  // b may live in a short-lived context: copy it
    if (!dperm::PassStateValid(vb, nb))
      ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("invalid dperm per-pass state")));
    ArrayType* copy = NewState(context, nb);
    memcpy(ARR_DATA_PTR(copy), vb, sizeof(double) * nb);
    PG_RETURN_ARRAYTYPE_P(copy);
  }
  if (!dperm::PassCombine(reinterpret_cast<double*>(ARR_DATA_PTR(a)), vb, na))
    ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED), errmsg("invalid dperm per-pass state")));
  PG_RETURN_ARRAYTYPE_P(a);
}
