// Declarations shared by the files of the boundary (src/pg). Include core
// headers first, then this file.
#pragma once
#include <vector>

#include "dperm/options.hpp"
#include "dperm/plan.hpp"

#include "boundary.hpp"

extern "C" {
#include "executor/spi.h"
#include "nodes/pg_list.h"
#include "utils/jsonb.h"
}

namespace dperm::pg {

// dperm.allow_seed: the superuser-only setting that lets `seed` work.
extern bool g_allow_seed;

// dperm.max_coefficients: the most coefficients one release may have,
// checked from the options and the public shape before the rows are read.
extern int g_max_coefficients;

// dperm.max_buffer (kB): the most row data an in-memory training aggregate
// may buffer; dperm.train streams relations estimated to need more.
extern int g_max_buffer_kb;

// Refuses an in-memory release whose rows pass dperm.max_buffer (SQLSTATE
// 54000, hint: dperm.train). Uncharged: it depends only on n and d, which
// are public under replace-one neighbours (DESIGN.md section 4).
[[noreturn]] void RaiseBufferRefusal();

// Whether n rows of d features fit in dperm.max_buffer (in-memory mode).
bool InMemoryFits(int64 n, int d);

// dperm.internal_pass: on only while dperm.train runs a streaming pass; the
// per-pass aggregates refuse without it (pass_aggregate.cpp).
extern bool g_internal_pass;

// Citus (citus.cpp, docs/citus.md). dperm.pass_key: the secret, the same
// on every node, under which dperm.train signs the passes Citus runs on the
// workers (superuser-only, postgresql.conf); empty: not configured.
extern char* g_pass_key;
bool PassKeyConfigured();
// Whether `relid` is a Citus table (false when Citus is not installed).
// Needs an SPI connection.
bool IsCitusTable(Oid relid);
// Refuses (0A000, hint dperm.train) when `relids` holds a Citus table or
// shard: the in-memory aggregates do not run there.
void RefuseCitusRelations(List* relids, const char* aggregate);
// A pass token: [expiry (Unix seconds), eight 32-bit words of the HMAC],
// appended to the pass spec's kPassSpecSize values.
const int kPassTokenSize = 9;
// Signs a pass: `spec` holds kPassSpecSize values, w dim values; writes
// kPassTokenSize values to `token`. Needs dperm.pass_key.
void SignPass(const double* spec, const double* w, int dim, double* token);
enum class PassTokenCheck { kValid, kNoKey, kBadMac, kExpired };
PassTokenCheck CheckPassToken(const double* spec, const double* token, const double* w, int dim);

// A release dperm.train makes on an analyst's behalf while it reads a
// protected relation as the relation's owner (caller = InvalidOid: the
// aggregate was called directly, for the current user).
struct ReleaseContext {
  Oid caller = InvalidOid;   // recorded in the ledger; `dataset` is checked for them
  int dimension = -1;        // the public shape d of the features column
  Oid dataset = InvalidOid;  // the `dataset` option, resolved under the caller's search_path
};
extern ReleaseContext g_release;

// The role a release is charged to and recorded under.
Oid ReleasingRole();

// search_path of every statement dperm runs internally: "pg_catalog, pg_temp".
extern const char* const kInternalSearchPath;

// Pins search_path to kInternalSearchPath; returns the GUC nest level to
// pass to AtEOXact_GUC.
int PinInternalSearchPath();

// Runs `sql` through SPI (connected by the caller) as `role`, restricted
// (SECURITY_RESTRICTED_OPERATION) if asked, with search_path pinned and
// serial plans; checks that SPI returns `expected`. The caller's identity
// and settings come back on return, or on abort.
// allow_parallel: let the planner use parallel workers (streaming passes,
// whose aggregates need no backend-local state); otherwise serial plans.
void RunInternalSql(Oid role, bool restricted, const char* sql, int nargs, Oid* types,
                    Datum* args, const char* nulls, int expected, bool read_only,
                    bool allow_parallel = false);

// RunInternalSql for a statement run many times (dperm.train's passes): the
// first call prepares `sql` into *plan (nullptr before), a generic plan in
// the SPI connection's memory; every call executes *plan, planning nothing.
void RunInternalPlan(Oid role, bool restricted, SPIPlanPtr* plan, const char* sql, int nargs,
                     Oid* types, Datum* args, int expected, bool read_only,
                     bool allow_parallel);

// RunInternalSql as the bootstrap superuser, for dperm's own catalog.
void RunAsCatalogOwner(const char* sql, int nargs, Oid* types, Datum* args, const char* nulls,
                       int expected, bool read_only);

// The nearest of `relid` and its inheritance/partition ancestors that is
// protected (dperm.protected), or InvalidOid; *allowed says whether `role`
// may train on it. Needs an SPI connection.
Oid ProtectionOf(Oid relid, Oid role, bool* allowed);

// Every inheritance or partition ancestor of `relid`, nearest first.
List* AncestorsOf(Oid relid);

// Resolves and checks the `dataset` option for `role`: it must name a
// relation that is not a system catalog and that `role` may read (SELECT on
// the table or a column, or an analyst of the protected relation). Returns
// its OID. Needs an SPI connection.
Oid CheckDataset(const char* dataset, Oid role);

// Options read from a jsonb value; `dataset` and `feature_names` stay as
// palloc'd strings for the boundary's own use.
struct ParsedOptions {
  Options options;
  const char* dataset = nullptr;
  const char* const* feature_names = nullptr;  // options.n_feature_names of them
};

// Validates `options` (errors name the key) and returns the parsed values.
ParsedOptions ParseOptionsJsonb(Jsonb* options);

// A float8[] or oid[] value of n elements (palloc'd).
Datum Float8ArrayDatum(const double* values, int n);
Datum OidArrayDatum(const Oid* oids, int n);

// The jsonb as text, palloc'd.
char* JsonbText(Jsonb* value);

// Loss named in SQL ("logistic", "huber" or "softmax"), or an error.
LossKind ParseLossName(const char* name);

// Refuses a release whose coefficient count (from the options and the
// features' dimension d, the public shape) exceeds dperm.max_coefficients.
void CheckCoefficientCount(LossKind loss, int d, const Options& options);

// Refuses the seed option unless dperm.allow_seed is on.
void CheckSeedAllowed(const Options& options);

}  // namespace dperm::pg

