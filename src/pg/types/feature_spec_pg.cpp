// Feature specs in PostgreSQL (feature_spec_pg.hpp).
#include "types/feature_spec_pg.hpp"

#include "dperm/options/options.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <string>

#include "types/options_pg.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/typcache.h"
}

namespace dperm::pg {
namespace {

// A call site's parsed spec (fn_extra), kept while the spec's bytes match.
struct SpecCache {
  Jsonb* bytes;
  const dperm::FeatureSpec* spec;
};

const dperm::FeatureSpec& CachedSpec(FunctionCallInfo fcinfo, Jsonb* spec) {
  SpecCache* c = static_cast<SpecCache*>(fcinfo->flinfo->fn_extra);
  if (c != nullptr && VARSIZE(c->bytes) == VARSIZE(spec) &&
      memcmp(c->bytes, spec, VARSIZE(spec)) == 0)
    return *c->spec;
  MemoryContext cxt = fcinfo->flinfo->fn_mcxt;
  const dperm::FeatureSpec* parsed = ParsedSpec(cxt, JsonbText(spec));
  c = static_cast<SpecCache*>(MemoryContextAlloc(cxt, sizeof(SpecCache)));
  c->bytes = static_cast<Jsonb*>(MemoryContextAlloc(cxt, VARSIZE(spec)));
  memcpy(c->bytes, spec, VARSIZE(spec));
  c->spec = parsed;
  fcinfo->flinfo->fn_extra = c;
  return *c->spec;
}

// A spec whose "bounds": "auto" were not chosen encodes nothing: its
// bounds exist only inside a release (dperm.train's domain step), which
// states them with the model.
void RefuseUnchosen(const dperm::FeatureSpec& spec) {
  for (const dperm::FeatureColumn& c : spec.columns)
    if (c.auto_bounds && c.auto_epsilon == 0)
      ereport(ERROR,
              (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
               errmsg("column \"%s\" of the feature spec has \"bounds\": \"auto\", which only "
                      "dperm.train chooses",
                      c.name.c_str()),
               errhint("Encode with the spec a model states (its \"feature_spec\"), or declare "
                       "the bounds.")));
}

// Whether the caller gave option `key`.
bool KeyGiven(const dperm::Options& o, const char* key) {
  for (const dperm::OptionSpec& s : dperm::OptionTable())
    if (strcmp(s.key, key) == 0) return dperm::OptionGiven(o, s);
  return false;
}

bool IsNumberType(Oid type) {
  return type == INT2OID || type == INT4OID || type == INT8OID || type == FLOAT4OID ||
         type == FLOAT8OID || type == NUMERICOID;
}

bool IsTextType(Oid type) {
  return type == TEXTOID || type == VARCHAROID || type == BPCHAROID || type == NAMEOID;
}

// An integer as the column prints it: -?(0|[1-9][0-9]*) within the type's range.
bool IsIntegerText(const std::string& v, Oid type) {
  const char* p = v.c_str();
  if (*p == '-') p++;
  if (*p == '\0' || (*p == '0' && p[1] != '\0')) return false;
  for (const char* q = p; *q != '\0'; q++)
    if (*q < '0' || *q > '9') return false;
  if (strlen(p) > 19) return false;
  errno = 0;
  const long long x = strtoll(v.c_str(), nullptr, 10);
  if (errno != 0) return false;
  if (type == INT2OID) return x >= PG_INT16_MIN && x <= PG_INT16_MAX;
  if (type == INT4OID) return x >= PG_INT32_MIN && x <= PG_INT32_MAX;
  return true;
}

// The declared "values" of `col` against the column's type, before anything
// is read or charged (nothing here reads a row): a boolean column takes
// [false, true] (JSON booleans, or the strings "false"/"true": its text form,
// which the scan compares with); an integer column integers as it prints
// them; an enum column its labels; JSON booleans only a boolean column, and
// "case": "insensitive" only a text column. A value the column can never
// print as written would match no row: 22023, naming it.
void CheckDeclaredValues(const dperm::FeatureColumn& col, Oid type) {
  const char* name = col.name.c_str();
  const Oid base = getBaseType(type);
  if (col.json_booleans && base != BOOLOID)
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("column \"%s\" has type %s; JSON booleans in its \"values\" need a "
                           "boolean column",
                           name, format_type_be(type)),
                    errhint("Write the values as the column prints them, as strings.")));
  if (col.fold_case && !IsTextType(base))
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("column \"%s\" has type %s; \"case\": \"insensitive\" needs a text "
                           "column",
                           name, format_type_be(type))));
  for (const std::string& v : col.values) {
    const char* value = v.c_str();
    if (base == BOOLOID && v != "true" && v != "false")
      ereport(ERROR,
              (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
               errmsg("column \"%s\" is boolean, but its \"values\" declare \"%s\"", name, value),
               errhint("A boolean column reads as true or false: declare \"values\": [false, "
                       "true] (JSON booleans), or {\"type\": \"boolean\"}.")));
    if ((base == INT2OID || base == INT4OID || base == INT8OID) && !IsIntegerText(v, base))
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("column \"%s\" has type %s, but its \"values\" declare \"%s\"", name,
                             format_type_be(type), value),
                      errhint("Write each value as the column prints it: \"3\", \"-1\".")));
    if (type_is_enum(base) &&
        (v.size() >= NAMEDATALEN ||
         !SearchSysCacheExists2(ENUMTYPOIDNAME, ObjectIdGetDatum(base), CStringGetDatum(value))))
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("column \"%s\" has type %s, which has no label \"%s\"", name,
                             format_type_be(type), value),
                      errhint("Declare the labels as the type spells them (case matters).")));
  }
}

