// dp_explain in SQL: the plan training would follow, without reading any
// data (the plan and its JSON are the core's, src/core/planning/explain.cpp).
#include "dperm/planning/explain.hpp"
#include "dperm/planning/release_plan.hpp"
#include "dperm/planning/plan_release.hpp"

#include "ledger/ledger_writer.hpp"
#include "release/explain_pg.hpp"

extern "C" {
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/json.h"
}

#include <cstdio>

namespace dperm::pg {

void JsonKey(StringInfo s, const char* key) {
  if (s->data[s->len - 1] != '{') appendStringInfoChar(s, ',');
  escape_json(s, key);
  appendStringInfoChar(s, ':');
}

void JsonText(StringInfo s, const char* key, const char* value) {
  JsonKey(s, key);
  if (value == nullptr) appendStringInfoString(s, "null");
  else escape_json(s, value);
}

void JsonNumber(StringInfo s, const char* key, double value) {
  JsonKey(s, key);
  appendStringInfoString(s, float8out_internal(value));
}

void JsonInteger(StringInfo s, const char* key, int64 value) {
  JsonKey(s, key);
  appendStringInfo(s, INT64_FORMAT, value);
}

void JsonRelations(StringInfo s, const char* key, const Oid* relations, int n) {
  JsonKey(s, key);
  appendStringInfoChar(s, '[');
  for (int i = 0; i < n; i++) {
    if (i > 0) appendStringInfoChar(s, ',');
    escape_json(s, RelationNameForMessage(relations[i]));
  }
  appendStringInfoChar(s, ']');
}

char* ExplainPlanText(const ParsedOptions& parsed, LossKind loss, int64 n, int d, bool streaming,
                      PlanFigures* figures) {
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
    if (figures != nullptr) {
      const dperm::Plan& p = r.plan;
      PlanFigures& f = *figures;
      f = {};
      f.selects = r.selects;
      snprintf(f.algorithm, sizeof f.algorithm, "%s", dperm::AlgorithmName(p.algorithm));
      snprintf(f.noise, sizeof f.noise, "%s", dperm::NoiseName(p.noise));
      f.epsilon = dperm::ReleaseEpsilon(p);
      f.delta = dperm::ReleaseDelta(p);
      // A unit-level plan states its stages at the row (epsilon / k); per
      // unit each is k times its row share (group privacy, Dwork & Roth
      // 2014, Theorem 2.2), the ratio of ReleaseEpsilon to TotalEpsilon.
      const double total = dperm::TotalEpsilon(p);
      const double per_unit = total > 0 ? f.epsilon / total : 1;
      f.offset_epsilon = p.offset.epsilon * per_unit;
      f.decision_epsilon = p.decision.epsilon * per_unit;
      f.mechanism_epsilon = f.epsilon - f.offset_epsilon - f.decision_epsilon;
      f.noise_scale = p.noise_scale;
      f.expected_noise_sq = p.expected_noise_sq;
      f.iterations = p.iterations;
      f.passes = p.passes;
      f.gradient_evaluations = p.gradient_evaluations;
      f.noisy_steps = p.noisy_steps;
      f.memory_bytes = r.memory;
    }
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
