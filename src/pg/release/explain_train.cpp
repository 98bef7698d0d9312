// dperm.explain (docs/user-guide.md, "Before you train: dperm.explain"):
// what dperm.train would do with a relation, a feature spec (or a float8[]
// column), a label, a loss and options, without reading a row or charging
// anything -- dp_explain for the call as the analyst writes it.
//
// It runs dperm.train's own steps before its count (ResolveTrainInput,
// RequestBeforeCount: who reads, the options, the relations charged, the
// privacy unit and the count's share of epsilon), so it refuses what the
// release would refuse before its charge, with the same SQLSTATE and
// message. d is the spec's (or the options' dimension), never a row's.
//
// n is never counted nor read from the statistics (reltuples, pg_stats,
// which are exact functions of the rows): it is the caller's n_estimate, or,
// without one, the last count dperm released of that relation that the
// caller may see -- at a privacy unit the noisy count of units a named
// model of it states (dperm.models, its row-level security), at the row the
// n of the caller's own last ledger row for it (n is public at the row,
// docs/user-guide.md "n is public"). Both were released already: reading
// them costs nothing. The lookups run with the caller's rights.
#include "dperm/options/options.hpp"

#include "guard/privacy_unit.hpp"
#include "ledger/ledger_writer.hpp"
#include "release/explain_pg.hpp"
#include "release/release_sums.hpp"
#include "release/row_buffer.hpp"
#include "release/train_input.hpp"
#include "release/train_steps.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
}

