// dperm.explain_query (docs/user-guide.md, "Training on a query"): what
// dperm.train_query (or dperm.train_query_groups) would do with a query,
// without reading a row or charging anything -- dp_explain for a query.
//
// It runs the release's own steps before the charge (ResolveQueryReader,
// ResolveQueryRequest: the query's analysis, who reads, the columns, the
// options, the relations charged and the unit), so it refuses exactly what
// the release would refuse before its charge, with the same SQLSTATE and
// message. Then it reports the query's public shape and the release's plan.
//
// Nothing here is derived from the data: every figure comes from the query's
// text, the catalog (budgets, protection, units, keys) and the analyst's
// stated n. n is never counted nor read from the statistics (reltuples,
// pg_stats), which are not private releases: the plan is computed at the
// stated estimate and says so ("source": "stated estimate"). No row of the
// private relation or of a lookup is read, and no expression of the query
// is evaluated on one (the canonical text is only deparsed).
#include "dperm/options/options.hpp"
#include "dperm/planning/unit_count.hpp"

#include "guard/privacy_unit.hpp"
#include "guard/query_groups.hpp"
#include "guard/query_input.hpp"
#include "ledger/ledger_writer.hpp"
#include "release/explain_pg.hpp"
#include "release/release_sums.hpp"
#include "release/row_buffer.hpp"
#include "release/train_query.hpp"
#include "release/train_steps.hpp"

extern "C" {
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/json.h"
}

using namespace dperm::pg;

