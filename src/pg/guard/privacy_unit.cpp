// Privacy units (privacy_unit.hpp).
#include "guard/privacy_unit.hpp"

#include "base/arrays.hpp"
#include "base/citus.hpp"
#include "base/internal_sql.hpp"

extern "C" {
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "port.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"
}

namespace dperm::pg {

PrivacyUnit UnitOf(const Oid* relations, int n_relations) {
  PrivacyUnit unit;
  if (n_relations == 0) return unit;
  Oid types[1] = {OIDARRAYOID};
  Datum args[1] = {OidArrayDatum(relations, n_relations)};
  MemoryContext caller = CurrentMemoryContext;
  SPI_connect();
  // to_jsonb: a catalog from before privacy units reads as no unit.
  RunAsCatalogOwner(
      "SELECT u.column_name, u.k, u.relation FROM ("
      " SELECT (pg_catalog.to_jsonb(b) OPERATOR(pg_catalog.->>) 'privacy_unit') AS column_name,"
      "        (pg_catalog.to_jsonb(b) OPERATOR(pg_catalog.->>) 'max_rows_per_unit')::pg_catalog.int8 AS k,"
      "        b.relation::pg_catalog.oid AS relation"
      "   FROM dperm.budgets b WHERE b.relation::pg_catalog.oid OPERATOR(pg_catalog.=) ANY ($1)) u"
      " WHERE u.column_name IS NOT NULL ORDER BY u.k, u.relation",
      1, types, args, nullptr, SPI_OK_SELECT, true);
  for (uint64 i = 0; i < SPI_processed; i++) {
    char* column = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
    bool isnull;
    int64 k =
        DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull));
    Oid relid =
        DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 3, &isnull));
    if (unit.column == nullptr) {
      MemoryContext spi = MemoryContextSwitchTo(caller);
      unit.column = pstrdup(column);
      MemoryContextSwitchTo(spi);
      unit.max_rows = k;  // the smallest k comes first
      unit.relation = relid;
    } else if (strcmp(unit.column, column) != 0) {
      ereport(
          ERROR,
          (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
           errmsg("the budgets of this release name two privacy units: \"%s\" (%s) and \"%s\" (%s)",
                  unit.column, get_rel_name(unit.relation), column, get_rel_name(relid)),
           errdetail("A release is private per unit of one column. Nothing was charged."),
           errhint("The owners can declare the same privacy_unit with dperm.set_budget.")));
    }
  }
  SPI_finish();
  return unit;
}

PrivacyUnit TrainUnit(Oid relid, const Oid* relations, int n_relations) {
  PrivacyUnit u = UnitOf(relations, n_relations);
  if (u.column == nullptr) return u;
  const char* name = get_rel_name(relid);
  const char* why = get_rel_relkind(relid) == RELKIND_VIEW ? "it is a view"
                    : IsCitusTable(relid)                  ? "it is a Citus distributed table"
                    : get_attnum(relid, u.column) <= 0     ? "it has no column of that name"
                                                           : nullptr;
  if (why != nullptr)
    ereport(ERROR,
            (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
             errmsg("cannot bound the rows of each \"%s\" (the privacy unit of %s) in %s: %s",
                    u.column, get_rel_name(u.relation), name, why),
             errdetail("A release charged to a relation with a privacy unit reads at most %lld "
                       "rows of each unit, grouped by that column of the table it reads. "
                       "Nothing was charged.",
                       static_cast<long long>(u.max_rows)),
             errhint("Train on the table that has the privacy unit's column.")));
  return u;
}

void RefuseUnitRelations(const Oid* relations, int n_relations, const char* name) {
  PrivacyUnit u = UnitOf(relations, n_relations);
  if (u.column == nullptr) return;
  ereport(ERROR,
          (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
           errmsg("%s cannot release from %s: its budget protects each \"%s\", not each row", name,
                  get_rel_name(u.relation), u.column),
           errdetail("A release charged to a relation with a privacy unit must bound the rows of "
                     "each unit (at most %lld) and may not state how many units there are, which "
                     "only dperm.train does. Nothing was charged.",
                     static_cast<long long>(u.max_rows)),
           errhint("Use dperm.train(relation, features, label, loss, options) or a named model "
                   "(dperm.train_model).")));
}

