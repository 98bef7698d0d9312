// dp_explain's plan (explain_pg.cpp), shared with dperm.explain_query
// (explain_query.cpp): the plan a release would follow, from public inputs
// only, without reading any data.
#pragma once

#include "types/options_pg.hpp"

namespace dperm::pg {

// The plan of a release of `n` units of `d` features with `parsed`'s
// options (with max_rows_per_unit = k, n * k row slots; 22023 when that
// overflows), in memory or by passes (`streaming`), as the JSON text of the
// core's explanation (ExplainJson, or l2 => 'auto''s selection).
char* ExplainPlanText(const ParsedOptions& parsed, LossKind loss, int64 n, int d, bool streaming);

}  // namespace dperm::pg
