// Privacy units (docs/design.md section 4; the core's unit_level.hpp): the
// unit a relation's budget declares, the bounded read that gives every unit
// exactly max_rows_per_unit row slots, and the refusals of releases that
// cannot bound a unit's rows.
#pragma once

#include "dperm/options/options.hpp"

#include "boundary.hpp"

namespace dperm::pg {

// The unit of a release charged to some relations: the column naming the
// unit (nullptr: the row) and k, the rows each unit contributes.
struct PrivacyUnit {
  const char* column = nullptr;
  int64 max_rows = 0;
  Oid relation = InvalidOid;  // a relation whose budget declares it
};

// The unit the budgets of `relations` declare (their smallest k: fewer rows
// per unit keep every budget's guarantee); refuses (0A000) budgets naming
// different columns. Reads dperm's catalog as its owner; an older catalog
// without units reads as the row.
PrivacyUnit UnitOf(const Oid* relations, int n_relations);

// The unit of a release from table `relid` charged to `relations`
// (dperm.train, dperm.evaluate): UnitOf, refused (0A000, nothing charged)
// when the rows cannot be bounded by it: `relid` is a view (its rows need
// not map to the table's units one to one), a Citus distributed table, or
// has no such column.
PrivacyUnit TrainUnit(Oid relid, const Oid* relations, int n_relations);

// Refuses (0A000, nothing charged) a release by `name` that cannot bound a
// unit's rows (a direct aggregate, a release by passes over a Citus table)
// when one of `relations` has a privacy unit.
void RefuseUnitRelations(const Oid* relations, int n_relations, const char* name);

// Refuses max_rows_per_unit in the options of a release that does not
// bound the rows itself (anything but dperm.train and dperm.evaluate on a
// relation with that unit): its guarantee would be a claim on rows nobody
// bounded. `bounded`: the k the caller bounded the rows to (0: none).
void CheckUnitOption(const dperm::Options& o, int64 bounded, const char* name);

// The FROM item that reads `qualified` as exactly u.max_rows row slots per
// value of u.column (NULL is one unit): each unit's rows ranked by SHA-256 of
// a fresh random key and the row's features and label (a uniformly random
// order), slot j in [0, k) taking the row of rank j mod (the unit's rows).
// `features_sql` is an SQL expression over the relation's columns (a quoted
// column name, or a feature spec's encoder); the item's columns are named
// `out_features` and `label`.
char* UnitBoundedSource(const char* qualified, const char* features_sql, const char* label,
                        const PrivacyUnit& u, const char* out_features);

// The SQL of the number of units of `qualified` (NULL is one unit).
char* UnitCountSql(const char* qualified, const PrivacyUnit& u);

// The ledger's neighbours of a release: "replace_one" for a row, else
// "replace_one unit (column, at most k rows)".
const char* NeighborsOf(const PrivacyUnit& u);

}  // namespace dperm::pg