namespace dperm {
struct Plan;
}

namespace dperm::pg {

// A dp_model value from the released coefficients and the model's JSON
// text. Binary models (classes = 0): w holds the d feature weights, then the
// intercept when fitted. Softmax models: `classes` blocks of that shape,
// class after class (softmax.hpp).
Datum MakeModelDatum(LossKind loss, int d, int classes, bool fit_intercept,
                     double feature_bound, double huber_delta, const double* w,
                     const char* json);

// Relations whose rows the aggregate call in `fcinfo` reads: every relation
// of the executing statement's range table (DESIGN.md section 3, item 4),
// plus the `dataset` option's relation when given (CheckDataset), plus the
// inheritance and partition ancestors of each. Returns a palloc'd array.
Oid* RelationsRead(FunctionCallInfo fcinfo, const char* dataset, int* count);
// The relations in the range table of the query running aggregate `fcinfo`.
List* RangeTableRelations(FunctionCallInfo fcinfo);

// What a ledger row records about one release.
struct ChargeRequest {
  const char* algorithm;
  const char* mechanism;
  const char* loss;
  const char* neighbors;
  double epsilon;
  double delta;
  int64 n;
  int32 d;
  const double* rdp;  // the release's curve on LedgerOrders(), or nullptr
  int n_rdp;
  bool seeded;
};

// Charges a release to the ledger before anything that depends on the rows
// reaches the caller: checks the budgets of `relations`, refuses with an
// ERROR if one would be overspent, and appends the ledger row, in a
// transaction of its own (a background worker), so the charge is atomic
// across sessions and survives a rollback of the caller. Returns the ledger
// row's id.
int64 ChargeRelease(const ChargeRequest& charge, const Oid* relations, int n_relations);

// The ledger row of a planned release: its algorithm, noise, loss and
// neighbours, the options' (epsilon, delta), the plan's n and d, and `curve`
// (the release's RDP curve on LedgerOrders(); empty for none).
ChargeRequest PlanCharge(const dperm::Plan& plan, const dperm::Options& o,
                         const std::vector<double>& curve);

// The current time as ISO 8601 UTC ("2026-11-23T14:00:00Z"), palloc'd: a
// model's created_at.
char* NowIso8601();

// The relations a dperm.train release from `relid` is charged to, as the
// in-memory query's range table gives them: the relation, its partitions and
// inheritance children, `dataset` when valid, and every ancestor of each.
Oid* TrainRelations(Oid relid, Oid dataset, int* count);

// One streaming release of dperm.train (streaming.cpp), everything public
// already checked: plans, charges `relations` once, then trains by passes of
// `pass_sql` ($1 = w, $2 = spec) run as `reader`. NULL (*isnull) for n = 0.
struct StreamingRequest {
  Oid reader;
  const char* pass_sql;
  LossKind loss;
  const ParsedOptions* parsed;
  Jsonb* options;
  int64 n;
  int d;
  const Oid* relations;
  int n_relations;
  bool sign_passes;  // a Citus table: every pass carries a token (citus.cpp)
};
Datum TrainStreamingRelease(const StreamingRequest& request, bool* isnull);

// The ledger row of this backend's latest charge (ChargeRelease sets it;
// models.cpp clears it before a training and reads it after).
extern int64 g_last_charge_id;

// Raises 42703 unless `relid` has a column named `name`
// (dperm.train and dperm.train_model take column names); returns its type.
Oid ColumnType(Oid relid, const char* name);

// dperm's aggregate for a loss and the label cast to its exact argument
// type, or a 42804 error if the label column's type does not fit the loss.
struct TrainTarget {
  const char* aggregate;
  const char* label_cast;
  const char* pass_aggregate;  // streaming mode's per-pass aggregate in schema dperm
};
TrainTarget TargetFor(LossKind loss, Oid label_type, const char* label, const char* loss_name);

}  // namespace dperm::pg
