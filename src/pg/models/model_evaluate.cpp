// dperm.evaluate (docs/design.md section 7): DP metrics of a named model
// on a relation. The charge and the noise's key and failure path are the
// release pipeline's (release_sums.hpp); the metric is a release of bounded sums
// (the core's evaluate.cpp).
#include "dperm/accounting/budget.hpp"
#include "dperm/model/evaluate.hpp"
#include "dperm/options/options.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/evaluate_metrics.hpp"
#include "base/internal_sql.hpp"
#include "models/model_evaluate.hpp"
#include "models/model_registry.hpp"
#include "models/model_records.hpp"
#include "base/settings.hpp"
#include "types/options_pg.hpp"
#include "guard/protect.hpp"
#include "release/train_input.hpp"
#include "types/feature_spec_pg.hpp"
#include "guard/relation_access.hpp"
#include "guard/relations.hpp"
#include "release/release_guard.hpp"
#include "guard/privacy_unit.hpp"
#include "release/release_sums.hpp"

extern "C" {
#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/dsm.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
}

namespace dperm::pg {

EvaluateOptions ParseEvaluateOptions(Jsonb* options) {
  EvaluateOptions o;
  Oid types[1] = {JSONBOID};
  Datum args[1] = {JsonbPGetDatum(options)};
  SPI_connect();
  RunAsCatalogOwner(
      "SELECT (SELECT pg_catalog.string_agg(k, ', ' ORDER BY k)"
      "          FROM pg_catalog.jsonb_object_keys($1) k"
      "         WHERE k OPERATOR(pg_catalog.<>) ALL"
      "               ('{epsilon,version,loss_bound,residual_bound,seed}'::pg_catalog.text[])),"
      "       (SELECT pg_catalog.string_agg(k, ', ' ORDER BY k)"
      "          FROM pg_catalog.jsonb_each($1) e(k, v)"
      "         WHERE pg_catalog.jsonb_typeof(v) OPERATOR(pg_catalog.<>) 'number'),"
      "       ($1 OPERATOR(pg_catalog.->>) 'epsilon')::pg_catalog.float8,"
      "       ($1 OPERATOR(pg_catalog.->>) 'version')::pg_catalog.numeric,"
      "       ($1 OPERATOR(pg_catalog.->>) 'loss_bound')::pg_catalog.float8,"
      "       ($1 OPERATOR(pg_catalog.->>) 'residual_bound')::pg_catalog.float8,"
      "       ($1 OPERATOR(pg_catalog.->>) 'seed')::pg_catalog.numeric",
      1, types, args, nullptr, SPI_OK_SELECT, true);
  HeapTuple row = SPI_tuptable->vals[0];
  TupleDesc desc = SPI_tuptable->tupdesc;
  char* unknown = SPI_getvalue(row, desc, 1);
  char* not_numbers = SPI_getvalue(row, desc, 2);
  if (unknown != nullptr)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("unknown option of dperm.evaluate: %s", unknown),
                    errhint("Valid options: epsilon, version, loss_bound, residual_bound, seed.")));
  if (not_numbers != nullptr)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("options of dperm.evaluate must be numbers: %s", not_numbers)));
  bool isnull;
  Datum eps = SPI_getbinval(row, desc, 3, &isnull);
  if (isnull)
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("option \"epsilon\" is required")));
  o.epsilon = DatumGetFloat8(eps);
  char* version = SPI_getvalue(row, desc, 4);
  Datum v = SPI_getbinval(row, desc, 5, &isnull);
  if (!isnull) o.loss_bound = DatumGetFloat8(v);
  v = SPI_getbinval(row, desc, 6, &isnull);
  if (!isnull) o.residual_bound = DatumGetFloat8(v);
  o.residual_given = !isnull;
  char* seed = SPI_getvalue(row, desc, 7);
  if (version != nullptr) {
    char* end;
    long parsed = strtol(version, &end, 10);
    if (*end != '\0' || parsed < 1 || parsed > PG_INT32_MAX)
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("option \"version\" must be a version number, not %s", version)));
    o.version = static_cast<int32>(parsed);
  }
  if (seed != nullptr) {
    char* end;
    o.seed = strtoll(seed, &end, 10);
    if (*end != '\0')
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("option \"seed\" must be an integer, not %s", seed)));
    o.has_seed = true;
  }
  SPI_finish();
  if (!std::isfinite(o.epsilon) || o.epsilon < 0.001)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("option \"epsilon\" must be finite and >= 0.001, not %g", o.epsilon)));
  if (!std::isfinite(o.loss_bound) || o.loss_bound <= 0 || o.loss_bound > 1e6 ||
      !std::isfinite(o.residual_bound) || o.residual_bound <= 0 || o.residual_bound > 1e6)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("options \"loss_bound\" and \"residual_bound\" must be in (0, 1e6]")));
  if (o.has_seed && !g_allow_seed)
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("option \"seed\" requires dperm.allow_seed = on")));
  return o;
}

