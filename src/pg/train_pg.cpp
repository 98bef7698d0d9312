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
#include "dperm/release/unit_level.hpp"

#include "citus.hpp"
#include "feature_spec_pg.hpp"
#include "model_type.hpp"
#include "options_pg.hpp"
#include "privacy_unit.hpp"
#include "progress.hpp"
#include "protect.hpp"
#include "relations.hpp"
#include "release.hpp"
#include "release_checks.hpp"
#include "release_guard.hpp"
#include "release_sums.hpp"
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
           "pass_logreg",
           label_type == BOOLOID ? LabelRule::kBoolean : LabelRule::kLogisticFloat};
      break;
    case dperm::LossKind::kHuber:
      ok = label_type == FLOAT8OID;
      types = "float8";
      t = {"dp_huber", "pg_catalog.float8", "pass_huber", LabelRule::kHuberTarget};
      break;
    case dperm::LossKind::kSoftmax:  // a class index; smallint widens to integer
      ok = label_type == INT4OID || label_type == INT2OID;
      types = "integer or smallint";
      t = {"dp_softmax", "pg_catalog.int4", "pass_softmax", LabelRule::kClass};
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

namespace {

// How dperm.train reads the rows.
enum class TrainMode { kAuto, kInMemory, kStreaming };

// The share of a unit-level release's epsilon that releases its number of
// units (a public tuning constant: at epsilon = 1 the count is within about
// 10 ln(1/beta) units with probability 1 - beta).
constexpr double kUnitCountShare = 0.1;

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


// dperm.train's input as its arguments give it, resolved: the relation,
// the columns it reads and the features and label as SQL of them, the loss,
// the mode; then who reads it (CheckReader).
struct TrainInput {
  Oid relid;
  char* name;              // the relation, for messages
  char* qualified;         // the relation, schema-qualified and quoted
  Oid owner;
  Oid caller;
  LossKind loss;
  const char* loss_name;
  TrainMode mode;
  Jsonb* options;          // as given
  bool has_spec;           // features: a feature spec (jsonb) of raw columns
  SpecFeatures spec;
  bool spec_label;         // the spec declares the label's domain
  const char* features;    // the features column ("features" through a spec)
  const char* label;       // the label column
  const char* features_sql;  // the features and the label as SQL of the columns
  const char* label_sql;
  const char** read_columns;
  int n_read;
  // Who reads (CheckReader): the owner of a protected relation, else the caller.
  bool is_protected;
  Oid reader;
  Oid label_type;
  TrainTarget target;
};

// Step 1: the arguments, the relation locked, the columns read and the
// features and label as SQL expressions of them.
TrainInput ResolveInput(FunctionCallInfo fcinfo) {
  TrainInput in = {};
  in.relid = PG_GETARG_OID(0);
  // features: a float8[] column's name, or a feature spec (jsonb) of raw
  // columns with public domains (feature_spec_pg.hpp).
  in.has_spec = get_fn_expr_argtype(fcinfo->flinfo, 1) == JSONBOID;
  in.features = in.has_spec ? pstrdup("features") : text_to_cstring(PG_GETARG_TEXT_PP(1));
  in.label = text_to_cstring(PG_GETARG_TEXT_PP(2));
  in.loss_name = text_to_cstring(PG_GETARG_TEXT_PP(3));
  in.options = PG_GETARG_JSONB_P(4);
  in.mode = PG_NARGS() > 5 ? ParseTrainMode(text_to_cstring(PG_GETARG_TEXT_PP(5)))
                           : TrainMode::kAuto;
  in.caller = GetUserId();
  // A view is read as the caller like any relation not protected (a view is
  // never protected); its body runs with its owner's rights, as in the
  // caller's own SELECT, and the release is charged to every relation it
  // reads (TrainRelations).
  in.name = LockReadableRelation(in.relid, &in.owner, true);
  in.loss = ParseLossName(in.loss_name);
  if (in.has_spec) in.spec = SpecFeaturesFor(in.relid, PG_GETARG_JSONB_P(1));
  in.read_columns = static_cast<const char**>(palloc(sizeof(char*) * (in.spec.n_columns + 2)));
  if (in.has_spec)
    for (int c = 0; c < in.spec.n_columns; c++) in.read_columns[in.n_read++] = in.spec.columns[c];
  else
    in.read_columns[in.n_read++] = in.features;
  in.read_columns[in.n_read++] = in.label;
  in.features_sql = in.has_spec ? in.spec.sql : quote_identifier(in.features);
  // The label: the column as it is, or read through the spec's label domain.
  in.spec_label = in.has_spec && in.spec.spec->has_label;
  in.label_sql = in.spec_label ? in.spec.label_sql : quote_identifier(in.label);
  in.qualified = psprintf("%s.%s", quote_identifier(get_namespace_name(get_rel_namespace(in.relid))),
                          quote_identifier(in.name));
  return in;
}

// Step 2: who reads. A protected relation is read as its owner by the
// analysts the owner listed (refused while row-level security is enabled
// in its family); any other with the caller's own rights. Then the columns'
// types and dperm's aggregate for them. Needs SPI.
void CheckReader(TrainInput* in) {
  bool allowed = false;
  in->is_protected = OidIsValid(ProtectionOf(in->relid, in->caller, &allowed));
  if (in->is_protected) {
    // A protected table that became a view (a "_RETURN" rule) is no longer
    // protected data: never read it as its owner.
    if (get_rel_relkind(in->relid) == RELKIND_VIEW)
      ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                      errmsg("%s is a view, but dperm.protected lists it", in->name),
                      errhint("A view is never protected: protect the tables it reads instead.")));
    if (!allowed)
      ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                      errmsg("role %s may not train on %s", GetUserNameFromId(in->caller, false),
                             in->name),
                      errhint("The owner lists the analysts of a protected relation with dperm.protect.")));
    RefuseRowSecurity(in->relid, in->name, false);
    in->reader = in->owner;
  } else {
    // Not protected: read with the caller's own rights, as their own
    // SELECT dp_logreg(...) FROM it would.
    for (int i = 0; i < in->n_read; i++) ColumnType(in->relid, in->read_columns[i]);
    if (!MayReadColumns(in->relid, in->caller, in->read_columns, in->n_read))
      ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                      errmsg("permission denied for relation %s", in->name),
                      errhint("dperm.train reads a relation with the caller's rights unless its "
                              "owner protected it with dperm.protect and listed the caller.")));
    in->reader = in->caller;
  }
  Oid feature_type = in->has_spec ? FLOAT8ARRAYOID : ColumnType(in->relid, in->features);
  in->label_type = ColumnType(in->relid, in->label);
  if (in->spec_label) in->label_type = CheckSpecLabel(*in->spec.spec, in->label, in->loss);
  if (feature_type != FLOAT8ARRAYOID)
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("column \"%s\" must be float8[], not %s", in->features,
                           format_type_be(feature_type))));
  in->target = TargetFor(in->loss, in->label_type, in->label, in->loss_name);
}