// Column `col` of the spec exists in `relid` (42703) with a type its
// declaration encodes (42804), and declared values the type can print (22023).
void CheckColumnType(Oid relid, const dperm::FeatureColumn& col) {
  const char* name = col.name.c_str();
  AttrNumber attnum = get_attnum(relid, name);
  if (attnum <= 0)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_COLUMN),
                    errmsg("column \"%s\" of the feature spec is not a column of relation %s", name,
                           get_rel_name(relid))));
  Oid type = get_atttype(relid, attnum);
  if (col.kind == dperm::FeatureColumn::Kind::kBounds && !IsNumberType(type))
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("column \"%s\" has type %s; \"bounds\" need a number type", name,
                           format_type_be(type)),
                    errhint("Declare a text or enum column by its \"values\".")));
  if (col.kind == dperm::FeatureColumn::Kind::kBoolean && type != BOOLOID)
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("column \"%s\" has type %s; \"type\": \"boolean\" needs boolean", name,
                           format_type_be(type))));
  if (col.kind == dperm::FeatureColumn::Kind::kValues) CheckDeclaredValues(col, type);
}

// At most the first `limit` bytes of a text value (dperm::ReadLimit): what
// the encoder reads of it, copied without the rest (detoasting a slice only).
char* TextPrefix(Datum value, size_t limit) {
  text* t = DatumGetTextPSlice(value, 0, static_cast<int32>(std::min<size_t>(limit, PG_INT32_MAX)));
  return pnstrdup(VARDATA_ANY(t), std::min<size_t>(VARSIZE_ANY_EXHDR(t), limit));
}

}  // namespace