void CheckUnitOption(const dperm::Options& o, int64 bounded, const char* name) {
  if (o.max_rows_per_unit <= 0 || o.max_rows_per_unit == bounded) return;
  if (bounded > 0)
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("option \"max_rows_per_unit\" is %lld, but the relation's budget bounds "
                    "each unit to %lld rows",
                    static_cast<long long>(o.max_rows_per_unit), static_cast<long long>(bounded)),
             errhint("Leave max_rows_per_unit out: dperm.train takes it from the budget.")));
  ereport(ERROR,
          (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
           errmsg("%s cannot take option \"max_rows_per_unit\": nothing bounds the rows "
                  "of a unit here",
                  name),
           errdetail("A unit-level guarantee needs every unit's rows bounded, which "
                     "dperm.train does for a relation whose budget names a privacy unit "
                     "(dperm.set_budget(..., privacy_unit => ..., max_rows_per_unit => ...)). "
                     "Nothing was charged."),
           errhint("dp_explain takes it to show a unit-level plan.")));
}

void CheckUnitType(Oid relid, const PrivacyUnit& u) {
  // Counting, ranking and partitioning a unit all use the type's default
  // btree equality (GROUP BY, PARTITION BY, ORDER BY): a type without one
  // cannot be a unit. Refused from the catalog, before anything is charged.
  AttrNumber attnum = get_attnum(relid, u.column);
  Oid type = attnum > 0 ? get_atttype(relid, attnum) : InvalidOid;
  TypeCacheEntry* entry =
      OidIsValid(type) ? lookup_type_cache(type, TYPECACHE_LT_OPR | TYPECACHE_EQ_OPR) : nullptr;
  if (entry != nullptr && OidIsValid(entry->lt_opr) && OidIsValid(entry->eq_opr)) return;
  ereport(ERROR, (errcode(ERRCODE_UNDEFINED_FUNCTION),
                  errmsg("the privacy unit \"%s\" of %s has type %s, which has no default btree "
                         "ordering",
                         u.column, get_rel_name(relid),
                         OidIsValid(type) ? format_type_be(type) : "unknown"),
                  errdetail("dperm counts and samples units by the type's equality and order. "
                            "Nothing was charged."),
                  errhint("Declare a unit column of a type with a default btree operator class "
                          "(integer, text, uuid, ...).")));
}

