// dperm.train's input (train_input.hpp): the arguments, who reads the
// relation (docs/design.md section 6), and the column resolution shared
// with the named models and dperm.evaluate.
#include "dperm/model/feature_spec.hpp"
#include "dperm/options/options.hpp"

#include "types/options_pg.hpp"
#include "guard/protect.hpp"
#include "guard/relation_access.hpp"
#include "release/train_input.hpp"

extern "C" {
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
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
    ereport(ERROR,
            (errcode(ERRCODE_UNDEFINED_COLUMN),
             errmsg("column \"%s\" of relation %s does not exist", name, get_rel_name(relid)),
             errhint("dperm.train takes column names, not expressions.")));
  return get_atttype(relid, attnum);
}

// The label cast of each loss, by its label's kind (options.hpp,
// LabelKind): to the exact argument type of the loss's aggregate, so that
// no other function of that name can be a better match, and only casts
// that cannot fail on a value (an error would depend on the data). The
// per-pass aggregate is the label kind's (pass_aggregate.cpp), whatever
// the loss.
TrainTarget TargetFor(dperm::LossKind loss, Oid label_type, const char* label,
                      const char* loss_name) {
  bool ok = false;
  const char* types = "";
  const char* domain = "";
  TrainTarget t;
  const char* aggregate = dperm::LossAggregateName(loss);
  switch (dperm::LossLabel(loss)) {
    case dperm::LabelKind::kBinary:
      ok = label_type == FLOAT8OID || label_type == BOOLOID;
      types = "boolean or float8";
      domain = "\"values\": [negative, positive]";
      t = {aggregate, label_type == BOOLOID ? "pg_catalog.bool" : "pg_catalog.float8",
           "pass_logreg", label_type == BOOLOID ? LabelRule::kBoolean : LabelRule::kBinaryFloat};
      break;
    case dperm::LabelKind::kTarget:
      ok = label_type == FLOAT8OID;
      types = "float8";
      domain = "\"bounds\": [lo, hi]";
      t = {aggregate, "pg_catalog.float8", "pass_huber", LabelRule::kTarget};
      break;
    case dperm::LabelKind::kClass:  // smallint widens to integer
      ok = label_type == INT4OID || label_type == INT2OID;
      types = "integer or smallint";
      domain = "\"values\": [the classes]";
      t = {aggregate, "pg_catalog.int4", "pass_softmax", LabelRule::kClass};
      break;
  }
  if (!ok)
    ereport(ERROR,
            (errcode(ERRCODE_DATATYPE_MISMATCH),
             errmsg("column \"%s\" has type %s; %s needs %s", label, format_type_be(label_type),
                    loss_name, types),
             errhint("Or declare the label's domain in a feature spec: {\"%s\": {%s, \"label\": "
                     "true}}.",
                     label, domain)));
  return t;
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

namespace {

// Whether `role` may read the columns of `relid` a release reads (SELECT on
// the table, or on each of them).
bool MayReadColumns(Oid relid, Oid role, const char* const* columns, int n_columns) {
  if (pg_class_aclcheck(relid, role, ACL_SELECT) == ACLCHECK_OK) return true;
  for (int i = 0; i < n_columns; i++)
    if (pg_attribute_aclcheck(relid, get_attnum(relid, columns[i]), role, ACL_SELECT) !=
        ACLCHECK_OK)
      return false;
  return true;
}

}  // namespace

// dperm.train's arguments resolved (train_input.hpp).
TrainInput ResolveInput(FunctionCallInfo fcinfo) {
  // features: a float8[] column's name, or a feature spec (jsonb) of raw
  // columns with public domains (feature_spec_pg.hpp).
  const bool has_spec = get_fn_expr_argtype(fcinfo->flinfo, 1) == JSONBOID;
  return ResolveTrainInput(
      PG_GETARG_OID(0), has_spec ? nullptr : text_to_cstring(PG_GETARG_TEXT_PP(1)),
      has_spec ? PG_GETARG_JSONB_P(1) : nullptr, text_to_cstring(PG_GETARG_TEXT_PP(2)),
      text_to_cstring(PG_GETARG_TEXT_PP(3)), PG_GETARG_JSONB_P(4),
      PG_NARGS() > 5 ? ParseTrainMode(text_to_cstring(PG_GETARG_TEXT_PP(5))) : TrainMode::kAuto);
}

TrainInput ResolveTrainInput(Oid relid, const char* features, Jsonb* feature_spec,
                             const char* label, const char* loss_name, Jsonb* options,
                             TrainMode mode) {
  TrainInput in = {};
  in.relid = relid;
  in.has_spec = feature_spec != nullptr;
  in.features = in.has_spec ? pstrdup("features") : pstrdup(features);
  in.label = pstrdup(label);
  in.loss_name = pstrdup(loss_name);
  in.options = options;
  in.mode = mode;
  in.caller = GetUserId();
  // A view is read as the caller like any relation not protected (a view is
  // never protected); its body runs with its owner's rights, as in the
  // caller's own SELECT, and the release is charged to every relation it
  // reads (TrainRelations).
  in.name = LockReadableRelation(in.relid, &in.owner, true);
  in.loss = ParseLossName(in.loss_name);
  if (in.has_spec) in.spec = SpecFeaturesFor(in.relid, feature_spec);
  in.read_columns = static_cast<const char**>(palloc(sizeof(char*) * (in.spec.n_columns + 2)));
  if (in.has_spec)
    for (int c = 0; c < in.spec.n_columns; c++) in.read_columns[in.n_read++] = in.spec.columns[c];
  else in.read_columns[in.n_read++] = in.features;
  in.read_columns[in.n_read++] = in.label;
  in.features_sql = in.has_spec ? in.spec.sql : quote_identifier(in.features);
  // The label: the column as it is, or read through the spec's label domain.
  in.spec_label = in.has_spec && in.spec.spec->has_label;
  in.label_sql = in.spec_label ? in.spec.label_sql : quote_identifier(in.label);
  in.qualified =
      psprintf("%s.%s", quote_identifier(get_namespace_name(get_rel_namespace(in.relid))),
               quote_identifier(in.name));
  return in;
}

// Who reads (train_input.hpp).
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
      ereport(
          ERROR,
          (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
           errmsg("role %s may not train on %s", GetUserNameFromId(in->caller, false), in->name),
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
  if (in->numeric_arrays && feature_type != FLOAT8ARRAYOID && feature_type != FLOAT4ARRAYOID &&
      feature_type != NUMERICARRAYOID && feature_type != INT2ARRAYOID &&
      feature_type != INT4ARRAYOID && feature_type != INT8ARRAYOID)
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("column \"%s\" must be a numeric array (float8[], real[], numeric[], "
                           "integer[]), not %s",
                           in->features, format_type_be(feature_type))));
  if (!in->numeric_arrays && feature_type != FLOAT8ARRAYOID)
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("column \"%s\" must be float8[], not %s", in->features,
                           format_type_be(feature_type))));
  in->target = TargetFor(in->loss, in->label_type, in->label, in->loss_name);
}

}  // namespace dperm::pg