namespace {

// dperm.encode_values(spec, ARRAY[substr(col::text, 1, limit), ...]) and
// dperm.encode_label(spec, ...) for the spec `text` (parsed: `spec`).
void WriteSpecSql(const char* text, const dperm::FeatureSpec& spec, const char** features_sql,
                  const char** label_sql) {
  StringInfoData sql;
  initStringInfo(&sql);
  appendStringInfo(&sql, "dperm.encode_values(%s::pg_catalog.jsonb, ARRAY[",
                   quote_literal_cstr(text));
  for (size_t c = 0; c < spec.columns.size(); c++) {
    const dperm::FeatureColumn& col = spec.columns[c];
    // substr: the scan detoasts only the prefix the encoder reads (ReadLimit
    // bytes, at most that many characters), so a row's cost does not grow
    // with a stored value's length.
    appendStringInfo(&sql, "%spg_catalog.substr(%s::pg_catalog.text, 1, %zu)", c > 0 ? ", " : "",
                     quote_identifier(col.name.c_str()), dperm::ReadLimit(col));
  }
  appendStringInfoString(&sql, "]::pg_catalog.text[])");
  *features_sql = sql.data;
  *label_sql = nullptr;
  if (spec.has_label)
    *label_sql = psprintf(
        "dperm.encode_label(%s::pg_catalog.jsonb, pg_catalog.substr(%s::pg_catalog.text, 1, %zu))",
        quote_literal_cstr(text), quote_identifier(spec.label.name.c_str()),
        dperm::ReadLimit(spec.label));
}

}  // namespace

SpecFeatures SpecFeaturesFor(Oid relid, Jsonb* spec_jsonb) {
  char* text = JsonbText(spec_jsonb);
  PgBox<dperm::FeatureSpec> spec(CurrentMemoryContext);
  RunCore([&] { spec.Emplace(dperm::ParseFeatureSpec(text)); });
  const int n = static_cast<int>(spec->columns.size());
  const char** columns = static_cast<const char**>(palloc(sizeof(char*) * n));
  for (int c = 0; c < n; c++) {
    columns[c] = pstrdup(spec->columns[c].name.c_str());
    CheckColumnType(relid, spec->columns[c]);
  }
  if (spec->has_label) CheckColumnType(relid, spec->label);
  const char* features_sql;
  const char* label_sql;
  WriteSpecSql(text, *spec, &features_sql, &label_sql);
  return {features_sql, columns, n, spec.get(), label_sql};
}

void SpecSqlFor(const dperm::FeatureSpec& spec, const char** features_sql, const char** label_sql) {
  PgBox<std::string> json(CurrentMemoryContext);
  RunCore([&] { json.Emplace(dperm::FeatureSpecJson(spec)); });
  WriteSpecSql(pstrdup(json->c_str()), spec, features_sql, label_sql);
}

Oid CheckSpecLabel(const dperm::FeatureSpec& spec, const char* label, dperm::LossKind loss) {
  const dperm::FeatureColumn& col = spec.label;
  if (col.name != label)
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("the feature spec marks column \"%s\" as the label, but the label is \"%s\"",
                    col.name.c_str(), label)));
  using Kind = dperm::FeatureColumn::Kind;
  const dperm::LabelKind label_kind = dperm::LossLabel(loss);
  const bool ok =
      label_kind == dperm::LabelKind::kBinary
          ? (col.kind == Kind::kValues && col.values.size() == 2) || col.kind == Kind::kBoolean
      : label_kind == dperm::LabelKind::kClass ? col.kind == Kind::kValues && col.values.size() >= 2
                                               : col.kind == Kind::kBounds;
  if (!ok)
    ereport(
        ERROR,
        (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
         errmsg("the label \"%s\" of the feature spec has a domain %s does not read", label,
                dperm::LossName(loss)),
         errhint("logistic: {\"values\": [negative, positive], \"label\": true} or "
                 "{\"type\": \"boolean\", \"label\": true}; softmax: {\"values\": [the "
                 "classes], \"label\": true}; huber: {\"bounds\": [lo, hi], \"label\": true}.")));
  return label_kind == dperm::LabelKind::kClass ? INT4OID : FLOAT8OID;
}

const dperm::FeatureSpec* ParsedSpec(MemoryContext mcxt, const char* text) {
  PgBox<dperm::FeatureSpec> spec(mcxt);
  std::string json(text);
  RunCore([&] { spec.Emplace(dperm::ParseFeatureSpec(json)); });
  return spec.get();
}

