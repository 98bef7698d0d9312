// dperm.evaluate_query (docs/user-guide.md, "Measuring a query model"): a
// private evaluation of a named model on the rows a query selects from one
// budgeted or protected relation, and dperm.evaluate on a relation whose
// budget declares a privacy unit (the query SELECT * FROM it). The query is
// validated exactly as dperm.train_query validates it (AnalyseQueryInput,
// CheckQueryReader, the lookups), before anything is charged.
//
// The release: one ReleaseSums, charged once before a row is read, of
// m + 1 bounded sums over the input rows (m = 2 for a classifier: the
// correct predictions, bound 1, and the clipped log-loss, bound B; m = 1
// for Huber: the clipped squared residual, bound B^2) and their number n
// (each row contributes 1: bound 1). The metrics are the noisy sums divided
// by the noisy n, clamped to >= 1 (post-processing, Dwork & Roth 2014,
// Prop. 2.1): accuracy = S1~ / max(1, n~), log-loss = S2~ / max(1, n~),
// RMSE = sqrt(S1~ / max(1, n~)). No size is exact or public.
//
// Why it is epsilon-DP, at the relation's unit:
// - The row (no unit in the budget): the query is 1-stable (train_query.cpp:
//   one private row yields at most one input row), so one row added or
//   removed adds or removes at most one input row, whose per-row values lie
//   in [0, bound_i]: each normalised sum u_i = S_i / bound_i moves by at
//   most 1, and so does n. No sampled read is needed (n is released, not
//   used): the L1 sensitivity of the m + 1 normalised sums is m + 1 (plus
//   the grid and rounding slack), and ReleaseBoundedSums' discrete Laplace
//   (evaluate.hpp: scale (m + 1)(1 + g + slack) / epsilon; the discrete
//   Laplace mechanism of Ghosh, Roughgarden & Sundararajan 2012 / CKS20,
//   the Laplace mechanism's Dwork & Roth 2014 Thm 3.6) is epsilon-DP for
//   one row added or removed (replaced: also at most 1 per sum).
// - A declared unit with k = max_rows_per_unit: each unit keeps at most k
//   of its input rows (row_number() over the unit in the order of a keyed
//   hash of the row, <= k; the rows kept depend on that unit's rows only).
//   One unit added, removed or replaced moves each u_i and n by at most k,
//   so the L1 sensitivity is k (m + 1) (1 + g + slack): the noise is drawn
//   at epsilon / k (SumsRequest.noise_epsilon: scale k times larger), which
//   is epsilon-DP per unit; one row moves each sum by at most one bound
//   (a row displacing another in its unit's k is a replacement), so the
//   budgets of the family that name no unit are charged epsilon as well.
//   The m + 1 sums are one vector release, one charge (no composition
//   beyond the L1 norm; with the basic composition of Dwork & Roth 2014,
//   Thm 3.16, it is the same bound).
// - The slack: each metric sum is exact on a grid of bound 2^-40 and
//   rounded once to a double (exact_sum.hpp): at most 2^-40 plus n 2^-50
//   of a bound; n is private here, so the slack is stated for any input of
//   at most 2^40 rows (2^-40 + 2^-10), public.
#include "dperm/options/options.hpp"

#include <algorithm>
#include <cmath>

#include "base/internal_sql.hpp"
#include "base/settings.hpp"
#include "guard/privacy_unit.hpp"
#include "guard/protect.hpp"
#include "guard/query_input.hpp"
#include "guard/relations.hpp"
#include "models/evaluate_metrics.hpp"
#include "models/evaluate_query.hpp"
#include "models/model_evaluate.hpp"
#include "models/model_records.hpp"
#include "models/model_registry.hpp"
#include "release/release_sums.hpp"
#include "release/train_input.hpp"
#include "release/train_query.hpp"
#include "types/options_pg.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
}

namespace dperm::pg {
namespace {

// The FROM item of the evaluation's rows: the canonical query (its columns
// `features`, `label` and dperm_unit), at a declared unit keeping at most k
// rows of each unit, ranked by SHA-256 of a fresh key and the row's text
// (identical rows of a unit are interchangeable for every metric).
char* BoundedQuerySource(const char* canonical, const PrivacyUnit& u, const char* features,
                         const char* label, const EvaluateOptions& o) {
  if (u.row) return psprintf("(%s) t", canonical);
  uint8 key[16];
  if (o.has_seed) {
    for (int i = 0; i < 16; i++)
      key[i] =
          static_cast<uint8>(static_cast<uint64>(o.seed) >> (8 * (i % 8))) ^ static_cast<uint8>(i);
  } else if (!pg_strong_random(key, sizeof key)) {
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                    errmsg("could not generate a random key for the units' rows")));
  }
  char hex[2 * sizeof key + 1];
  hex[hex_encode(reinterpret_cast<const char*>(key), sizeof key, hex)] = '\0';
  const char* f = quote_identifier(features);
  const char* l = quote_identifier(label);
  return psprintf(
      "(SELECT b.%s, b.%s FROM"
      " (SELECT t.%s, t.%s, pg_catalog.row_number() OVER (PARTITION BY t.%s"
      "    ORDER BY pg_catalog.sha256('\\x%s'::pg_catalog.bytea OPERATOR(pg_catalog.||)"
      "      pg_catalog.textsend(pg_catalog.concat_ws('|', t.%s, t.%s)))) AS dperm_rank"
      "    FROM (%s) t) b"
      " WHERE b.dperm_rank OPERATOR(pg_catalog.<=) %lld) t",
      f, l, f, l, quote_identifier(kQueryUnitColumn), hex, f, l, canonical,
      static_cast<long long>(u.max_rows));
}

}  // namespace

