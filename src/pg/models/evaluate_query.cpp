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

// The evaluation's JSON (the result) and the record stored with the version.
void QueryEvaluationJson(const char* name, Oid owner, int32 version, const char* query,
                         const PrivacyUnit& u, const EvaluateOptions& o, double n, double m1,
                         double m2, double bound, const SumsRelease& released, bool regression,
                         Oid caller, MemoryContext context, char** evaluation, char** record) {
  SPI_connect();
  Oid types[15] = {INT4OID,   TEXTOID,   FLOAT8OID, FLOAT8OID, FLOAT8OID,
                   FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID, INT8OID,
                   BOOLOID,   TEXTOID,   BOOLOID,   TEXTOID,   INT8OID};
  Datum args[15] = {Int32GetDatum(version),
                    CStringGetTextDatum(query),
                    Float8GetDatum(n),
                    Float8GetDatum(o.epsilon),
                    Float8GetDatum(m1),
                    Float8GetDatum(m2),
                    Float8GetDatum(bound),
                    Float8GetDatum(released.scale),
                    Float8GetDatum(released.grid),
                    Int64GetDatum(released.ledger_id),
                    BoolGetDatum(regression),
                    CStringGetTextDatum(GetUserNameFromId(caller, false)),
                    BoolGetDatum(o.has_seed),
                    CStringGetTextDatum(u.row ? "" : u.column),
                    Int64GetDatum(u.max_rows)};
  RunAsCatalogOwner(
      "SELECT (pg_catalog.jsonb_build_object('version', $1, 'query', $2,"
      "   'n', pg_catalog.round($3), 'n_noisy', true,"
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
  *evaluation = CopyValue(context, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
  Oid rtypes[4] = {TEXTOID, INT4OID, TEXTOID, OIDOID};
  Datum rargs[4] = {CStringGetTextDatum(name), Int32GetDatum(version),
                    CStringGetTextDatum(*evaluation), ObjectIdGetDatum(owner)};
  RunAsCatalogOwner(
      "SELECT pg_catalog.jsonb_build_object('name', $1, 'version', $2,"
      "  'owner', $4, 'evaluation', $3::pg_catalog.jsonb)::pg_catalog.text",
      4, rtypes, rargs, nullptr, SPI_OK_SELECT, true);
  *record = CopyValue(context, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
  SPI_finish();
}

}  // namespace

Datum EvaluateQueryModel(const char* name, const char* query_text, const char* features,
                         const char* label, EvaluateOptions o) {
  const Oid caller = GetUserId();
  const Oid owner = OwnedModel(name, "evaluate").owner;
  MemoryContext context = CurrentMemoryContext;
  TrainedVersion v = LoadTrainedVersion(name, o.version, owner, caller, context);
  const dperm::LossKind loss = ParseLossName(v.loss_name);
  const bool regression = dperm::LossLabel(loss) == dperm::LabelKind::kTarget;

  SPI_connect();
  // The query, who reads it and its columns: dperm.train_query's checks,
  // every refusal before the charge.
  const QueryInput q = AnalyseQueryInput(query_text, IsPrivateQueryRelation);
  TrainInput in = {};
  in.relid = q.relid;
  in.caller = caller;
  in.name = LockReadableRelation(q.relid, &in.owner, false);
  CheckQueryReader(&in, q);
  Oid features_type, label_type;
  QueryColumnTypes(q, features, label, &features_type, &label_type);
  if (strcmp(features, label) == 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("the features and the label must be different columns"),
                    errdetail("Nothing was charged.")));
  const char* label_sql =
      ColumnLabel(loss, TargetFor(loss, label_type, label, v.loss_name), v.classes, label);
  // The relations charged and the unit (QueryChargedTo's, without a model).
  int n_relations = 0;
  Oid* relations = TrainRelations(q.relid, InvalidOid, &n_relations);
  PrivacyUnit u = UnitOf(relations, n_relations);
  const char* unit_column = nullptr;
  if (u.column != nullptr) {
    u = TrainUnit(q.relid, relations, n_relations);
    CheckUnitType(q.relid, u);
    unit_column = u.column;
  } else {
    u.column = kQueryUnitColumn;
    u.max_rows = 1;
    u.relation = q.relid;
    u.row = true;
  }
  u.read_column = kQueryUnitColumn;
  const char* canonical = CanonicalQueryText(q, features, label, unit_column);
  char* schema = ExtensionSchema("dperm", context);
  if (schema == nullptr) elog(ERROR, "dperm is not installed in this database");

  const double bound = regression ? o.residual_bound : o.loss_bound;
  const int metrics = regression ? 1 : 2;
  MetricRead read = {
      in.reader,
      MetricSql(loss, quote_identifier(features), label_sql,
                BoundedQuerySource(canonical, u, features, label, o), quote_identifier(schema)),
      v.model_type,
      v.model,
      v.d,
      bound,
      metrics};
  const double bounds[3] = {regression ? bound * bound : 1.0, regression ? 1.0 : bound, 1.0};
  SumsRequest request = {"evaluate",
                         "discrete Laplace on clipped sums and their count",
                         v.loss_name,
                         o.epsilon,
                         o.has_seed,
                         static_cast<uint64>(o.seed),
                         0,
                         v.d,
                         caller,
                         relations,
                         n_relations,
                         metrics + 1,
                         bounds,
                         std::ldexp(1.0, -40) + std::ldexp(1.0, -10),
                         u,
                         o.epsilon / static_cast<double>(u.max_rows),
                         /*charged=*/false};
  const SumsRelease released = ReleaseSums(request, ReadMetricSums, &read);
  SPI_finish();
  // Post-processing: the means over the noisy count, at least 1.
  const double n = std::max(released.values[metrics], 0.0);
  const double dn = std::max(released.values[metrics], 1.0);
  const double* noisy = released.values;
  const double m1 = regression ? std::sqrt(std::max(noisy[0] / dn, 0.0))
                               : std::min(std::max(noisy[0] / dn, 0.0), 1.0);
  const double m2 = regression ? 0 : std::max(noisy[1] / dn, 0.0);
  char* evaluation;
  char* record;
  QueryEvaluationJson(name, owner, v.version, query_text, u, o, n, m1, m2, bound, released,
                      regression, caller, context, &evaluation, &record);
  SubmitModelRecord(kRecordEvaluation, record);
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