void EncodeRecord(const dperm::FeatureSpec& spec, HeapTupleHeader row, double* out) {
  TupleDesc desc =
      lookup_rowtype_tupdesc(HeapTupleHeaderGetTypeId(row), HeapTupleHeaderGetTypMod(row));
  HeapTupleData tuple;
  tuple.t_len = HeapTupleHeaderGetDatumLength(row);
  ItemPointerSetInvalid(&tuple.t_self);
  tuple.t_tableOid = InvalidOid;
  tuple.t_data = row;
  const int n = static_cast<int>(spec.columns.size());
  const char** texts = static_cast<const char**>(palloc(sizeof(char*) * (n > 0 ? n : 1)));
  for (int c = 0; c < n; c++) {
    const char* name = spec.columns[c].name.c_str();
    int attnum = 0;
    for (int a = 0; a < desc->natts && attnum == 0; a++) {
      Form_pg_attribute att = TupleDescAttr(desc, a);
      if (!att->attisdropped && strcmp(NameStr(att->attname), name) == 0) attnum = a + 1;
    }
    if (attnum == 0) {
      ReleaseTupleDesc(desc);
      ereport(ERROR,
              (errcode(ERRCODE_UNDEFINED_COLUMN),
               errmsg("the row has no column \"%s\", which the model's feature spec reads", name)));
    }
    bool isnull;
    Datum value = heap_getattr(&tuple, attnum, desc, &isnull);
    if (isnull) {
      texts[c] = nullptr;
      continue;
    }
    Oid type = TupleDescAttr(desc, attnum - 1)->atttypid;
    if (type == TEXTOID || type == VARCHAROID) {  // their text form is their bytes
      texts[c] = TextPrefix(value, dperm::ReadLimit(spec.columns[c]));
      continue;
    }
    // As the training scan reads it (col::text): a boolean as true/false
    // (its output function says t/f), a char(n) without its trailing blanks.
    if (type == BOOLOID) {
      texts[c] = DatumGetBool(value) ? "true" : "false";
      continue;
    }
    if (type == BPCHAROID) {
      texts[c] = TextDatumGetCString(DirectFunctionCall1(rtrim1, value));
      continue;
    }
    Oid output;
    bool varlena;
    getTypeOutputInfo(type, &output, &varlena);
    texts[c] = OidOutputFunctionCall(output, value);
  }
  ReleaseTupleDesc(desc);
  dperm::EncodeRow(spec, texts, out);
}