EvaluationQuery CheckEvaluationQuery(const char* query, const char* features, const char* label,
                                     const EvaluatedModel& m) {
  EvaluationQuery e = {};
  e.caller = GetUserId();
  e.features = features;
  e.label = label;
  // The query, who reads it and its columns: dperm.train_query's checks,
  // every refusal before the charge.
  e.q = AnalyseQueryInput(query, IsPrivateQueryRelation);
  TrainInput in = {};
  in.relid = e.q.relid;
  in.caller = e.caller;
  in.name = LockReadableRelation(e.q.relid, &in.owner, false);
  CheckQueryReader(&in, e.q);
  e.reader = in.reader;
  e.relation = in.name;
  Oid features_type, label_type;
  QueryColumnTypes(e.q, features, label, &features_type, &label_type);
  if (strcmp(features, label) == 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("the features and the label must be different columns"),
                    errdetail("Nothing was charged.")));
  if (m.loss_name != nullptr)
    e.label_sql =
        ColumnLabel(m.loss, TargetFor(m.loss, label_type, label, m.loss_name), m.classes, label);
  // The relations charged and the unit (QueryChargedTo's, without a model).
  e.relations = TrainRelations(e.q.relid, InvalidOid, &e.n_relations);
  e.unit = UnitOf(e.relations, e.n_relations);
  if (e.unit.column != nullptr) {
    e.unit = TrainUnit(e.q.relid, e.relations, e.n_relations);
    CheckUnitType(e.q.relid, e.unit);
    e.unit_column = e.unit.column;
  } else {
    e.unit.column = kQueryUnitColumn;
    e.unit.max_rows = 1;
    e.unit.relation = e.q.relid;
    e.unit.row = true;
  }
  e.unit.read_column = kQueryUnitColumn;
  CheckUnitReadable(in, e.q, e.unit_column);
  const char* schema = ExtensionSchema("dperm", CurrentMemoryContext);
  if (schema == nullptr) elog(ERROR, "dperm is not installed in this database");
  e.schema = quote_identifier(schema);
  return e;
}

QueryMetrics ReleaseQueryMetrics(const EvaluationQuery& e, const char* canonical,
                                 const EvaluatedModel& m, const EvaluateOptions& o, bool charged,
                                 const char* neighbors) {
  QueryMetrics r;
  r.regression = dperm::LossLabel(m.loss) == dperm::LabelKind::kTarget;
  r.bound = r.regression ? o.residual_bound : o.loss_bound;
  const int metrics = r.regression ? 1 : 2;
  MetricRead read = {
      e.reader,
      MetricSql(m.loss, quote_identifier(e.features), e.label_sql,
                BoundedQuerySource(canonical, e.unit, e.features, e.label, o), e.schema),
      m.type,
      m.model,
      m.d,
      r.bound,
      metrics};
  const double bounds[3] = {r.regression ? r.bound * r.bound : 1.0, r.regression ? 1.0 : r.bound,
                            1.0};
  SumsRequest request = {"evaluate",
                         "discrete Laplace on clipped sums and their count",
                         m.loss_name,
                         o.epsilon,
                         o.has_seed,
                         static_cast<uint64>(o.seed),
                         0,
                         m.d,
                         e.caller,
                         e.relations,
                         e.n_relations,
                         metrics + 1,
                         bounds,
                         std::ldexp(1.0, -40) + std::ldexp(1.0, -10),
                         e.unit,
                         o.epsilon / static_cast<double>(e.unit.max_rows),
                         charged,
                         neighbors};
  r.released = ReleaseSums(request, ReadMetricSums, &read);
  // Post-processing: the means over the noisy count, at least 1.
  const double* noisy = r.released.values;
  r.n = std::max(noisy[metrics], 0.0);
  const double dn = std::max(noisy[metrics], 1.0);
  r.m1 = r.regression ? std::sqrt(std::max(noisy[0] / dn, 0.0))
                      : std::min(std::max(noisy[0] / dn, 0.0), 1.0);
  r.m2 = r.regression ? 0 : std::max(noisy[1] / dn, 0.0);
  return r;
}

