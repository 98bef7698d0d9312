// Declarations shared by the files of the boundary (src/pg). Include core
// headers first, then this file.
#pragma once
#include "dperm/options.hpp"

#include "boundary.hpp"

extern "C" {
#include "utils/jsonb.h"
}

namespace dperm::pg {

// dperm.allow_seed: the superuser-only setting that lets `seed` work.
extern bool g_allow_seed;

// The role a release is made for: set by dperm.train while it trains as the
// catalog owner on an analyst's behalf; InvalidOid means the current user.
extern Oid g_release_role;

// Options read from a jsonb value; `dataset` and `feature_names` stay as
// palloc'd strings for the boundary's own use.
struct ParsedOptions {
  Options options;
  const char* dataset = nullptr;
  const char* const* feature_names = nullptr;  // options.n_feature_names of them
};

// Validates `options` (errors name the key) and returns the parsed values.
ParsedOptions ParseOptionsJsonb(Jsonb* options);

// The jsonb as text, palloc'd.
char* JsonbText(Jsonb* value);

// Loss named in SQL ("logistic", "huber" or "softmax"), or an error.
LossKind ParseLossName(const char* name);

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
// plus the `dataset` option's relation when given. Returns a palloc'd array.
Oid* RelationsRead(FunctionCallInfo fcinfo, const char* dataset, int* count);

// Charges a release to the ledger before the model is computed: checks the
// budgets of `relations`, refuses with an ERROR if one would be overspent,
// and appends the ledger row, in a transaction of its own (a background
// worker), so the charge is atomic across sessions and survives a rollback
// of the caller. `rdp` is the release's curve on LedgerOrders() (n_rdp = 0:
// none). Returns the ledger row's id.
int64 ChargeRelease(const Plan& plan, const double* rdp, int n_rdp,
                    const Oid* relations, int n_relations, bool seeded);

}  // namespace dperm::pg