// Step 3: the request (release_request.hpp), from public inputs only:
// every refusal here costs nothing. The options, parsed once (a spec
// declares d, the names and the bound), and the `dataset` they name.
ReleaseRequest RequestFor(const TrainInput& in, Oid* dataset) {
  ReleaseRequest r = {};
  r.loss = in.loss;
  r.role = in.caller;
  r.reports = true;
  r.options = in.has_spec ? DatumGetJsonbP(WithSpecOptions(in.options, *in.spec.spec, in.loss))
                          : in.options;
  r.parsed = ParseOptionsJsonb(r.options);
  RunCore([&] { dperm::CheckOptionsForLoss(r.parsed.options, in.loss); });
  CheckSeedAllowed(r.parsed.options);
  *dataset = r.parsed.dataset != nullptr ? CheckDataset(r.parsed.dataset, in.caller) : InvalidOid;
  return r;
}

// The relations the request is charged to (and `dataset`), and whether the
// release must be private with respect to them (a budget or protection:
// then d is declared); the privacy unit, and a unit-level model's options.
void ChargedTo(const TrainInput& in, Oid dataset, ReleaseRequest* request) {
  ReleaseRequest& r = *request;
  r.relations = TrainRelations(in.relid, dataset, &r.n_relations);
  r.strict = CheckReleaseReads(in.relid, in.is_protected, r.relations, r.n_relations, "dperm.train");
  // A privacy unit (privacy_unit.hpp): the number of units is released
  // first, with a tenth of epsilon (kUnitCountShare); the model is planned
  // for that many units of exactly k row slots each, n = units * k, with the
  // rest of epsilon, and the options carry k (the plan is per unit).
  r.unit = TrainUnit(in.relid, r.relations, r.n_relations);
  if (r.unit.column != nullptr) CheckUnitType(in.relid, r.unit);
  CheckUnitOption(r.parsed.options, r.unit.max_rows, "dperm.train");
  if (r.unit.column != nullptr) {
    r.unit_count_epsilon = kUnitCountShare * r.parsed.options.epsilon;
    r.options = UnitModelOptions(&r.parsed, r.options,
                                 r.parsed.options.epsilon - r.unit_count_epsilon, r.unit.max_rows);
    // Refusals of the options alone (epsilon / k below the floor) come
    // before the count is charged.
    RunCore([&] { dperm::RowLevelOptions(r.parsed.options); });
    r.charged = true;  // with the count (ReleaseUnitCount)
  }
  r.d = dperm::DeclaredDimension(r.parsed.options);
  if (r.strict && r.d < 0) RaiseUndeclaredDimension("dperm.train");
}

