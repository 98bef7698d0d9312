// dp_explain in SQL: the plan training would follow, without reading any
// data (the plan and its JSON are the core's, src/core/planning/explain.cpp).
#include "dperm/planning/explain.hpp"
#include "dperm/planning/release_plan.hpp"
#include "dperm/planning/plan_release.hpp"

#include "release/explain_pg.hpp"

extern "C" {
#include "utils/builtins.h"
}

namespace dperm::pg {

char* ExplainPlanText(const ParsedOptions& parsed, LossKind loss, int64 n, int d, bool streaming) {
  // With max_rows_per_unit = k, n counts units: the release reads n k row
  // slots (unit_level.hpp).
  const int64 k = parsed.options.max_rows_per_unit;
  if (k > 0 && n > PG_INT64_MAX / k)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("n * max_rows_per_unit is out of range")));
  const int64 rows = k > 0 ? n * k : n;
  PgBox<std::string> json(CurrentMemoryContext);
  RunCore([&] {
    dperm::ReleasePlan r = streaming ? dperm::PlanReleaseByPasses(parsed.options, loss, rows, d)
                                     : dperm::PlanInMemoryRelease(parsed.options, loss, rows, d);
    json.Emplace(r.selects ? dperm::ExplainL2Selection(r.selection) : dperm::ExplainJson(r.plan));
  });
  // The string is copied into the caller's context before the box is reset.
  return pstrdup(json->c_str());
}

}  // namespace dperm::pg

using namespace dperm::pg;

// dp_explain(loss text, n bigint, d int, options jsonb) -> jsonb
DPERM_FUNCTION(dp_explain) {
  char* loss_name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  int64 n = PG_GETARG_INT64(1);
  int32 d = PG_GETARG_INT32(2);
  if (n < 1)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("n must be at least 1, not " INT64_FORMAT, n)));
  if (d < 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("d must not be negative, not %d", d)));
  dperm::LossKind loss = ParseLossName(loss_name);
  ParsedOptions parsed = ParseOptionsJsonb(PG_GETARG_JSONB_P(3));
  const char* json = ExplainPlanText(parsed, loss, n, d, false);
  return DirectFunctionCall1(jsonb_in, CStringGetDatum(json));
}
