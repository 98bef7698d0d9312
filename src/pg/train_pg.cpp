// dperm.train (docs/design.md section 6): a private release from a
// relation, protected (read as its owner) or not (read with the caller's
// rights), in memory or streaming; and the column resolution it shares with
// the named models.
//
// dperm.train is a C function rather than a SECURITY DEFINER one so that it
// knows its caller: it checks the caller, records them as the releasing role
// in the ledger, and switches identity only around the queries it builds
// itself: as the relation's owner under SECURITY_RESTRICTED_OPERATION to
// read it, as the bootstrap superuser for dperm's own catalog; identifiers
// quoted, types, functions and operators qualified, search_path =
// pg_catalog, pg_temp. A relation with row-level security enabled in its
// family is not read through its protection (RefuseRowSecurity,
// protect.cpp).
#include "dperm/model/feature_spec.hpp"
#include "dperm/options/options.hpp"
#include "dperm/release/streaming.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/release/select_l2.hpp"
#include "dperm/release/plan_release.hpp"
#include "dperm/release/unit_level.hpp"

#include "aggregate.hpp"
#include "arrays.hpp"
#include "charge.hpp"
#include "citus.hpp"
#include "feature_spec_pg.hpp"
#include "model_type.hpp"
#include "internal_sql.hpp"
#include "settings.hpp"
#include "options_pg.hpp"
#include "protect.hpp"
#include "relation_access.hpp"
#include "relations.hpp"
#include "release.hpp"
#include "release_checks.hpp"
#include "release_guard.hpp"
#include "streaming.hpp"
#include "privacy_unit.hpp"
#include "progress.hpp"
#include "train_pg.hpp"

extern "C" {
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
}

namespace dperm::pg {

// The type of a column of `relid` named exactly `name` (not dropped, not a
// system column), or an error naming both.
Oid ColumnType(Oid relid, const char* name) {
  AttrNumber attnum = get_attnum(relid, name);
  if (attnum <= 0)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_COLUMN),
                    errmsg("column \"%s\" of relation %s does not exist", name, get_rel_name(relid)),
                    errhint("dperm.train takes column names, not expressions.")));
  return get_atttype(relid, attnum);
}

// The label cast of each loss: to the exact argument type of dperm's
// aggregate, so that no other function of that name can be a better match,
// and only casts that cannot fail on a value (an error would depend on the
// data).
TrainTarget TargetFor(dperm::LossKind loss, Oid label_type, const char* label,
                      const char* loss_name) {
  bool ok;
  const char* types;
  TrainTarget t;
  switch (loss) {
    case dperm::LossKind::kLogistic:
      ok = label_type == FLOAT8OID || label_type == BOOLOID;
      types = "boolean or float8";
      t = {"dp_logreg", label_type == BOOLOID ? "pg_catalog.bool" : "pg_catalog.float8",
           "pass_logreg"};
      break;
    case dperm::LossKind::kHuber:
      ok = label_type == FLOAT8OID;
      types = "float8";
      t = {"dp_huber", "pg_catalog.float8", "pass_huber"};
      break;
    case dperm::LossKind::kSoftmax:  // a class index; smallint widens to integer
      ok = label_type == INT4OID || label_type == INT2OID;
      types = "integer or smallint";
      t = {"dp_softmax", "pg_catalog.int4", "pass_softmax"};
      break;
    default:  // a loss of losses.def without a label rule (and pass aggregate) here
      ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                      errmsg("dperm.train does not train loss %s", loss_name),
                      errhint("Use its aggregate %s directly. Nothing was charged.",
                              dperm::LossAggregateName(loss))));
  }
  if (!ok)
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("column \"%s\" has type %s; %s needs %s", label,
                           format_type_be(label_type), loss_name, types),
                    errhint("Or declare the label's domain in a feature spec: {\"%s\": {%s, \"label\": "
                            "true}}.", label,
                            loss == dperm::LossKind::kHuber     ? "\"bounds\": [lo, hi]"
                            : loss == dperm::LossKind::kSoftmax ? "\"values\": [the classes]"
                                                                : "\"values\": [negative, positive]")));
  return t;
}

}  // namespace dperm::pg

using namespace dperm::pg;

// How dperm.train reads the rows.
enum class TrainMode { kAuto, kInMemory, kStreaming };

