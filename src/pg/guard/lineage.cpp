// Budgets follow the rows through ALTER TABLE (dperm.lineage): the event
// trigger dperm.budgeted_alter (budgeted_alter.cpp) records, before a DETACH
// PARTITION or NO INHERIT, which budgeted relations a relation's rows were
// under; AncestorsOf (relation_access.cpp) adds them to every release's
// closure; move_budget (budget_admin.cpp) records the old relation's rows
// under the new budget.
#include "base/arrays.hpp"
#include "base/internal_sql.hpp"
#include "guard/lineage.hpp"

extern "C" {
#include "catalog/namespace.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/lsyscache.h"
}

namespace dperm::pg {

// Whether dperm.lineage exists (a catalog from before 0.7.0's lineage has
// none: nothing is recorded).
bool HasLineage() {
  Oid schema = get_namespace_oid("dperm", true);
  return OidIsValid(schema) && OidIsValid(get_relname_relid("lineage", schema));
}

// `ancestors` (the pg_inherits ancestors of `relid`) plus every relation
// whose rows `relid` or one of them held before a DETACH PARTITION, NO
// INHERIT or dperm.move_budget (dperm.lineage, recorded by the event
// trigger dperm.budgeted_alter and by move_budget), transitively. A catalog
// without dperm.lineage adds none.
List* LineageAncestors(Oid relid, List* ancestors) {
  if (!HasLineage()) return ancestors;
  List* from = lcons_oid(relid, list_copy(ancestors));
  Oid* oids = static_cast<Oid*>(palloc(sizeof(Oid) * list_length(from)));
  int n = 0;
  ListCell* lc;
  foreach (lc, from) oids[n++] = lfirst_oid(lc);
  Oid types[1] = {OIDARRAYOID};
  Datum args[1] = {OidArrayDatum(oids, n)};
  MemoryContext caller = CurrentMemoryContext;
  SPI_connect();
  RunAsCatalogOwner(
      "WITH RECURSIVE up(oid) AS ("
      "  SELECT l.ancestor::pg_catalog.oid FROM dperm.lineage l"
      "   WHERE l.relation::pg_catalog.oid OPERATOR(pg_catalog.=) ANY ($1)"
      "  UNION"
      "  SELECT l.ancestor::pg_catalog.oid FROM dperm.lineage l"
      "    JOIN up ON l.relation::pg_catalog.oid OPERATOR(pg_catalog.=) up.oid)"
      " SELECT up.oid FROM up",
      1, types, args, nullptr, SPI_OK_SELECT, true);
  for (uint64 i = 0; i < SPI_processed; i++) {
    bool isnull;
    Oid ancestor =
        DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
    if (ancestor == relid) continue;
    MemoryContext spi = MemoryContextSwitchTo(caller);
    ancestors = list_append_unique_oid(ancestors, ancestor);
    MemoryContextSwitchTo(spi);
  }
  SPI_finish();
  return ancestors;
}

// Records that `relid` and every partition and inheritance child of it held
// the rows of `ancestors` (dperm.lineage): a release that reads them is
// charged to those relations' budgets and read under their protection as
// before (AncestorsOf), though they no longer hold them. Needs an SPI
// connection.
void RecordLineage(Oid relid, List* ancestors) {
  if (ancestors == NIL) return;
  List* family = find_all_inheritors(relid, NoLock, nullptr);
  Oid* members = static_cast<Oid*>(palloc(sizeof(Oid) * list_length(family)));
  Oid* above = static_cast<Oid*>(palloc(sizeof(Oid) * list_length(ancestors)));
  int n = 0, m = 0;
  ListCell* lc;
  foreach (lc, family) members[n++] = lfirst_oid(lc);
  foreach (lc, ancestors)
    if (!list_member_oid(family, lfirst_oid(lc))) above[m++] = lfirst_oid(lc);
  if (m == 0) return;
  Oid types[2] = {OIDARRAYOID, OIDARRAYOID};
  Datum args[2] = {OidArrayDatum(members, n), OidArrayDatum(above, m)};
  RunAsCatalogOwner(
      "INSERT INTO dperm.lineage (relation, ancestor, recorded_at)"
      " SELECT d::pg_catalog.regclass, a::pg_catalog.regclass, pg_catalog.now()"
      "   FROM pg_catalog.unnest($1) d, pg_catalog.unnest($2) a"
      " ON CONFLICT DO NOTHING",
      2, types, args, nullptr, SPI_OK_INSERT, false);
}

}  // namespace dperm::pg