char* UnitBoundedSource(const UnitRead& r, const PrivacyUnit& u, const char* out_features) {
  // A fresh key per read: the order of the units and of a unit's rows is
  // uniformly random. Privacy does not rest on the key: for every key, the
  // slots of a unit depend on that unit's rows only, and which units are
  // read on their order only.
  // A seeded release (tests only, never private) takes its key from the
  // seed, so that it reads the same units and rows again.
  uint8 key[16];
  if (r.seeded) {
    for (int i = 0; i < 16; i++)
      key[i] = static_cast<uint8>(r.seed >> (8 * (i % 8))) ^ static_cast<uint8>(i);
  } else if (!pg_strong_random(key, sizeof key)) {
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                    errmsg("could not generate a random key for the units' rows")));
  }
  char hex[2 * sizeof key + 1];
  hex[hex_encode(reinterpret_cast<const char*>(key), sizeof key, hex)] = '\0';
  const char* col = quote_identifier(UnitReadColumn(u));
  const char* f = quote_identifier(out_features);
  const char* l = quote_identifier(r.label);
  const long long k = static_cast<long long>(u.max_rows);
  const long long units = static_cast<long long>(r.units);
  // A unit is what the column type's equality says (btree, as GROUP BY and
  // PARTITION BY use it), in every step: the count (UnitCountFrom groups by
  // it), the ranking and the slots. The text of a value only draws the
  // random order: each unit's key is the least hash of its rows' texts
  // (min over the unit's partition, so every row of a unit has the same
  // key, however its value is written: numeric 1 and 1.0, -0 and 0, citext,
  // a nondeterministic collation), and dense_rank breaks a tie between two
  // units by the value itself. So exactly min(units, the count) units are
  // read, each in k slots, whatever the settings (RunInternalSql pins those
  // that change a value's text as well).
  return psprintf(
      "(SELECT s.x AS %s, s.y AS %s FROM"
      " (SELECT v.x, v.y,"
      "         pg_catalog.row_number() OVER (PARTITION BY v.u ORDER BY v.h)"
      "           OPERATOR(pg_catalog.-) 1 AS r,"
      "         pg_catalog.count(*) OVER (PARTITION BY v.u) AS c"
      "    FROM (SELECT w.x, w.y, w.u, w.h FROM"
      "           (SELECT q.x, q.y, q.u, q.h,"
      "                   pg_catalog.dense_rank() OVER (ORDER BY q.unit_key, q.u) AS unit_rank"
      "              FROM (SELECT p.x, p.y, p.u,"
      "                           pg_catalog.sha256('\\x%s'::pg_catalog.bytea OPERATOR(pg_catalog.||)"
      "                             pg_catalog.textsend(pg_catalog.concat_ws('|', p.x, p.y))) AS h,"
      "                           pg_catalog.min(p.uh) OVER (PARTITION BY p.u) AS unit_key"
      "                      FROM (SELECT %s AS x, %s AS y, t.%s AS u,"
      "                                   pg_catalog.encode(pg_catalog.sha256('\\x%s'::pg_catalog.bytea"
      "                                     OPERATOR(pg_catalog.||) pg_catalog.textsend(CASE WHEN t.%s IS NULL"
      "                                       THEN 'n' ELSE 'v' OPERATOR(pg_catalog.||) t.%s::pg_catalog.text END)),"
      "                                     'hex') COLLATE pg_catalog.\"C\" AS uh"
      "                              FROM %s t) p) q) w"
      "          WHERE w.unit_rank OPERATOR(pg_catalog.<=) %lld) v) s"
      " CROSS JOIN LATERAL pg_catalog.generate_series(s.r, %lld::pg_catalog.int8, s.c) AS slot(j)"
      " UNION ALL"
      " SELECT pg_catalog.array_fill(0::pg_catalog.float8, ARRAY[%d]), %s"
      "   FROM pg_catalog.generate_series(1::pg_catalog.int8,"
      "          pg_catalog.int8larger(%lld::pg_catalog.int8 OPERATOR(pg_catalog.-) (%s),"
      "                                0::pg_catalog.int8) OPERATOR(pg_catalog.*) %lld::pg_catalog.int8) AS dummy(j))"
      " AS bounded",
      f, l, hex, r.features_sql, r.label_sql, col, hex, col, col, r.qualified, units, k - 1,
      r.dimension, r.dummy_label, units, UnitCountFrom(r.qualified, u), k);
}

const char* UnitDummyLabel(dperm::LossKind loss, Oid label_type, int classes) {
  switch (dperm::LossLabel(loss)) {
    case dperm::LabelKind::kBinary:
      return label_type == BOOLOID
                 ? "(dummy.j OPERATOR(pg_catalog.%) 2 OPERATOR(pg_catalog.=) 0)"
                 : "(CASE WHEN dummy.j OPERATOR(pg_catalog.%) 2 OPERATOR(pg_catalog.=) 0"
                   " THEN 1 ELSE -1 END)::pg_catalog.float8";
    case dperm::LabelKind::kClass:
      return psprintf("(dummy.j OPERATOR(pg_catalog.%%) %d)::%s", classes > 0 ? classes : 1,
                      label_type == INT2OID ? "pg_catalog.int2" : "pg_catalog.int4");
    case dperm::LabelKind::kTarget: break;
  }
  return "0::pg_catalog.float8";
}