namespace dperm::pg {
namespace {

// The share of a unit-level release's epsilon that releases its number of
// units (a public tuning constant: at epsilon = 1 the count is within about
// 10 ln(1/beta) units with probability 1 - beta).
constexpr double kUnitCountShare = 0.1;

// The label of dummy slot j (privacy_unit.hpp), of the label column's type:
// public and balanced: logistic alternates the two classes, Huber is 0,
// softmax cycles through the classes.
const char* DummyLabel(dperm::LossKind loss, Oid label_type, int classes) {
  switch (loss) {
    case dperm::LossKind::kLogistic:
      return label_type == BOOLOID ? "(dummy.j OPERATOR(pg_catalog.%) 2 OPERATOR(pg_catalog.=) 0)"
                                   : "(CASE WHEN dummy.j OPERATOR(pg_catalog.%) 2 OPERATOR(pg_catalog.=) 0"
                                     " THEN 1 ELSE -1 END)::pg_catalog.float8";
    case dperm::LossKind::kSoftmax:
      return psprintf("(dummy.j OPERATOR(pg_catalog.%%) %d)::%s", classes > 0 ? classes : 1,
                      label_type == INT2OID ? "pg_catalog.int2" : "pg_catalog.int4");
    default:
      return "0::pg_catalog.float8";
  }
}

TrainMode ParseTrainMode(const char* mode) {
  if (strcmp(mode, "auto") == 0) return TrainMode::kAuto;
  if (strcmp(mode, "in_memory") == 0) return TrainMode::kInMemory;
  if (strcmp(mode, "streaming") == 0) return TrainMode::kStreaming;
  ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                  errmsg("unknown dperm.train mode \"%s\"", mode),
                  errhint("Valid modes: auto, in_memory, streaming.")));
  pg_unreachable();
}

// Whether `role` may read the columns of `relid` a release reads (SELECT on
// the table, or on each of them).
bool MayReadColumns(Oid relid, Oid role, const char* const* columns, int n_columns) {
  if (pg_class_aclcheck(relid, role, ACL_SELECT) == ACLCHECK_OK) return true;
  for (int i = 0; i < n_columns; i++)
    if (pg_attribute_aclcheck(relid, get_attnum(relid, columns[i]), role, ACL_SELECT) != ACLCHECK_OK)
      return false;
  return true;
}

}  // namespace
}  // namespace dperm::pg