// Step 4: n and d, counted as the reader in the snapshot the read uses too
// (every row is kept, NULLs imputed, so n does not depend on the columns or
// options chosen); a unit-level release first releases its number of
// units, charged whole (ReleaseUnitCount). Without a budget or protection
// and with d not declared, d is the length of the first non-NULL features
// value (the model shows both anyway). Returns the FROM item the rows are
// read from, whose features and label columns *features_ref and
// *label_ref name.
const char* CountRows(const TrainInput& in, ReleaseRequest* r, const char** features_ref,
                      const char** label_ref) {
  // A view of a budgeted or protected relation: RunReleaseCount checks the
  // count's plan reads every row of them once.
  const bool strict_view = r->strict && get_rel_relkind(in.relid) == RELKIND_VIEW;
  int64 units = 0;
  // The whole release (count and model) is charged before the count reads
  // a row; nothing is read or decided from the exact count (a unit added or
  // removed changes it).
  if (r->unit.column != nullptr)
    units = ReleaseUnitCount(*r, in.reader, UnitCountFrom(in.qualified, r->unit));
  const char* q = in.qualified;
  RunReleaseCount(in.reader, in.relid, r->strict,
                  // Two scalar subqueries, not a subquery beside count(*): Citus
                  // plans each of them on a distributed relation (it cannot push
                  // a target-list subquery down beside an aggregate).
                  strict_view ? psprintf("SELECT pg_catalog.count(*), %d FROM %s", r->d, q)
                  : r->unit.column != nullptr
                      ? psprintf("SELECT " INT64_FORMAT "::pg_catalog.int8, %d", units, r->d)
                  : r->d >= 0
                      ? psprintf("SELECT (SELECT pg_catalog.count(*) FROM %s), %d", q, r->d)
                      : psprintf("SELECT (SELECT pg_catalog.count(*) FROM %s),"
                                 " (SELECT pg_catalog.cardinality(%s) FROM %s WHERE %s IS NOT NULL LIMIT 1)",
                                 q, quote_identifier(in.features), q, quote_identifier(in.features)));
  bool isnull;
  r->n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  Datum d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
  r->d = isnull ? 0 : DatumGetInt32(d);
  *features_ref = in.features_sql;
  *label_ref = in.label_sql;
  if (r->unit.column == nullptr) return in.qualified;
  const Options& o = r->parsed.options;
  UnitRead read = {in.qualified, in.features_sql, in.label_sql, in.label, units, r->d,
                   UnitDummyLabel(in.loss, in.label_type, o.classes), o.has_seed,
                   static_cast<uint64>(o.seed)};
  *features_ref = "dperm_features";
  *label_ref = quote_identifier(in.label);
  // Units times k slots; the plan refuses what does not fit anyway.
  if (r->n > PG_INT64_MAX / r->unit.max_rows)
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("too many units for max_rows_per_unit = %lld",
                           static_cast<long long>(r->unit.max_rows))));
  r->n *= r->unit.max_rows;
  return UnitBoundedSource(read, r->unit, "dperm_features");
}