char* UnitCountFrom(const char* qualified, const PrivacyUnit& u) {
  return psprintf("SELECT pg_catalog.count(*) FROM (SELECT 1 FROM %s t GROUP BY t.%s) g", qualified,
                  quote_identifier(UnitReadColumn(u)));
}

int64 PublicUnits(Oid relid, const Oid* relations, int n_relations) {
  Oid types[1] = {OIDARRAYOID};
  Datum args[1] = {OidArrayDatum(relations, n_relations)};
  int64 units = 0;
  SPI_connect();
  // Every budget of the closure; to_jsonb: a catalog without the column
  // reads as no declaration. relid's own declaration counts only when its
  // budget is the only one: another budget's guarantee (one unit added or
  // removed, or a row of a budget without a unit, which can move a row to a
  // new unit) would depend on the unit count this release then relies on.
  RunAsCatalogOwner(
      "SELECT b.relation::pg_catalog.oid,"
      "       (pg_catalog.to_jsonb(b) OPERATOR(pg_catalog.->>) 'units')::pg_catalog.int8"
      "  FROM dperm.budgets b WHERE b.relation::pg_catalog.oid OPERATOR(pg_catalog.=) ANY ($1)",
      1, types, args, nullptr, SPI_OK_SELECT, true);
  if (SPI_processed == 1) {
    bool isnull_relation, isnull_units;
    Oid budget = DatumGetObjectId(
        SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull_relation));
    Datum n = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull_units);
    if (budget == relid && !isnull_units) units = DatumGetInt64(n);
  }
  SPI_finish();
  return units;
}

// Why a refusal on a mismatch is private, and why it is a refusal. Under a
// public number of units N (the owner's declaration, dperm.set_budget units
// => N) the neighbouring relation is one unit replaced: two tables of the
// same units count C that differ in one unit's rows (a unit added or
// removed would change C, which N makes public). The check below is a
// function of C alone, the same on both neighbours, so it reveals nothing
// about any one unit (0-DP under that relation); it says only whether C is
// N, a fact about the table's size the owner made public by declaring N.
// It is made before the charge, as dperm.train counts n before its charge
// for a row-level release (n public under replace-one, docs/design.md
// section 4): the refusal costs nothing. It refuses rather than reads the
// first N units: a mismatch means the declaration is stale (the cohort
// grew or shrank), which the owner should fix, not have dperm silently read
// another table than the one declared. The read itself is the noisy
// path's read at m = N (UnitBoundedSource: the first N units in a uniformly
// random order, public dummy units for any missing), whose coupling
// argument (train_query.cpp) covers one unit replaced, so a change between
// this count and the read's snapshot still reads exactly N units privately.
void RefuseUnitMismatch(Oid reader, const char* count_sql, int64 units, const char* name,
                        const char* function) {
  RunInternalSql(reader, count_sql, 0, nullptr, nullptr, nullptr, SPI_OK_SELECT, true);
  bool isnull;
  const int64 counted =
      DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  if (counted == units) return;
  ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                  errmsg("%s does not have the " INT64_FORMAT " units its budget declares public",
                         name, units),
                  errdetail("%s reads exactly the declared number of units and releases no "
                            "count. Nothing was charged.",
                            function),
                  errhint("The owner can declare the current number with dperm.set_budget(..., "
                          "units => N), or withdraw the declaration with units => 0.")));
}

const char* NeighborsOf(const PrivacyUnit& u) {
  if (u.column == nullptr) return "replace_one";
  if (u.row) return "one row added or removed (a query's input: its size released noisily)";
  if (u.public_units > 0)
    return psprintf("one unit (%s, at most %lld rows) replaced; " INT64_FORMAT
                    " units, public (the budget's units)",
                    u.column, static_cast<long long>(u.max_rows), u.public_units);
  return psprintf("one unit (%s, at most %lld rows) added, removed or replaced", u.column,
                  static_cast<long long>(u.max_rows));
}

}  // namespace dperm::pg