// dperm.train(relation regclass, features text, label text, loss text,
// options jsonb [, mode text]) -> dp_model: a private release from a
// relation, charged to it (and its partitions and ancestors) and recorded
// under the caller's name. A protected relation is read as its owner, by
// the analysts the owner listed (refused, before any charge, while
// row-level security is enabled in its family); any other relation with the
// caller's own rights (SELECT on it or on both columns; row-level security
// as the caller sees it). mode: 'in_memory' runs the training aggregate over
// the rows (refused, uncharged, when n (d + 1) float8 pass dperm.max_buffer);
// 'streaming' charges once and runs one pass of a per-pass aggregate per
// iteration (the algorithms that stream, StreamingAlgorithms(): a gradient,
// or dp_newton's curvature sums), in constant memory; 'auto' (the
// 5-argument form) streams exactly when the rows would not fit.
DPERM_FUNCTION(dperm_train) {
  Oid relid = PG_GETARG_OID(0);
  // features: a float8[] column's name, or a feature spec (jsonb) of raw
  // columns with public domains (feature_spec_pg.hpp).
  const bool has_spec = get_fn_expr_argtype(fcinfo->flinfo, 1) == JSONBOID;
  char* features = has_spec ? pstrdup("features") : text_to_cstring(PG_GETARG_TEXT_PP(1));
  char* label = text_to_cstring(PG_GETARG_TEXT_PP(2));
  char* loss_name = text_to_cstring(PG_GETARG_TEXT_PP(3));
  Datum options = PG_GETARG_DATUM(4);
  TrainMode mode = PG_NARGS() > 5 ? ParseTrainMode(text_to_cstring(PG_GETARG_TEXT_PP(5)))
                                  : TrainMode::kAuto;
  Oid caller = GetUserId();
  Oid owner;
  // A view is read as the caller like any relation not protected (a view is
  // never protected); its body runs with its owner's rights, as in the
  // caller's own SELECT, and the release is charged to every relation it
  // reads (TrainRelations; the aggregate's range table in memory).
  char* name = LockReadableRelation(relid, &owner, true);
  dperm::LossKind loss = ParseLossName(loss_name);
  SpecFeatures spec = {};
  if (has_spec) spec = SpecFeaturesFor(relid, PG_GETARG_JSONB_P(1));
  // The columns read, and the features as an SQL expression of them.
  const char** read_columns = static_cast<const char**>(palloc(sizeof(char*) * (spec.n_columns + 2)));
  int n_read = 0;
  if (has_spec)
    for (int c = 0; c < spec.n_columns; c++) read_columns[n_read++] = spec.columns[c];
  else
    read_columns[n_read++] = features;
  read_columns[n_read++] = label;
  const char* features_sql = has_spec ? spec.sql : quote_identifier(features);
  // The label: the column as it is, or read through the spec's label domain.
  const bool spec_label = has_spec && spec.spec->has_label;
  const char* label_sql = spec_label ? spec.label_sql : quote_identifier(label);
  SPI_connect();
  bool allowed = false;
  Oid reader;
  bool is_protected = OidIsValid(ProtectionOf(relid, caller, &allowed));
  if (is_protected) {
    // A protected table that became a view (a "_RETURN" rule) is no longer
    // protected data: never read it as its owner.
    if (get_rel_relkind(relid) == RELKIND_VIEW)
      ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                      errmsg("%s is a view, but dperm.protected lists it", name),
                      errhint("A view is never protected: protect the tables it reads instead.")));
    if (!allowed)
      ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                      errmsg("role %s may not train on %s", GetUserNameFromId(caller, false), name),
                      errhint("The owner lists the analysts of a protected relation with dperm.protect.")));
    RefuseRowSecurity(relid, name, false);
    reader = owner;
  } else {
    // Not protected: read with the caller's own rights, as their own
    // SELECT dp_logreg(...) FROM it would.
    for (int i = 0; i < n_read; i++) ColumnType(relid, read_columns[i]);
    if (!MayReadColumns(relid, caller, read_columns, n_read))
      ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                      errmsg("permission denied for relation %s", name),
                      errhint("dperm.train reads a relation with the caller's rights unless its "
                              "owner protected it with dperm.protect and listed the caller.")));
    reader = caller;
  }
  Oid feature_type = has_spec ? FLOAT8ARRAYOID : ColumnType(relid, features);
  Oid label_type = ColumnType(relid, label);
  if (spec_label) label_type = CheckSpecLabel(*spec.spec, label, loss);
  if (feature_type != FLOAT8ARRAYOID)
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("column \"%s\" must be float8[], not %s", features, format_type_be(feature_type))));
  TrainTarget target = TargetFor(loss, label_type, label, loss_name);
  // Everything that depends on the options only fails here, before a row
  // is read, and costs nothing. A spec declares d, the names and the bound.
  if (has_spec) options = WithSpecOptions(DatumGetJsonbP(options), *spec.spec, loss);
  ParsedOptions parsed = ParseOptionsJsonb(DatumGetJsonbP(options));
  RunCore([&] { dperm::CheckOptionsForLoss(parsed.options, loss); });
  CheckSeedAllowed(parsed.options);
  ReleaseContext release;
  release.caller = caller;
  if (parsed.dataset != nullptr) release.dataset = CheckDataset(parsed.dataset, caller);

  char* qualified = psprintf("%s.%s", quote_identifier(get_namespace_name(get_rel_namespace(relid))),
                             quote_identifier(name));
  // dperm.progress: this release's row, ended below or by the transaction
  // callbacks should anything raise (progress.cpp).
  uint64 progress = ProgressBegin(relid, loss);
  ProgressSetPhase(ProgressPhase::kCountingRows);
  // The relations charged, and whether the release must be private with
  // respect to them (a budget or protection): then d is declared.
  int n_relations = 0;
  Oid* relations = TrainRelations(relid, release.dataset, &n_relations);
  release.strict = CheckReleaseReads(relid, is_protected, relations, n_relations, "dperm.train");
  // A privacy unit (privacy_unit.hpp): the number of units is released
  // first, with a tenth of epsilon (kUnitCountShare); the model is planned
  // for that many units of exactly k row slots each, n = units * k, with the
  // rest of epsilon, and the options carry k (the plan is per unit).
  PrivacyUnit unit = TrainUnit(relid, relations, n_relations);
  if (unit.column != nullptr) CheckUnitType(relid, unit);
  CheckUnitOption(parsed.options, unit.max_rows, "dperm.train");
  double unit_count_epsilon = 0;
  if (unit.column != nullptr) {
    unit_count_epsilon = kUnitCountShare * parsed.options.epsilon;
    options = WithOption(DatumGetJsonbP(options), "max_rows_per_unit", unit.max_rows);
    options = WithNumberOption(DatumGetJsonbP(options), "epsilon",
                               parsed.options.epsilon - unit_count_epsilon);
    parsed = ParseOptionsJsonb(DatumGetJsonbP(options));
    // Refusals of the options alone (epsilon / k below the floor) come
    // before the count is charged.
    RunCore([&] { dperm::RowLevelOptions(parsed.options); });
    release.unit_column = unit.column;
    release.unit_rows = unit.max_rows;
    release.unit_count_epsilon = unit_count_epsilon;
  }
  release.dimension = dperm::DeclaredDimension(parsed.options);
  if (release.strict && release.dimension < 0) RaiseUndeclaredDimension("dperm.train");
  // n, the relation's row count (every row is kept, NULLs imputed, so n
  // does not depend on the columns or options chosen), counted as the
  // reader in the snapshot the in-memory read uses too. Without a budget or
  // protection and with d not declared, d is the length of the first
  // non-NULL features value (the model shows both anyway).
  // A view of a budgeted or protected relation: the release guard checks
  // the count's plan reads every row of them once (release_guard.cpp).
  const bool strict_view = release.strict && get_rel_relkind(relid) == RELKIND_VIEW;
  int64 units = 0;
  if (unit.column != nullptr) {
    // The whole release (count and model) is charged before the count reads
    // a row; nothing is read or decided from the exact count (a unit added
    // or removed changes it).
    UnitCountRequest count = {reader, UnitCountFrom(qualified, unit), loss_name, unit_count_epsilon,
                              parsed.options.has_seed, static_cast<uint64>(parsed.options.seed),
                              release.dimension, relations, n_relations, unit.column, unit.max_rows,
                              parsed.options.has_algorithm
                                  ? dperm::AlgorithmName(parsed.options.algorithm) : "auto",
                              parsed.options.epsilon, parsed.options.delta};
    units = ReleaseUnitCount(count);
  }
  RunReleaseCount(reader, relid, release.strict,
                  // Two scalar subqueries, not a subquery beside count(*): Citus
                  // plans each of them on a distributed relation (it cannot push
                  // a target-list subquery down beside an aggregate).
                   strict_view ? psprintf("SELECT pg_catalog.count(*), %d FROM %s", release.dimension,
                                         qualified)
                   : unit.column != nullptr
                       ? psprintf("SELECT " INT64_FORMAT "::pg_catalog.int8, %d", units, release.dimension)
                   : release.dimension >= 0
                       ? psprintf("SELECT (SELECT pg_catalog.count(*) FROM %s), %d", qualified,
                                  release.dimension)
                       : psprintf("SELECT (SELECT pg_catalog.count(*) FROM %s),"
                                  " (SELECT pg_catalog.cardinality(%s) FROM %s WHERE %s IS NOT NULL LIMIT 1)",
                                  qualified, quote_identifier(features), qualified,
                                  quote_identifier(features)));
  bool isnull;
  int64 n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  Datum d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
  release.dimension = isnull ? 0 : DatumGetInt32(d);
  // The FROM item, and the features and label as the training query reads
  // them from it.
  const char* source = qualified;
  const char* feature_ref = features_sql;
  const char* label_ref = label_sql;
  if (unit.column != nullptr) {
    UnitRead read = {qualified, features_sql, label_sql, label, units, release.dimension,
                     DummyLabel(loss, label_type, parsed.options.classes),
                     parsed.options.has_seed, static_cast<uint64>(parsed.options.seed)};
    source = UnitBoundedSource(read, unit, "dperm_features");
    feature_ref = "dperm_features";
    label_ref = quote_identifier(label);
    // Units times k slots; the plan refuses what does not fit anyway.
    if (n > PG_INT64_MAX / unit.max_rows)
      ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                      errmsg("too many units for max_rows_per_unit = %lld",
                             static_cast<long long>(unit.max_rows))));
    n *= unit.max_rows;
  }
  CheckCoefficientCount(loss, release.dimension, parsed.options);
  // The mode depends on n and d only (public): the rows' buffer against
  // dperm.max_buffer, as the aggregate itself would count it.
  bool fits = InMemoryFits(n, release.dimension);
  // A Citus table streams: the in-memory aggregates do not run on one
  // (RefuseCitusRelations), the per-pass aggregates split into O(d) partial
  // sums per shard. Whether a relation is distributed is catalog data.
  bool distributed = IsCitusTable(relid);
  if (distributed && mode == TrainMode::kInMemory)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("%s is a Citus distributed table; dperm.train reads it only in "
                           "streaming mode", name),
                    errhint("Use mode => 'streaming' or 'auto'.")));
  if (distributed && !PassKeyConfigured())
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("dperm.pass_key is not set: the workers could not verify the passes "
                           "over the distributed table %s", name),
                    errhint("Set dperm.pass_key to the same secret (at least 32 characters) in "
                            "postgresql.conf on the coordinator and every worker, and reload. "
                            "Nothing was charged.")));
  bool streaming = mode == TrainMode::kStreaming || (mode == TrainMode::kAuto && (!fits || distributed));
  if (!streaming && !fits) RaiseBufferRefusal();
  ProgressSetMode(streaming ? ProgressMode::kStreaming : ProgressMode::kInMemory);
  // Before any row is read or charged (in memory: with the charge below).
  if (n > 0 && streaming) CheckReleasePlan(parsed, loss, n, release.dimension, true);

  // dperm's own aggregate, by schema and exact argument types.
  RunAsCatalogOwner("SELECT e.extnamespace FROM pg_catalog.pg_extension e"
                    " WHERE e.extname OPERATOR(pg_catalog.=) 'dperm'",
                    0, nullptr, nullptr, nullptr, SPI_OK_SELECT, true);
  if (SPI_processed != 1) elog(ERROR, "dperm is not installed in this database");
  bool schema_null;
  Oid schema = DatumGetObjectId(
      SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &schema_null));
  Datum model = (Datum)0;
  isnull = true;
  if (streaming) {
    // The per-pass aggregates live in dperm's own schema "dperm".
    char* pass_sql = psprintf(
        "SELECT dperm.%s(%s::pg_catalog.float8[], %s::%s, $1::pg_catalog.float8[],"
        " $2::pg_catalog.float8[]) FROM %s",
        target.pass_aggregate, feature_ref, label_ref, target.label_cast, source);
    StreamingRequest request = {reader, pass_sql, loss, &parsed, DatumGetJsonbP(options),
                                n, release.dimension, relations, n_relations, distributed,
                                unit.column, unit.max_rows, unit_count_epsilon,
                                /*precharged=*/unit.column != nullptr};
    model = TrainStreamingRelease(request, &isnull);
  } else {
    char* sql = psprintf("SELECT %s.%s(%s::pg_catalog.float8[], %s::%s, $1::pg_catalog.jsonb) FROM %s",
                         quote_identifier(get_namespace_name(schema)), target.aggregate,
                         feature_ref, label_ref, target.label_cast, source);
    Oid types[1] = {JSONBOID};
    Datum args[1] = {options};
    // Charged before the first row is read: whatever the read raises
    // afterwards (a row the reader cannot cast, a cancel) is paid for.
    // A unit-level release was charged whole with its count.
    if (unit.column != nullptr) {
      if (n > 0) CheckReleasePlan(parsed, loss, n, release.dimension, false);
      release.precharged = true;
      release.n = n;
    } else if (n > 0) {
      PrechargeInMemory(parsed, loss, n, release.dimension, relations, n_relations, unit);
      release.precharged = true;
      release.n = n;
    }
    PG_TRY();
    {
      g_release = release;
      // read_only: the snapshot n was counted in.
      RunInternalSql(reader, sql, 1, types, args, nullptr, SPI_OK_SELECT, true);
      g_release = ReleaseContext();
    }
    PG_CATCH();
    {
      g_release = ReleaseContext();
      PG_RE_THROW();
    }
    PG_END_TRY();
    if (SPI_processed == 1)
      model = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
  }
  if (!isnull) model = SPI_datumTransfer(model, false, -1);
  SPI_finish();
  // A Huber label's bounds: the model back in the label's units.
  if (!isnull && spec_label && loss == dperm::LossKind::kHuber)
    model = RescaledTargetModel(model, spec.spec->label.lo, spec.spec->label.hi);
  ProgressEnd(progress);
  if (isnull) PG_RETURN_NULL();
  PG_RETURN_DATUM(model);
}