Datum WithSpecOptions(Jsonb* options, const dperm::FeatureSpec& spec, dperm::LossKind loss) {
  const dperm::Options o = ParseOptionsJsonb(options).options;
  if (o.dimension > 0 && o.dimension != spec.dimension())
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("option \"dimension\" is %d, but the feature spec encodes %d features",
                           o.dimension, spec.dimension()),
                    errhint("Leave dimension out: the spec declares it.")));
  if (o.n_feature_names >= 0)
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("option \"feature_names\" cannot be given with a feature spec"),
             errhint("The spec names the features (a categorical column's as column=value).")));
  if (KeyGiven(o, "feature_bound"))
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("option \"feature_bound\" cannot be given with a feature spec"),
             errhint("Every encoded row has norm at most sqrt(columns), the release's bound.")));
  StringInfoData extra;
  initStringInfo(&extra);
  appendStringInfoString(&extra, "{");
  if (spec.has_label && dperm::LossLabel(loss) == dperm::LabelKind::kClass) {
    const int k = static_cast<int>(spec.label.values.size());
    if (o.classes > 0 && o.classes != k)
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("option \"classes\" is %d, but the feature spec's label has %d values",
                             o.classes, k),
                      errhint("Leave classes out: the spec's label declares them.")));
    appendStringInfo(&extra, "\"classes\": %d, ", k);
  }
  if (spec.has_label && dperm::LossLabel(loss) == dperm::LabelKind::kTarget) {
    if (KeyGiven(o, "target_bound"))
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("option \"target_bound\" cannot be given with a label's bounds"),
                      errhint("The label's bounds [lo, hi] are scaled to [-1, 1] for training.")));
    if (!o.fit_intercept && spec.label.lo != -spec.label.hi)
      ereport(ERROR,
              (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
               errmsg("a label with bounds [lo, hi] needs fit_intercept unless lo = -hi"),
               errhint("The model maps its targets back to [lo, hi] through its intercept.")));
    appendStringInfoString(&extra, "\"target_bound\": 1, ");
  }
  appendStringInfo(&extra, "\"dimension\": %d, \"feature_bound\": %.17g, \"feature_names\": [",
                   spec.dimension(), spec.norm_bound);
  for (size_t i = 0; i < spec.names.size(); i++) {
    if (i > 0) appendStringInfoString(&extra, ", ");
    escape_json(&extra, spec.names[i].c_str());
  }
  appendStringInfoString(&extra, "]}");
  Datum add = DirectFunctionCall1(jsonb_in, CStringGetDatum(extra.data));
  return DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(options), add);
}

}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.encode_values(spec jsonb, vals text[]) -> float8[]: one row encoded
// by a feature spec, its columns' values as text in the spec's order (NULL
// for NULL). The training scan and dperm.encode call it; a wrong number of
// values is the caller's SQL, not a row (22023).
DPERM_FUNCTION(dperm_encode_values) {
  if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
    ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                    errmsg("the spec and the values of dperm.encode_values must not be NULL")));
  const dperm::FeatureSpec& spec = CachedSpec(fcinfo, PG_GETARG_JSONB_P(0));
  RefuseUnchosen(spec);
  ArrayType* values = PG_GETARG_ARRAYTYPE_P(1);
  Datum* elems;
  bool* nulls;
  int n;
  deconstruct_array(values, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
  if (n != static_cast<int>(spec.columns.size()))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("the feature spec has %d columns, but %d values were given",
                           static_cast<int>(spec.columns.size()), n)));
  const char** texts = static_cast<const char**>(palloc(sizeof(char*) * (n > 0 ? n : 1)));
  // Each value is read to its column's ReadLimit: the encoder's time per row
  // does not grow with the values' lengths (feature_spec.hpp, EncodeRow).
  for (int c = 0; c < n; c++)
    texts[c] = nulls[c] ? nullptr : TextPrefix(elems[c], dperm::ReadLimit(spec.columns[c]));
  const int d = spec.dimension();
  double* out = static_cast<double*>(palloc(sizeof(double) * d));
  dperm::EncodeRow(spec, texts, out);
  Datum* items = static_cast<Datum*>(palloc(sizeof(Datum) * d));
  for (int j = 0; j < d; j++) items[j] = Float8GetDatum(out[j]);
  PG_RETURN_ARRAYTYPE_P(
      construct_array(items, d, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

// dperm.encode_label(spec jsonb, val text) -> float8: the label of a row
// read through the column the spec marks "label" (EncodeLabel): NULL when the
// value is not in its domain, which the aggregates impute as a NULL label.
// A spec without a label is the caller's SQL, not a row (22023).
DPERM_FUNCTION(dperm_encode_label) {
  if (PG_ARGISNULL(0))
    ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                    errmsg("the spec of dperm.encode_label must not be NULL")));
  const dperm::FeatureSpec& spec = CachedSpec(fcinfo, PG_GETARG_JSONB_P(0));
  RefuseUnchosen(spec);
  if (!spec.has_label)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("the feature spec marks no column as its label")));
  const char* value =
      PG_ARGISNULL(1) ? nullptr : TextPrefix(PG_GETARG_DATUM(1), dperm::ReadLimit(spec.label));
  const double y = dperm::EncodeLabel(spec.label, value);
  if (std::isnan(y)) PG_RETURN_NULL();
  PG_RETURN_FLOAT8(y);
}
