// Refusals of a release from public inputs only (its options and shape),
// shared by the aggregates, dperm.train and the named models: raised before
// any row is read or charged.
#include "dperm/options/options.hpp"

#include "base/settings.hpp"
#include "release/release_checks.hpp"

namespace dperm::pg {
namespace {

// The coefficients a release of this loss, shape and options would have.
int64 CoefficientCount(dperm::LossKind loss, int d, const dperm::Options& o) {
  int64 per_class = int64(d) + (o.fit_intercept ? 1 : 0);
  return dperm::LossIsMulticlass(loss) ? per_class * o.classes : per_class;
}

}  // namespace

void CheckCoefficientCount(dperm::LossKind loss, int d, const dperm::Options& o) {
  int64 count = CoefficientCount(loss, d, o);
  if (count > g_max_coefficients)
    ereport(ERROR,
            (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
             errmsg("the release would have " INT64_FORMAT " coefficients, more than "
                    "dperm.max_coefficients = %d",
                    count, g_max_coefficients),
             errhint("Fewer classes or features; a superuser can raise dperm.max_coefficients.")));
}

void CheckSeedAllowed(const dperm::Options& o) {
  if (o.has_seed && !g_allow_seed)
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("option \"seed\" requires dperm.allow_seed = on"),
                    errhint("dperm.allow_seed is a superuser-only setting for tests: "
                            "seeded models are reproducible and not private.")));
}

void RaiseUndeclaredDimension(const char* aggregate) {
  ereport(ERROR,
          (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
           errmsg("%s needs the option \"dimension\": the number of features d", aggregate),
           errdetail("A release charged to a budgeted or protected relation never reads d from a "
                     "row: it is part of the model's public shape. Nothing was charged."),
           errhint("Pass dp_options(epsilon => ..., dimension => d), or feature_names with d "
                   "names. Rows of another length are truncated or padded with zeros.")));
  pg_unreachable();
}

}  // namespace dperm::pg