// Step 5: in memory or streaming, from n and d only (public): the rows'
// buffer against dperm.max_buffer, as the aggregate itself would count it.
// A Citus table streams: the in-memory aggregates do not run on one
// (RefuseCitusRelations), the per-pass aggregates split into O(d) partial
// sums per shard. Whether a relation is distributed is catalog data.
bool ChooseStreaming(const TrainInput& in, const ReleaseRequest& r, bool* distributed) {
  CheckCoefficientCount(r.loss, r.d, r.parsed.options);
  bool fits = InMemoryFits(r.n, r.d);
  *distributed = IsCitusTable(in.relid);
  if (*distributed && in.mode == TrainMode::kInMemory)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("%s is a Citus distributed table; dperm.train reads it only in "
                           "streaming mode", in.name),
                    errhint("Use mode => 'streaming' or 'auto'.")));
  if (*distributed && !PassKeyConfigured())
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("dperm.pass_key is not set: the workers could not verify the passes "
                           "over the distributed table %s", in.name),
                    errhint("Set dperm.pass_key to the same secret (at least 32 characters) in "
                            "postgresql.conf on the coordinator and every worker, and reload. "
                            "Nothing was charged.")));
  bool streaming = in.mode == TrainMode::kStreaming ||
                   (in.mode == TrainMode::kAuto && (!fits || *distributed));
  if (!streaming && !fits) RaiseBufferRefusal();
  ProgressSetMode(streaming ? ProgressMode::kStreaming : ProgressMode::kInMemory);
  return streaming;
}

// Step 6: the release (release.cpp: plan, charge, then the read or the
// passes, key, train, model). The rows as (features float8[], label) of
// `source`, read as the reader: in memory into the row buffer the
// aggregates fill, after the charge; streaming by passes of dperm's
// per-pass aggregate, by schema, and for its copy of the rows. n > 0.
Datum ReleaseRows(const TrainInput& in, const ReleaseRequest& r, const char* source,
                  const char* features_ref, const char* label_ref, bool streaming, bool distributed) {
  const TrainTarget& t = in.target;
  RowQuery rows = {in.reader,
                   psprintf("SELECT %s::pg_catalog.float8[], %s::%s FROM %s", features_ref, label_ref,
                            t.label_cast, source),
                   t.aggregate};
  if (streaming) {
    // The per-pass aggregates live in dperm's own schema "dperm".
    PassSource passes = {in.reader,
                         psprintf("SELECT dperm.%s(%s::pg_catalog.float8[], %s::%s,"
                                  " $1::pg_catalog.float8[], $2::pg_catalog.float8[]) FROM %s",
                                  t.pass_aggregate, features_ref, label_ref, t.label_cast, source),
                         distributed, rows, t.rule};
    return Release(r, {nullptr, nullptr, &passes});
  }
  const Options& o = r.parsed.options;
  RowBuffer buffer;
  InitRowBuffer(&buffer, CurrentMemoryContext, r.d, t.rule, o, o.classes);
  return Release(r, {&buffer, &rows, nullptr});
}

}  // namespace
}  // namespace dperm::pg

using namespace dperm::pg;

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
// gradient (output_gd, dp_gd, dp_accmd), in constant memory; 'auto' (the
// 5-argument form) streams exactly when the rows would not fit.
DPERM_FUNCTION(dperm_train) {
  TrainInput in = ResolveInput(fcinfo);
  SPI_connect();
  CheckReader(&in);
  Oid dataset;
  ReleaseRequest request = RequestFor(in, &dataset);
  // dperm.progress: this release's row, ended below or by the transaction
  // callbacks should anything raise (progress.cpp).
  const uint64 progress = ProgressBegin(in.relid, in.loss);
  ProgressSetPhase(ProgressPhase::kCountingRows);
  ChargedTo(in, dataset, &request);
  const char* features_ref;
  const char* label_ref;
  const char* source = CountRows(in, &request, &features_ref, &label_ref);
  bool distributed;
  const bool streaming = ChooseStreaming(in, request, &distributed);
  // An empty relation releases nothing and charges nothing (n = 0 is public).
  Datum model = (Datum)0;
  if (request.n > 0)
    model = SPI_datumTransfer(
        ReleaseRows(in, request, source, features_ref, label_ref, streaming, distributed), false, -1);
  SPI_finish();
  // A Huber label's bounds: the model back in the label's units.
  if (model != (Datum)0 && in.spec_label && in.loss == dperm::LossKind::kHuber)
    model = RescaledTargetModel(model, in.spec.spec->label.lo, in.spec.spec->label.hi);
  ProgressEnd(progress);
  if (model == (Datum)0) PG_RETURN_NULL();
  PG_RETURN_DATUM(model);
}