TrainedVersion LoadTrainedVersion(const char* name, int32 wanted, Oid owner, Oid caller,
                                  MemoryContext context) {
  TrainedVersion v;
  SPI_connect();
  Oid vtypes[3] = {TEXTOID, INT4OID, OIDOID};
  Datum vargs[3] = {CStringGetTextDatum(name), Int32GetDatum(wanted), ObjectIdGetDatum(owner)};
  RunInternalSql(
      caller,
      "SELECT m.version, m.loss, m.model,"
      "       ((m.model::pg_catalog.jsonb) OPERATOR(pg_catalog.->>) 'd')::pg_catalog.int4,"
      "       COALESCE(((m.model::pg_catalog.jsonb) OPERATOR(pg_catalog.->>) 'classes')"
      "                ::pg_catalog.int4, 2),"
      "       m.label, m.feature_spec::pg_catalog.text"
      "  FROM dperm.models m WHERE m.name OPERATOR(pg_catalog.=) $1"
      "   AND m.owner OPERATOR(pg_catalog.=) $3"
      "   AND m.status OPERATOR(pg_catalog.=) 'trained'"
      "   AND ($2 OPERATOR(pg_catalog.=) 0 OR m.version OPERATOR(pg_catalog.=) $2)"
      " ORDER BY m.version DESC LIMIT 1",
      3, vtypes, vargs, nullptr, SPI_OK_SELECT, true);
  if (SPI_processed == 0)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg(wanted ? "model \"%s\" has no trained version %d"
                                  : "model \"%s\" has no trained version",
                           name, wanted)));
  HeapTuple row = SPI_tuptable->vals[0];
  TupleDesc desc = SPI_tuptable->tupdesc;
  bool isnull;
  v.version = DatumGetInt32(SPI_getbinval(row, desc, 1, &isnull));
  v.loss_name = CopyValue(context, row, desc, 2);
  v.model_type = SPI_gettypeid(desc, 3);
  v.model = SPI_datumTransfer(SPI_getbinval(row, desc, 3, &isnull), false, -1);
  v.d = DatumGetInt32(SPI_getbinval(row, desc, 4, &isnull));
  v.classes = DatumGetInt32(SPI_getbinval(row, desc, 5, &isnull));
  v.label = CopyValue(context, row, desc, 6);
  v.feature_spec = CopyValue(context, row, desc, 7);
  SPI_finish();
  return v;
}

namespace {

// The role that reads `relid` for the caller: the caller on a relation it
// may SELECT, the owner of a protected relation the caller is an analyst
// of (as dperm.train reads it); 42501 otherwise. Needs SPI.
Oid EvaluationReader(Oid relid, Oid caller, const char* relname, bool* is_protected) {
  Oid reader = caller;
  bool allowed = false;
  Oid protected_rel = ProtectionOf(relid, caller, &allowed);
  *is_protected = OidIsValid(protected_rel);
  if (*is_protected) {
    if (!allowed)
      ereport(
          ERROR,
          (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
           errmsg("role %s may not evaluate on %s", GetUserNameFromId(caller, false), relname),
           errhint("The owner lists the analysts of a protected relation with dperm.protect.")));
    RefuseRowSecurity(relid, relname, false);
    HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
    if (!HeapTupleIsValid(tuple)) elog(ERROR, "relation %u vanished", relid);
    reader = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relowner;
    ReleaseSysCache(tuple);
  } else if (pg_class_aclcheck(relid, caller, ACL_SELECT) != ACLCHECK_OK) {
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("permission denied for table %s", relname),
                    errhint("dperm.evaluate reads relations you can SELECT, or protected relations "
                            "you are an analyst of.")));
  }
  return reader;
}