char* QueryEvaluationJson(const char* head, const char* query, const EvaluationQuery& e,
                          const EvaluateOptions& o, const QueryMetrics& r, MemoryContext context) {
  SPI_connect();
  Oid types[15] = {TEXTOID,   TEXTOID,   FLOAT8OID, FLOAT8OID, FLOAT8OID,
                   FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID, INT8OID,
                   BOOLOID,   TEXTOID,   BOOLOID,   TEXTOID,   INT8OID};
  Datum args[15] = {CStringGetTextDatum(head),
                    CStringGetTextDatum(query),
                    Float8GetDatum(r.n),
                    Float8GetDatum(o.epsilon),
                    Float8GetDatum(r.m1),
                    Float8GetDatum(r.m2),
                    Float8GetDatum(r.bound),
                    Float8GetDatum(r.released.scale),
                    Float8GetDatum(r.released.grid),
                    Int64GetDatum(r.released.ledger_id),
                    BoolGetDatum(r.regression),
                    CStringGetTextDatum(GetUserNameFromId(e.caller, false)),
                    BoolGetDatum(o.has_seed),
                    CStringGetTextDatum(e.unit.row ? "" : e.unit.column),
                    Int64GetDatum(e.unit.max_rows)};
  RunAsCatalogOwner(
      "SELECT ($1::pg_catalog.jsonb OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object("
      "   'query', $2, 'n', pg_catalog.round($3), 'n_noisy', true,"
      "   'epsilon', $4, 'delta', 0, 'ledger_id', $10, 'evaluated_by', $12,"
      "   'evaluated_at', pg_catalog.now(), 'private', NOT $13,"
      "   'mechanism', 'discrete Laplace on clipped sums and their count, divided by the noisy"
      " count (at least 1)',"
      "   'privacy_unit', CASE WHEN $14 OPERATOR(pg_catalog.=) '' THEN pg_catalog.to_jsonb('row'::pg_catalog.text)"
      "     ELSE pg_catalog.jsonb_build_object('column', $14, 'max_rows_per_unit', $15) END,"
      "   'noise_scale', $8, 'grid', $9)"
      " OPERATOR(pg_catalog.||) CASE WHEN $11"
      "   THEN pg_catalog.jsonb_build_object('rmse', $5, 'residual_bound', $7)"
      "   ELSE pg_catalog.jsonb_build_object('accuracy', $5, 'log_loss', $6, 'loss_bound', $7) END)"
      "   ::pg_catalog.text",
      15, types, args, nullptr, SPI_OK_SELECT, true);
  char* evaluation = CopyValue(context, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
  SPI_finish();
  return evaluation;
}

namespace {

// The record stored with the version: its name, version, owner and
// evaluation.
char* EvaluationRecord(const char* name, int32 version, Oid owner, const char* evaluation,
                       MemoryContext context) {
  SPI_connect();
  Oid types[4] = {TEXTOID, INT4OID, TEXTOID, OIDOID};
  Datum args[4] = {CStringGetTextDatum(name), Int32GetDatum(version),
                   CStringGetTextDatum(evaluation), ObjectIdGetDatum(owner)};
  RunAsCatalogOwner(
      "SELECT pg_catalog.jsonb_build_object('name', $1, 'version', $2,"
      "  'owner', $4, 'evaluation', $3::pg_catalog.jsonb)::pg_catalog.text",
      4, types, args, nullptr, SPI_OK_SELECT, true);
  char* record = CopyValue(context, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
  SPI_finish();
  return record;
}

}  // namespace

Datum EvaluateQueryModel(const char* name, const char* query_text, const char* features,
                         const char* label, EvaluateOptions o) {
  const Oid owner = OwnedModel(name, "evaluate").owner;
  MemoryContext context = CurrentMemoryContext;
  TrainedVersion v = LoadTrainedVersion(name, o.version, owner, GetUserId(), context);
  const EvaluatedModel m = {v.loss_name, ParseLossName(v.loss_name), v.model_type, v.model, v.d,
                            v.classes};
  SPI_connect();
  const EvaluationQuery e = CheckEvaluationQuery(query_text, features, label, m);
  const char* canonical = CanonicalQueryText(e.q, features, label, e.unit_column);
  const QueryMetrics r = ReleaseQueryMetrics(e, canonical, m, o, false, nullptr);
  SPI_finish();
  char* evaluation =
      QueryEvaluationJson(psprintf("{\"version\": %d}", v.version), query_text, e, o, r, context);
  SubmitModelRecord(kRecordEvaluation,
                    EvaluationRecord(name, v.version, owner, evaluation, context));
  return DirectFunctionCall1(jsonb_in, CStringGetDatum(evaluation));
}

}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.evaluate_query(name text, query text, features text, label text,
// options jsonb) -> jsonb: dperm.evaluate on the rows of a query
// (dperm.train_query's), its size released noisily with the metric sums.
DPERM_FUNCTION(dperm_evaluate_query) {
  const char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  const char* query = text_to_cstring(PG_GETARG_TEXT_PP(1));
  const char* features = text_to_cstring(PG_GETARG_TEXT_PP(2));
  const char* label = text_to_cstring(PG_GETARG_TEXT_PP(3));
  EvaluateOptions o = ParseEvaluateOptions(PG_GETARG_JSONB_P(4));
  PG_RETURN_DATUM(EvaluateQueryModel(name, query, features, label, o));
}
