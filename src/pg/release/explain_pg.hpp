// dp_explain's plan (explain_pg.cpp), shared with dperm.explain_query
// (explain_query.cpp): the plan a release would follow, from public inputs
// only, without reading any data.
#pragma once

#include "types/options_pg.hpp"

extern "C" {
#include "lib/stringinfo.h"
}

namespace dperm::pg {

// The plan of a release of `n` units of `d` features with `parsed`'s
// options (with max_rows_per_unit = k, n * k row slots; 22023 when that
// overflows), in memory or by passes (`streaming`), as the JSON text of the
// core's explanation (ExplainJson, or l2 => 'auto''s selection).
// With `figures`, also the plan's headline figures (PlanFigures).
struct PlanFigures;
char* ExplainPlanText(const ParsedOptions& parsed, LossKind loss, int64 n, int d, bool streaming,
                      PlanFigures* figures = nullptr);

// A plan's headline figures, for dperm.explain's compact answer (copied out
// of the core's Plan, src/core/plan/plan.cpp's PlanJson names them).
// Epsilons are per unit (the plan's ReleaseEpsilon: a unit-level plan's
// row-level stages times k, group privacy, unit_level.hpp); without a
// privacy unit, per row.
struct PlanFigures {
  bool selects;  // l2 => 'auto': the figures are its first candidate's
  char algorithm[64];
  char noise[64];            // the model's noise (NoiseName)
  double epsilon;            // the release's (ReleaseEpsilon): offset + decision + mechanism
  double delta;              // ReleaseDelta
  double offset_epsilon;     // stage 0 (offset.hpp), per unit
  double decision_epsilon;   // stage 2 (decision.hpp), per unit
  double mechanism_epsilon;  // the mechanism's own share, per unit
  double noise_scale;
  double expected_noise_sq;  // E||noise||^2 of the model's coefficients
  int64 iterations;
  int64 passes;  // streaming: passes over the rows (0: in memory)
  int64 gradient_evaluations;
  int64 noisy_steps;
  double memory_bytes;  // the training's peak memory besides the rows
};

// JSON helpers for the explain functions (text escaped, numbers as float8out).
void JsonKey(StringInfo s, const char* key);
void JsonText(StringInfo s, const char* key, const char* value);
void JsonNumber(StringInfo s, const char* key, double value);
void JsonInteger(StringInfo s, const char* key, int64 value);
// A JSON array of the relations' schema-qualified names.
void JsonRelations(StringInfo s, const char* key, const Oid* relations, int n);

}  // namespace dperm::pg