// The evaluation's JSON (the result) and the record the ledger writer
// appends to the version, both in `context`.
// 95 % intervals of the noise around each metric (below).
struct MetricIntervals {
  double lo1, hi1, lo2, hi2;
};

void EvaluationJson(const char* name, Oid owner, int32 version, const char* qualified, int64 n,
                    const EvaluateOptions& o, double m1, double m2, const MetricIntervals& in,
                    double bound, double scale, double grid, int64 ledger_id, bool regression,
                    Oid caller, MemoryContext context, char** evaluation, char** record) {
  SPI_connect();
  Oid jtypes[17] = {INT4OID,   TEXTOID,   INT8OID,   FLOAT8OID, FLOAT8OID, FLOAT8OID,
                    FLOAT8OID, FLOAT8OID, FLOAT8OID, INT8OID,   BOOLOID,   TEXTOID,
                    BOOLOID,   FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID};
  Datum jargs[17] = {
      Int32GetDatum(version),   CStringGetTextDatum(qualified),
      Int64GetDatum(n),         Float8GetDatum(o.epsilon),
      Float8GetDatum(m1),       Float8GetDatum(m2),
      Float8GetDatum(bound),    Float8GetDatum(scale),
      Float8GetDatum(grid),     Int64GetDatum(ledger_id),
      BoolGetDatum(regression), CStringGetTextDatum(GetUserNameFromId(caller, false)),
      BoolGetDatum(o.has_seed), Float8GetDatum(in.lo1),
      Float8GetDatum(in.hi1),   Float8GetDatum(in.lo2),
      Float8GetDatum(in.hi2)};
  RunAsCatalogOwner(
      "SELECT (pg_catalog.jsonb_build_object('version', $1, 'relation', $2, 'n', $3,"
      "   'epsilon', $4, 'delta', 0, 'ledger_id', $10, 'evaluated_by', $12,"
      "   'evaluated_at', pg_catalog.now(), 'private', NOT $13,"
      "   'mechanism', 'discrete Laplace on clipped sums (replace-one, n public)',"
      "   'noise_scale', $8, 'grid', $9)"
      " OPERATOR(pg_catalog.||) CASE WHEN $11"
      "   THEN pg_catalog.jsonb_build_object('rmse', $5, 'residual_bound', $7,"
      "     'rmse_interval', pg_catalog.jsonb_build_array($14, $15))"
      "   ELSE pg_catalog.jsonb_build_object('accuracy', $5, 'log_loss', $6, 'loss_bound', $7,"
      "     'accuracy_interval', pg_catalog.jsonb_build_array($14, $15),"
      "     'log_loss_interval', pg_catalog.jsonb_build_array($16, $17)) END"
      " OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object('interval',"
      "   '95 % of the noise: the metric on these n rows lies in it with probability >= 0.95')"
      " )::pg_catalog.text",
      17, jtypes, jargs, nullptr, SPI_OK_SELECT, true);
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
}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.evaluate(name, relation, features, label, options) -> jsonb, and
// dperm.evaluate(name, relation, options) for a version trained through a
// feature spec (its stored spec and label read the raw columns): a
// private estimate of the model's accuracy and log-loss (logistic, softmax)
// or RMSE (Huber) on a relation, charged to it like any release and stored
// with the version. Each metric is a sum over the rows of a per-row value
// clipped to a public bound, released with discrete Laplace noise
// (ReleaseBoundedSums, evaluate.hpp, states the sensitivity and the
// mechanism); n is public (replace-one), as in training.
//   accuracy:  per row 1 if the predicted class is the label, else 0: bound 1;
//   log-loss:  per row min(-ln p(label), loss_bound): bound loss_bound;
//   RMSE:      per row min(clamp(y - prediction, -B, B)^2): bound B^2, B =
//              residual_bound; RMSE = sqrt(noisy sum / n).
// Rows are read like training reads them (dperm.train's rules for protected
// relations: as the owner, every row counts, NULL labels imputed); a row
// whose features have another shape than the model's counts as wrong, with
// the worst loss, rather than raising (an error would depend on the data).
DPERM_FUNCTION(dperm_evaluate) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  Oid relid = PG_GETARG_OID(1);
  const bool through_spec = PG_NARGS() == 3;
  char* features = through_spec ? nullptr : text_to_cstring(PG_GETARG_TEXT_PP(2));
  char* label = through_spec ? nullptr : text_to_cstring(PG_GETARG_TEXT_PP(3));
  EvaluateOptions o = ParseEvaluateOptions(PG_GETARG_JSONB_P(through_spec ? 2 : 4));
  Oid caller = GetUserId();
  Oid owner = OwnedModel(name, "evaluate").owner;
  MemoryContext context = CurrentMemoryContext;

  // The version (as the caller: row-level security applies).
  TrainedVersion v = LoadTrainedVersion(name, o.version, owner, caller, context);
  int32 version = v.version;
  char* loss_name = v.loss_name;
  int32 d = v.d;
  dperm::LossKind loss = ParseLossName(loss_name);
  bool regression = dperm::LossLabel(loss) == dperm::LabelKind::kTarget;  // a regression

  // The relation: readable by the caller, or protected with the caller
  // among its analysts (then read as its owner, as dperm.train does).
  LockRelationOid(relid, AccessShareLock);
  char* relname = get_rel_name(relid);
  if (relname == nullptr)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
                    errmsg("relation with OID %u does not exist", relid)));
  char* qualified =
      psprintf("%s.%s", quote_identifier(get_namespace_name(get_rel_namespace(relid))),
               quote_identifier(relname));
  SPI_connect();
  bool is_protected = false;
  Oid reader = EvaluationReader(relid, caller, relname, &is_protected);
  // The features and the label as SQL expressions of the relation's columns.
  const char* features_sql;
  const char* label_sql;
  if (through_spec) {
    if (v.feature_spec == nullptr)
      ereport(
          ERROR,
          (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
           errmsg("version %d of model \"%s\" was not trained through a feature spec", version,
                  name),
           errhint("Name its features and label: dperm.evaluate(name, relation, features, label, "
                   "options).")));
    // The stored spec, checked against this relation's columns (42703, 42804).
    SpecFeatures spec = SpecFeaturesFor(
        relid, DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(v.feature_spec))));
    features_sql = spec.sql;
    ColumnType(relid, v.label);
    if (spec.spec->has_label) {
      label_sql = SpecLabel(loss, spec.spec->label, spec.label_sql);
      if (regression && !o.residual_given)
        o.residual_bound = std::min(spec.spec->label.hi - spec.spec->label.lo, 1e6);
    } else {
      label_sql = ColumnLabel(loss, TargetFor(loss, ColumnType(relid, v.label), v.label, loss_name),
                              v.classes, v.label);
    }
  } else {
    Oid feature_type = ColumnType(relid, features);
    if (feature_type != FLOAT8ARRAYOID)
      ereport(ERROR,
              (errcode(ERRCODE_DATATYPE_MISMATCH), errmsg("column \"%s\" must be float8[], not %s",
                                                          features, format_type_be(feature_type))));
    features_sql = quote_identifier(features);
    label_sql = ColumnLabel(loss, TargetFor(loss, ColumnType(relid, label), label, loss_name),
                            v.classes, label);
  }
  char* schema = ExtensionSchema("dperm", context);
  if (schema == nullptr) elog(ERROR, "dperm is not installed in this database");
  const char* ext = quote_identifier(schema);

  // Charged to what dperm.train would charge for this relation (the same
  // function): it, its partitions and inheritance children (the scan reads
  // them), for a view what it reads, and every ancestor of each.
  int n_relations = 0;
  Oid* relations = TrainRelations(relid, InvalidOid, &n_relations);
  // Its metrics are means over n, which states the number of rows: not
  // private when a unit may be added or removed (privacy_unit.hpp). On a
  // relation whose budget declares a unit, the evaluation is
  // dperm.evaluate_query's on SELECT * FROM it (each unit bounded to k rows,
  // n released noisily with the sums); through a feature spec it is refused.
  if (!through_spec && UnitOf(relations, n_relations).column != nullptr) {
    SPI_finish();
    return EvaluateQueryModel(name, psprintf("SELECT * FROM %s", qualified), features, label, o);
  }
  RefuseUnitRelations(relations, n_relations, "dperm.evaluate");
  // The same check as every reader: a partition or child of a budgeted or
  // protected parent is not read alone (its n would be the subset's).
  const bool strict =
      CheckReleaseReads(relid, is_protected, relations, n_relations, "dperm.evaluate");
  const char* source = qualified;

  // n, public: every row counts (a view of a budgeted or protected
  // relation: the guard checks the count reads each of its rows once).
  bool isnull;
  RunReleaseCount(reader, relid, strict, psprintf("SELECT pg_catalog.count(*) FROM %s", qualified));
  int64 n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  if (n == 0)
    ereport(ERROR, (errcode(ERRCODE_DATA_EXCEPTION),
                    errmsg("relation %s has no rows to evaluate on", relname),
                    errdetail("Nothing was released or charged.")));
  double bound = regression ? o.residual_bound : o.loss_bound;
  MetricRead metric_read = {
      reader, MetricSql(loss, features_sql, label_sql, source, ext), v.model_type, v.model, d,
      bound};
  const int metrics = regression ? 1 : 2;
  const double bounds[2] = {regression ? bound * bound : 1.0, bound};
  // One grid step 2^-40 per sum, and the rounding of an exact sum of n
  // values in [0, 1] units to a double and back to the bound's units.
  const double slack = std::ldexp(1.0, -40) + std::ldexp(static_cast<double>(n), -50);
  SumsRequest request = {"evaluate",
                         "discrete Laplace on clipped sums",
                         loss_name,
                         o.epsilon,
                         o.has_seed,
                         static_cast<uint64>(o.seed),
                         n,
                         d,
                         caller,
                         relations,
                         n_relations,
                         metrics,
                         bounds,
                         slack,
                         PrivacyUnit(),
                         o.epsilon,
                         /*charged=*/false,
                         nullptr};
  SumsRelease released = ReleaseSums(request, ReadMetricSums, &metric_read);
  SPI_finish();
  const double* noisy = released.values;
  const double scale = released.scale, grid = released.grid;
  const int64 ledger_id = released.ledger_id;
  // Post-processing into the metrics' ranges.
  double dn = static_cast<double>(n);
  double m1 = regression ? std::sqrt(Max(noisy[0] / dn, 0.0)) : Min(Max(noisy[0] / dn, 0.0), 1.0);
  double m2 = regression ? 0 : Max(noisy[1] / dn, 0.0);
  // 95 % intervals of the noise (post-processing, public: n, the scale and
  // the grid only). Each normalised sum's noise is discrete Laplace of scale
  // at least b on the grid g (ReleaseBoundedSums), whose tail is
  // P(|X| >= t) <= 2 e^{-(t - g)/b} / (1 + e^{-g/b}) <= e^{-(t - g)/b} (1 + g/b):
  // t = b ln 21 + g keeps it below 0.05 for g/b <= 2^-9 (BoundedSumsNoise's
  // g <= b/2^10). In the metric's units: times the sum's bound, over n.
  const double half = scale * std::log(21.0) + grid;
  double lo1, hi1, lo2 = 0, hi2 = 0;
  if (regression) {
    const double w = bound * bound * half / dn;  // on the mean squared residual
    lo1 = std::sqrt(Max(noisy[0] / dn - w, 0.0));
    hi1 = std::sqrt(Max(noisy[0] / dn + w, 0.0));
  } else {
    lo1 = Min(Max(noisy[0] / dn - half / dn, 0.0), 1.0);
    hi1 = Min(Max(noisy[0] / dn + half / dn, 0.0), 1.0);
    lo2 = Max(noisy[1] / dn - bound * half / dn, 0.0);
    hi2 = Max(noisy[1] / dn + bound * half / dn, 0.0);
  }

  char* evaluation;
  char* record;
  const MetricIntervals intervals = {lo1, hi1, lo2, hi2};
  EvaluationJson(name, owner, version, qualified, n, o, m1, m2, intervals, bound, scale, grid,
                 ledger_id, regression, caller, context, &evaluation, &record);
  // Stored by the ledger writer, so the charged evaluation outlives a rollback.
  SubmitModelRecord(kRecordEvaluation, record);
  PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(evaluation)));
}