namespace dperm::pg {
namespace {

// The estimate of n the plan is computed at: units at a privacy unit, else
// rows. `source` says where it comes from.
struct NEstimate {
  int64 value;
  const char* source;
};

// The last released count of `relid` the caller may see (see the head
// comment), or value 0. As the caller: the catalog's row-level security
// decides what they see. Every name, operator and function qualified.
NEstimate LastReleasedCount(Oid relid, const char* unit_column) {
  NEstimate e = {0, nullptr};
  Datum args[2] = {ObjectIdGetDatum(relid),
                   CStringGetTextDatum(unit_column != nullptr ? unit_column : "")};
  Oid types[2] = {OIDOID, TEXTOID};
  const char* sql =
      unit_column != nullptr
          // A named model trained on the relation itself (not a query of it)
          // at the same unit: its model states the noisy count of units.
          ? "SELECT ((m.model::pg_catalog.jsonb OPERATOR(pg_catalog.->) 'privacy_unit')"
            "         OPERATOR(pg_catalog.->>) 'units')::pg_catalog.int8,"
            "       pg_catalog.format('the noisy count of units released with model %s "
            "version %s (%s)', m.name, m.version, m.trained_at)"
            "  FROM dperm.models m"
            " WHERE m.relation OPERATOR(pg_catalog.=) $1::pg_catalog.regclass"
            "   AND m.query IS NULL AND m.model IS NOT NULL"
            "   AND ((m.model::pg_catalog.jsonb OPERATOR(pg_catalog.->) 'privacy_unit')"
            "        OPERATOR(pg_catalog.->>) 'column') OPERATOR(pg_catalog.=) $2"
            " ORDER BY m.trained_at DESC, m.version DESC LIMIT 1"
          // The caller's own ledger rows (the ledger shows each role its
          // own) that read the relation itself, first in `relations`.
          : "SELECT l.n, pg_catalog.format('n of ledger row %s (%s)', l.id, l.released_at)"
            "  FROM dperm.ledger l"
            " WHERE l.relations[1] OPERATOR(pg_catalog.=) $1::pg_catalog.regclass"
            "   AND l.n OPERATOR(pg_catalog.>) 0 AND $2 OPERATOR(pg_catalog.=) ''"
            " ORDER BY l.id DESC LIMIT 1";
  if (SPI_execute_with_args(sql, 2, types, args, nullptr, true, 1) != SPI_OK_SELECT)
    elog(ERROR, "dperm.explain: the lookup of the last released count failed");
  if (SPI_processed == 1) {
    bool isnull;
    Datum v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
    if (!isnull && DatumGetInt64(v) > 0) {
      e.value = DatumGetInt64(v);
      e.source = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
    }
  }
  return e;
}

// The compact answer: algorithm, epsilon and delta as asked with their
// split, noise, the work, n and what is public.
void AppendCompact(StringInfo s, const TrainInput& in, const ReleaseRequest& r,
                   const PlanFigures& f, const NEstimate& n, double asked_epsilon, bool streaming) {
  const bool unit = r.unit.column != nullptr;
  JsonText(s, "relation", RelationNameForMessage(in.relid));
  JsonText(s, "algorithm", f.algorithm);
  JsonText(s, "mode", streaming ? "streaming" : "in_memory");
  // As asked: the whole release's epsilon, and its parts (they add up to
  // it: the count's share, then the plan's stages, per unit).
  JsonNumber(s, "epsilon", asked_epsilon);
  JsonNumber(s, "delta", f.delta);
  JsonKey(s, "split");
  appendStringInfoChar(s, '{');
  JsonNumber(s, "count", unit ? r.unit_count_epsilon : 0);
  JsonNumber(s, "offset", f.offset_epsilon);
  JsonNumber(s, "decision", f.decision_epsilon);
  JsonNumber(s, "model", f.mechanism_epsilon);
  appendStringInfoChar(s, '}');
  JsonText(
      s, "per",
      unit ? psprintf("unit (%s, at most " INT64_FORMAT " rows)", r.unit.column, r.unit.max_rows)
           : "row");
  JsonKey(s, "noise");
  appendStringInfoChar(s, '{');
  JsonText(s, "model", f.noise);
  JsonNumber(s, "scale", f.noise_scale);
  JsonNumber(s, "expected_norm_sq", f.expected_noise_sq);
  if (unit) JsonNumber(s, "count_scale", UnitCountNoiseAt(r.unit_count_epsilon).scale);
  appendStringInfoChar(s, '}');
  JsonKey(s, "n");
  appendStringInfoChar(s, '{');
  JsonInteger(s, "value", n.value);
  JsonText(s, "counts", unit ? "units" : "rows");
  JsonText(s, "source", n.source);
  appendStringInfoChar(s, '}');
  JsonInteger(s, "d", r.d);
  // The work, the running time's public drivers (docs/user-guide.md,
  // "Running time depends on n, d and the options").
  JsonKey(s, "cost");
  appendStringInfoChar(s, '{');
  JsonInteger(s, "iterations", f.iterations);
  JsonInteger(s, "passes", f.passes);
  JsonInteger(s, "gradient_evaluations", f.gradient_evaluations);
  JsonInteger(s, "memory_bytes", static_cast<int64>(f.memory_bytes));
  appendStringInfoChar(s, '}');
  JsonRelations(s, "charged", r.relations, r.n_relations);
  JsonText(s, "public",
           unit ? "the relation, the spec, the options and d; the noisy count of units (in the "
                  "model); nothing else of the data"
                : "the relation, the spec, the options, d and n (public at the row: in the model "
                  "and the ledger)");
}

}  // namespace
}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.explain(relation regclass, features jsonb | text, label text, loss
// text, options jsonb, n_estimate bigint DEFAULT NULL, full boolean
// DEFAULT false) -> jsonb: what dperm.train would release, its checks
// refused as the release would refuse them before its charge; no row read,
// nothing charged.
DPERM_FUNCTION(dperm_explain) {
  for (int i = 0; i < 5; i++)
    if (PG_ARGISNULL(i))
      ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                      errmsg("dperm.explain: argument %d must not be NULL", i + 1)));
  const bool has_spec = get_fn_expr_argtype(fcinfo->flinfo, 1) == JSONBOID;
  const bool full = !PG_ARGISNULL(6) && PG_GETARG_BOOL(6);
  int64 stated = 0;
  if (!PG_ARGISNULL(5)) {
    stated = PG_GETARG_INT64(5);
    if (stated < 1)
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("n_estimate must be at least 1, not " INT64_FORMAT, stated),
                      errhint("State the number of units (rows, without a privacy unit) you "
                              "expect, or pass NULL for the last count dperm released.")));
  }
  TrainInput in = ResolveTrainInput(
      PG_GETARG_OID(0), has_spec ? nullptr : text_to_cstring(PG_GETARG_TEXT_PP(1)),
      has_spec ? PG_GETARG_JSONB_P(1) : nullptr, text_to_cstring(PG_GETARG_TEXT_PP(2)),
      text_to_cstring(PG_GETARG_TEXT_PP(3)), PG_GETARG_JSONB_P(4), TrainMode::kAuto);
  SPI_connect();
  ReleaseRequest r = RequestBeforeCount(&in);
  if (r.d < 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("dperm.explain needs d: a feature spec, or the option \"dimension\""),
                    errhint("dperm.explain never reads d from a row.")));
  // The epsilon asked, before the count's share was taken out.
  const double asked_epsilon = ParseOptionsJsonb(in.options).options.epsilon;
  const char* unit_column = r.unit.column != nullptr && !r.unit.row ? r.unit.column : nullptr;
  NEstimate n = {stated, "stated estimate"};
  if (stated == 0) n = LastReleasedCount(in.relid, unit_column);
  if (n.value == 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("dperm.explain found no released count of %s that you may see", in.name),
                    errhint("Pass n_estimate, the number of %s you expect.",
                            unit_column != nullptr ? "units" : "rows")));
  const int64 k = unit_column != nullptr ? r.unit.max_rows : 1;
  const int64 slots = n.value > PG_INT64_MAX / k ? PG_INT64_MAX : n.value * k;
  // The mode 'auto' would choose at that n (ChooseStreaming's rule).
  const bool streaming = !InMemoryFits(slots, r.d);
  PlanFigures figures;
  const char* plan = ExplainPlanText(r.parsed, in.loss, n.value, r.d, streaming, &figures);

  StringInfoData s;
  initStringInfo(&s);
  appendStringInfoChar(&s, '{');
  AppendCompact(&s, in, r, figures, n, asked_epsilon, streaming);
  if (full) {
    JsonInteger(&s, "row_slots", slots);
    if (has_spec) {
      JsonKey(&s, "features");
      appendStringInfoString(&s, JsonbToCString(nullptr, &PG_GETARG_JSONB_P(1)->root, 0));
    }
    JsonText(&s, "read_as", in.features_sql);
    JsonText(&s, "note",
             "from the catalog, the spec, the options and the stated or released n only: no row "
             "was read and nothing was charged");
    JsonKey(&s, "plan");
    appendStringInfoString(&s, plan);
  }
  appendStringInfoChar(&s, '}');
  Datum json = DirectFunctionCall1(jsonb_in, CStringGetDatum(s.data));
  Datum out = SPI_datumTransfer(json, false, -1);
  SPI_finish();
  PG_RETURN_DATUM(out);
}