// dperm.explain_query(query text, features text, label text, loss text,
// options jsonb, n_estimate bigint [, group_by text, groups jsonb]) ->
// jsonb: the public shape of dperm.train_query's release on `query` (or
// dperm.train_query_groups' with group_by and groups) and its plan at the
// stated number of units n_estimate (per group), refused as the release
// would refuse it before its charge; no row read, nothing charged.
DPERM_FUNCTION(dperm_explain_query) {
  const char* query_text = text_to_cstring(PG_GETARG_TEXT_PP(0));
  TrainInput in = QueryArguments(fcinfo);
  const int64 n = PG_GETARG_INT64(5);
  const bool grouped = PG_NARGS() > 7;
  if (n < 1)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("n_estimate must be at least 1, not " INT64_FORMAT, n),
                    errhint("State the number of units (rows, without a privacy unit) you expect "
                            "the query to give%s.",
                            grouped ? " per group" : "")));
  SPI_connect();
  // The release's steps before its charge, in its order (train_query.cpp,
  // train_query_groups.cpp); each refusal is the release's own.
  const QueryInput q = ResolveQueryReader(query_text, &in);
  QueryGroups groups = {};
  const char* group_by = nullptr;
  if (grouped) {
    group_by = text_to_cstring(PG_GETARG_TEXT_PP(6));
    groups = AnalyseQueryGroups(q, group_by, PG_GETARG_JSONB_P(7));
  }
  ReleaseRequest request = {};
  const char* unit_column = ResolveQueryRequest(q, &in, &request);
  if (grouped && unit_column != nullptr)
    RefuseUnitGroups("dperm.train_query_groups", "dperm.train_query", in.name, unit_column);
  // The options as given (the request's carry the model's share).
  const ParsedOptions given = ParseOptionsJsonb(in.options);
  const dperm::Options& model = request.parsed.options;
  const int64 k = request.unit.max_rows;
  const UnitCountNoise count = UnitCountNoiseAt(request.unit_count_epsilon);
  // The mode 'auto' would choose at the stated n (ChooseStreaming's rule).
  const bool streaming = !InMemoryFits(n > PG_INT64_MAX / k ? PG_INT64_MAX : n * k, request.d);
  const char* plan = ExplainPlanText(request.parsed, in.loss, n, request.d, streaming);

  StringInfoData s;
  initStringInfo(&s);
  appendStringInfoChar(&s, '{');
  JsonText(&s, "relation", RelationNameForMessage(in.relid));
  JsonRelations(&s, "charged", request.relations, request.n_relations);
  Oid* lookups = static_cast<Oid*>(palloc(sizeof(Oid) * (list_length(q.lookups) + 1)));
  int n_lookups = 0;
  ListCell* lc;
  foreach (lc, q.lookups) lookups[n_lookups++] = lfirst_oid(lc);
  JsonRelations(&s, "lookups", lookups, n_lookups);
  JsonKey(&s, "privacy_unit");
  appendStringInfoChar(&s, '{');
  JsonText(&s, "column", unit_column);
  JsonText(&s, "declared_by",
           unit_column != nullptr ? RelationNameForMessage(request.unit.relation) : nullptr);
  JsonInteger(&s, "max_rows_per_unit", k);
  JsonText(&s, "neighbours", NeighborsOf(request.unit));
  appendStringInfoChar(&s, '}');
  JsonText(&s, "query", CanonicalQuerySource(q));
  JsonText(&s, "read_as", CanonicalQueryText(q, in.features, in.label, unit_column));
  if (grouped) {
    JsonKey(&s, "groups");
    appendStringInfoChar(&s, '{');
    JsonText(&s, "group_by", group_by);
    JsonKey(&s, "keys");
    appendStringInfoChar(&s, '[');
    for (int i = 0; i < groups.n; i++) {
      if (i > 0) appendStringInfoChar(&s, ',');
      escape_json(&s, groups.texts[i]);
    }
    appendStringInfoChar(&s, ']');
    JsonText(&s, "charged",
             "once for the statement: each group's count and model are drawn at the epsilon "
             "below on its own rows (parallel composition)");
    appendStringInfoChar(&s, '}');
  }
  // The count's share (UnitCountEpsilon, unit_count.hpp: the release's own
  // rule, from the options' units_estimate, never from n_estimate, so that
  // it says what dperm.train_query with these options does) and the
  // model's rest: what the one charge records (ChargeUnitRelease).
  JsonKey(&s, "epsilon");
  appendStringInfoChar(&s, '{');
  JsonNumber(&s, "total", given.options.epsilon);
  JsonNumber(&s, "count", request.unit_count_epsilon);
  JsonNumber(&s, "model", model.epsilon);
  JsonNumber(&s, "delta", model.delta);
  appendStringInfoChar(&s, '}');
  // The noisy count's discrete Laplace (ReleaseUnitCount): scale b =
  // Delta_1 / epsilon with Delta_1 = 1 + grid + slack (evaluate.hpp).
  JsonKey(&s, "count");
  appendStringInfoChar(&s, '{');
  JsonText(&s, "mechanism", "discrete Laplace on the number of units");
  JsonNumber(&s, "epsilon", request.unit_count_epsilon);
  JsonText(&s, "rule", dperm::UnitCountRule(given.options.units_estimate));
  if (given.options.units_estimate > 0)
    JsonInteger(&s, "units_estimate", given.options.units_estimate);
  JsonNumber(&s, "scale", count.scale);
  JsonNumber(&s, "grid", count.grid);
  appendStringInfoChar(&s, '}');
  // n: the analyst's statement, never the data's.
  JsonKey(&s, "n");
  appendStringInfoChar(&s, '{');
  JsonInteger(&s, "value", n);
  JsonText(&s, "source", grouped ? "stated estimate, per group" : "stated estimate");
  JsonInteger(&s, "row_slots", n > PG_INT64_MAX / k ? PG_INT64_MAX : n * k);
  appendStringInfoChar(&s, '}');
  JsonInteger(&s, "d", request.d);
  JsonText(&s, "mode", streaming ? "streaming" : "in_memory");
  JsonText(&s, "note",
           "from the query's text, the catalog and the stated n only: no row was read and "
           "nothing was charged");
  JsonKey(&s, "plan");
  appendStringInfoString(&s, plan);
  appendStringInfoChar(&s, '}');
  // Built in SPI's context, which SPI_finish frees: SPI_datumTransfer
  // copies the jsonb out first.
  Datum json = DirectFunctionCall1(jsonb_in, CStringGetDatum(s.data));
  Datum out = SPI_datumTransfer(json, false, -1);
  SPI_finish();
  PG_RETURN_DATUM(out);
}
