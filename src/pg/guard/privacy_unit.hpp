// Privacy units (docs/design.md section 4; the core's unit_level.hpp): the
// unit a relation's budget declares, the bounded read that gives every unit
// exactly max_rows_per_unit row slots, and the refusals of releases that
// cannot bound a unit's rows.
#pragma once

#include "dperm/options/options.hpp"

#include "base/boundary.hpp"

namespace dperm::pg {

// The unit of a release charged to some relations: the column naming the
// unit (nullptr: the row) and k, the rows each unit contributes.
struct PrivacyUnit {
  const char* column = nullptr;
  int64 max_rows = 0;
  Oid relation = InvalidOid;  // a relation whose budget declares it
  // The column of the read's FROM item that names the unit, when it is not
  // `column`: dperm.train_query's canonical query names it dperm_unit
  // (query_input.hpp). nullptr: `column`.
  const char* read_column = nullptr;
  // The row as the unit of a query's input (dperm.train_query on a relation
  // whose budget names no unit): k = 1, read_column a per-row value; charged
  // and stated at the row, its neighbours one row added or removed.
  bool row = false;
  // The number of units the relation's own budget declares public
  // (dperm.set_budget(..., units => N); PublicUnits): the release reads
  // exactly that many units and releases no count. 0: not declared, the
  // count is noisy.
  int64 public_units = 0;
};

// The column of a read that names unit `u` (u.read_column, else u.column).
inline const char* UnitReadColumn(const PrivacyUnit& u) {
  return u.read_column != nullptr ? u.read_column : u.column;
}

// The unit the budgets of `relations` declare (their smallest k: fewer rows
// per unit keep every budget's guarantee); refuses (0A000) budgets naming
// different columns. Reads dperm's catalog as its owner; an older catalog
// without units reads as the row.
PrivacyUnit UnitOf(const Oid* relations, int n_relations);

// The unit of a release from table `relid` charged to `relations`
// (dperm.train): UnitOf, refused (0A000, nothing charged)
// when the rows cannot be bounded by it: `relid` is a view (its rows need
// not map to the table's units one to one), a Citus distributed table, or
// has no such column.
PrivacyUnit TrainUnit(Oid relid, const Oid* relations, int n_relations);

// Refuses (0A000, nothing charged) a release by `name` that cannot bound a
// unit's rows or would state their number (a direct aggregate,
// dperm.evaluate) when one of `relations` has a privacy unit.
void RefuseUnitRelations(const Oid* relations, int n_relations, const char* name);

// Refuses max_rows_per_unit in the options of a release that does not
// bound the rows itself (anything but dperm.train on a
// relation with that unit): its guarantee would be a claim on rows nobody
// bounded. `bounded`: the k the caller bounded the rows to (0: none).
void CheckUnitOption(const dperm::Options& o, int64 bounded, const char* name);

// Refuses (42883, before any charge) a unit column of `relid` whose type has
// no default btree equality and order, which counting, ranking and
// partitioning the units use.
void CheckUnitType(Oid relid, const PrivacyUnit& u);

// How a unit-level release reads its relation: `units` units (a noisy count,
// ReleaseUnitCount) of exactly u.max_rows row slots each.
struct UnitRead {
  const char* qualified;     // the relation
  const char* features_sql;  // an SQL expression of its columns (a quoted column, a spec's encoder)
  const char*
      label_sql;      // an SQL expression of its columns for the label (a quoted column, a spec's)
  const char* label;  // the label column: the name the read's label takes
  int64 units;        // how many units to read
  int dimension;      // d: a dummy unit's features are d zeros
  const char* dummy_label;  // SQL of a dummy slot's label from its number j (column type)
  bool seeded;              // the superuser-only seed: the order's key comes from it
  uint64 seed;
};

// The FROM item that reads exactly r.units units of u.max_rows slots: the
// relation's units (NULL is one unit; a unit is what the type's equality
// says) in a uniformly random order (the least SHA-256 of a fresh random key
// and the text of the unit's values; ties by the value), the first r.units
// of them, then as
// many dummy units as are missing (public rows: zero features, labels
// r.dummy_label). A unit's rows are ranked by SHA-256 of the key and the
// row, slot j in [0, k) taking the row of rank j mod (the unit's rows): a
// uniformly random k of them, or all of them repeated in turn. Its columns
// are named `out_features` and `r.label`.
char* UnitBoundedSource(const UnitRead& r, const PrivacyUnit& u, const char* out_features);

// The SQL of a dummy slot's label from its number dummy.j, of the label
// column's type `label_type`: public and balanced (logistic alternates the
// two classes of a binary label, a target is 0, a class index cycles
// through the `classes`: options.hpp, LabelKind).
const char* UnitDummyLabel(dperm::LossKind loss, Oid label_type, int classes);

// The SQL of the number of units of `qualified` (NULL is one unit), as
// `alias.t` of a FROM item.
char* UnitCountFrom(const char* qualified, const PrivacyUnit& u);

// The number of units the budget of `relid` declares public (dperm.set_budget
// units => N), when that budget is the only one of `relations` (the
// release's closure, relid included): 0 otherwise, and the count stays
// noisy. Another budget (an ancestor's, a partition's, `dataset`'s) did not
// declare N, and a release that relies on N is private only against a
// replaced unit of relid, at its N: see RefuseUnitMismatch.
int64 PublicUnits(Oid relid, const Oid* relations, int n_relations);

// Counts the units of `count_sql` (UnitCountFrom) as `reader` and refuses
// (55000, before any charge: nothing charged) when there are not exactly
// `units`, the public number the budget of `name` declares.
void RefuseUnitMismatch(Oid reader, const char* count_sql, int64 units, const char* name,
                        const char* function);

// The ledger's neighbours of a release: "replace_one" for a row, "one row
// added or removed (...)" for a query's row unit, else "one unit (column, at
// most k rows) added, removed or replaced", or, at a public number of
// units, "one unit (column, at most k rows) replaced; N units, public".
const char* NeighborsOf(const PrivacyUnit& u);

}  // namespace dperm::pg
