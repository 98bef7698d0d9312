// A relation's budget as its owner decides it: dperm.set_budget (the
// total budget), dperm.move_budget and dperm.retire_budget (the budget moves
// to the relation that replaces it, or ends: the only ways a budgeted
// relation may be dropped, see the event trigger dperm.budgeted_drop).
#include <cmath>

#include "dperm/options/options.hpp"

#include "base/arrays.hpp"
#include "base/internal_sql.hpp"
#include "ledger/budget_admin.hpp"
#include "guard/lineage.hpp"
#include "guard/protect.hpp"

extern "C" {
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/builtins.h"
#include "utils/typcache.h"
}

namespace dperm::pg {
namespace {

// The delta of a new budget set without one: the user guide's recommendation
// (releases at delta > 0 need a budget with delta > 0).
const double kDefaultBudgetDelta = 1e-5;

// Refuses a temporary relation: it ends with its session without a DROP
// (which the event trigger could refuse), leaving its budget orphaned.
void RefuseTemporary(Oid relid, const char* name) {
  if (get_rel_persistence(relid) == RELPERSISTENCE_TEMP)
    ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                    errmsg("cannot give the temporary relation %s a privacy budget", name),
                    errdetail("A temporary relation is dropped at the end of its session without "
                              "a DROP command, which would leave its budget and its ledger rows "
                              "orphaned."),
                    errhint("Budget the permanent relation the data comes from.")));
}

// Refuses a privacy unit that is not a column of `relid` (42703) or whose
// type has no ordering to group the rows by (42883).
void CheckUnitColumn(Oid relid, const char* name, const char* unit) {
  AttrNumber attnum = get_attnum(relid, unit);
  if (attnum <= 0)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_COLUMN),
                    errmsg("column \"%s\" of relation %s does not exist", unit, name),
                    errhint("privacy_unit names the column that identifies the person (or other "
                            "unit) each row belongs to.")));
  Oid type = get_atttype(relid, attnum);
  if (!OidIsValid(lookup_type_cache(type, TYPECACHE_LT_OPR)->lt_opr))
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_FUNCTION),
                    errmsg("column \"%s\" has type %s, which has no ordering to group rows by",
                           unit, format_type_be(type))));
}

// Locks the budget row of `relid` (if any) and checks a change of its unit
// (dperm.set_budget's privacy_unit, max_rows_per_unit; nullptr/false keep
// them): a new unit needs max_rows_per_unit, max_rows_per_unit needs a
// unit, and the unit's column may change only before the first release
// charged to the relation (55000): those were private for the old unit
// only. The lock makes the check and the change atomic with the ledger
// writer's charges, which lock the same row. Returns the budget's unit and
// k (nullptr and 0: none).
void CheckUnitChange(Oid relid, const char* name, const char* unit, bool has_max_rows,
                     char** current_unit, int32* current_max_rows) {
  Oid types[1] = {OIDOID};
  Datum args[1] = {ObjectIdGetDatum(relid)};
  RunAsCatalogOwner(
      "SELECT b.privacy_unit::pg_catalog.text, b.max_rows_per_unit FROM dperm.budgets b"
      " WHERE b.relation::pg_catalog.oid OPERATOR(pg_catalog.=) $1 FOR UPDATE",
      1, types, args, nullptr, SPI_OK_SELECT, false);
  char* current =
      SPI_processed == 1 ? SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1) : nullptr;
  *current_unit = current;
  *current_max_rows =
      current == nullptr ? 0 : atoi(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2));
  if (unit != nullptr && current == nullptr && !has_max_rows)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("privacy_unit needs max_rows_per_unit"),
                    errhint("Say how many rows of one unit a release may read, e.g. "
                            "max_rows_per_unit => 20.")));
  if (unit == nullptr && current == nullptr && has_max_rows)
    ereport(
        ERROR,
        (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("max_rows_per_unit needs a privacy_unit"),
         errhint("Name the column that identifies the unit: privacy_unit => 'customer_id'.")));
  if (unit == nullptr || (current != nullptr && strcmp(current, unit) == 0)) return;
  RunAsCatalogOwner(
      "SELECT pg_catalog.count(*) FROM dperm.ledger l"
      " WHERE $1 OPERATOR(pg_catalog.=) ANY (l.relations::pg_catalog.oid[])",
      1, types, args, nullptr, SPI_OK_SELECT, true);
  bool isnull;
  int64 releases =
      DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  if (releases > 0)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("cannot make \"%s\" the privacy unit of %s: " INT64_FORMAT
                           " release(s) were already charged to it",
                           unit, name, releases),
                    errdetail("Those releases are private per %s only; the budget would count them "
                              "as if they were private per \"%s\".",
                              current == nullptr ? "row" : current, unit),
                    errhint("Declare the unit before the first release, or move the data to a new "
                            "relation with its own budget.")));
}

// Refuses to move a budget with a privacy unit to a relation without that
// column (the releases could not bound the units' rows).
void MovedUnitFits(Oid from, Oid to, const char* to_name) {
  Oid types[1] = {OIDOID};
  Datum args[1] = {ObjectIdGetDatum(from)};
  SPI_connect();
  RunAsCatalogOwner(
      "SELECT (pg_catalog.to_jsonb(b) OPERATOR(pg_catalog.->>) 'privacy_unit')"
      "  FROM dperm.budgets b WHERE b.relation::pg_catalog.oid OPERATOR(pg_catalog.=) $1",
      1, types, args, nullptr, SPI_OK_SELECT, true);
  char* unit =
      SPI_processed == 1 ? SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1) : nullptr;
  if (unit != nullptr) CheckUnitColumn(to, to_name, unit);
  SPI_finish();
}

}  // namespace

// The name of `relid` as the caller would write it (schema-qualified when
// not on its search_path).
static char* RelationDisplayName(Oid relid) {
  return DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(relid)));
}

// The display name of `relid`, which the caller must own (or be a
// superuser) to `action`.
char* OwnedRelation(Oid relid, const char* action) {
  if (get_rel_name(relid) == nullptr)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
                    errmsg("relation with OID %u does not exist", relid)));
  char* name = RelationDisplayName(relid);
  if (!pg_class_ownercheck(relid, GetUserId()))
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("must be owner of relation %s to %s", name, action)));
  return name;
}

}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.set_budget(relation regclass, epsilon float8, delta float8,
// accounting text, privacy_unit text, max_rows_per_unit int, units bigint):
// the owner of a relation (or a superuser) sets its total privacy budget,
// how releases compose against it, and the unit they are private for (a
// column naming the person; the row when none) with the rows each unit
// contributes, and may declare the number of units public (units => N, a
// fixed cohort; 0 withdraws the declaration): dperm.train then reads
// exactly N units and releases no count, private against one unit replaced
// (privacy_unit.cpp, RefuseUnitMismatch, states the argument).
DPERM_FUNCTION(dperm_set_budget) {
  for (int i = 0; i < 2; i++)
    if (PG_ARGISNULL(i))
      ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                      errmsg("relation and epsilon of a budget must not be NULL")));
  Oid relid = PG_GETARG_OID(0);
  double epsilon = PG_GETARG_FLOAT8(1);
  // delta NULL (the default) keeps the budget's delta; a new budget gets
  // kDefaultBudgetDelta, the delta the documentation recommends.
  bool has_delta = !PG_ARGISNULL(2);
  double delta = has_delta ? PG_GETARG_FLOAT8(2) : kDefaultBudgetDelta;
  // The 0.1.0 declaration has three arguments: its budgets compose by sums.
  // NULL keeps the budget's accounting ('rdp' for a new one).
  bool has_accounting = PG_NARGS() > 3;
  char* accounting = !has_accounting   ? pstrdup("basic")
                     : PG_ARGISNULL(3) ? nullptr
                                       : text_to_cstring(PG_GETARG_TEXT_PP(3));
  char* name = get_rel_name(relid);
  if (name == nullptr)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
                    errmsg("relation with OID %u does not exist", relid)));
  if (!pg_class_ownercheck(relid, GetUserId()))
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("must be owner of relation %s to set its privacy budget", name)));
  RefuseTemporary(relid, name);
  if (!std::isfinite(epsilon) || epsilon < 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("budget epsilon must be finite and >= 0, not %g", epsilon)));
  if (has_delta && !(delta >= 0 && delta < 1))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("budget delta must be in [0, 1), not %g", delta)));
  if (accounting != nullptr && strcmp(accounting, "rdp") != 0 && strcmp(accounting, "basic") != 0)
    ereport(
        ERROR,
        (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("unknown accounting \"%s\"", accounting),
         errhint("Valid values: rdp (Renyi DP composition, the default), basic (sums).")));
  // The privacy unit (dperm 0.7.0's declaration): NULL keeps the budget's.
  bool has_unit_arguments = PG_NARGS() > 5;
  char* unit =
      has_unit_arguments && !PG_ARGISNULL(4) ? text_to_cstring(PG_GETARG_TEXT_PP(4)) : nullptr;
  bool has_max_rows = has_unit_arguments && !PG_ARGISNULL(5);
  int32 max_rows = has_max_rows ? PG_GETARG_INT32(5) : 0;
  if (unit != nullptr) CheckUnitColumn(relid, name, unit);
  if (has_max_rows && (max_rows < 1 || max_rows > dperm::kMaxRowsPerUnit))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("max_rows_per_unit must be between 1 and %lld, not %d",
                           static_cast<long long>(dperm::kMaxRowsPerUnit), max_rows)));
  // The public number of units (this version's declaration): NULL keeps
  // the budget's, 0 withdraws it.
  const bool has_units_argument = PG_NARGS() > 6;
  const bool has_units = has_units_argument && !PG_ARGISNULL(6);
  const int64 units = has_units ? PG_GETARG_INT64(6) : 0;
  if (has_units && units < 0)
    ereport(
        ERROR,
        (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
         errmsg("units must be at least 1 (or 0 to withdraw the declaration), not " INT64_FORMAT,
                units)));
  // The catalog is writable by its owner only: write as the bootstrap
  // superuser once the ownership check has passed (search_path pinned, every
  // name qualified). An error restores the caller's identity on abort.
  Oid types[8] = {OIDOID, FLOAT8OID, FLOAT8OID, OIDOID, TEXTOID, TEXTOID, INT4OID, INT8OID};
  Datum args[8] = {ObjectIdGetDatum(relid),
                   Float8GetDatum(epsilon),
                   Float8GetDatum(delta),
                   ObjectIdGetDatum(GetUserId()),
                   accounting != nullptr ? CStringGetTextDatum(accounting) : (Datum)0,
                   unit != nullptr ? CStringGetTextDatum(unit) : (Datum)0,
                   Int32GetDatum(max_rows),
                   Int64GetDatum(units)};
  char nulls[8] = {' ',
                   ' ',
                   has_delta ? ' ' : 'n',
                   ' ',
                   accounting != nullptr ? ' ' : 'n',
                   unit != nullptr ? ' ' : 'n',
                   has_max_rows ? ' ' : 'n',
                   has_units ? ' ' : 'n'};
  const char* set_by = RoleColumnValue("budgets", "set_by", 4);
  const char* default_delta = psprintf("%.17g::pg_catalog.float8", kDefaultBudgetDelta);
  SPI_connect();
  if (has_unit_arguments) {
    // The row inserted must be whole: a missing half comes from the budget.
    char* current_unit;
    int32 current_max_rows;
    CheckUnitChange(relid, name, unit, has_max_rows, &current_unit, &current_max_rows);
    // (the budget's checks hold for the row inserted, before ON CONFLICT
    // keeps the budget's values: units need the unit).
    if (unit == nullptr && current_unit != nullptr)
      args[5] = CStringGetTextDatum(current_unit), nulls[5] = ' ';
    if (!has_max_rows && current_max_rows > 0)
      args[6] = Int32GetDatum(current_max_rows), nulls[6] = ' ';
    // Units are counted by the privacy unit's column: a budget of the row
    // has n public already (replace-one), and no count to spare.
    if (units > 0 && unit == nullptr && current_unit == nullptr)
      ereport(ERROR,
              (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("units needs a privacy_unit"),
               errdetail("A budget without a privacy unit protects rows, whose number a release "
                         "already treats as public."),
               errhint("Name the column that identifies the unit: privacy_unit => 'person_id', "
                       "max_rows_per_unit => 7, units => %lld.",
                       static_cast<long long>(units))));
  }
  const char* sql =
      has_accounting
          ? psprintf(
                "INSERT INTO dperm.budgets (relation, epsilon, delta, set_by, set_at, accounting)"
                " VALUES ($1::pg_catalog.regclass, $2, COALESCE($3, %s), %s, pg_catalog.now(),"
                "         COALESCE($5, 'rdp'))"
                " ON CONFLICT (relation) DO UPDATE SET epsilon = excluded.epsilon,"
                "   delta = COALESCE($3, budgets.delta), set_by = excluded.set_by, set_at = excluded.set_at,"
                "   accounting = COALESCE($5, budgets.accounting)",
                default_delta, set_by)
          : psprintf(
                "INSERT INTO dperm.budgets (relation, epsilon, delta, set_by, set_at)"
                " VALUES ($1::pg_catalog.regclass, $2, COALESCE($3, %s), %s, pg_catalog.now())"
                " ON CONFLICT (relation) DO UPDATE SET epsilon = excluded.epsilon,"
                "   delta = COALESCE($3, budgets.delta), set_by = excluded.set_by, set_at = excluded.set_at",
                default_delta, set_by);
  if (has_unit_arguments)
    sql = psprintf(
        "INSERT INTO dperm.budgets (relation, epsilon, delta, set_by, set_at, accounting,"
        "   privacy_unit, max_rows_per_unit)"
        " VALUES ($1::pg_catalog.regclass, $2, COALESCE($3, %s), %s, pg_catalog.now(),"
        "         COALESCE($5, 'rdp'), $6, $7)"
        " ON CONFLICT (relation) DO UPDATE SET epsilon = excluded.epsilon,"
        "   delta = COALESCE($3, budgets.delta), set_by = excluded.set_by, set_at = excluded.set_at,"
        "   accounting = COALESCE($5, budgets.accounting),"
        "   privacy_unit = COALESCE($6, budgets.privacy_unit),"
        "   max_rows_per_unit = COALESCE($7, budgets.max_rows_per_unit)",
        default_delta, set_by);
  if (has_units_argument)
    sql = psprintf(
        "INSERT INTO dperm.budgets (relation, epsilon, delta, set_by, set_at, accounting,"
        "   privacy_unit, max_rows_per_unit, units)"
        " VALUES ($1::pg_catalog.regclass, $2, COALESCE($3, %s), %s, pg_catalog.now(),"
        "         COALESCE($5, 'rdp'), $6, $7,"
        "         CASE WHEN $8 OPERATOR(pg_catalog.>) 0 THEN $8 END)"
        " ON CONFLICT (relation) DO UPDATE SET epsilon = excluded.epsilon,"
        "   delta = COALESCE($3, budgets.delta), set_by = excluded.set_by, set_at = excluded.set_at,"
        "   accounting = COALESCE($5, budgets.accounting),"
        "   privacy_unit = COALESCE($6, budgets.privacy_unit),"
        "   max_rows_per_unit = COALESCE($7, budgets.max_rows_per_unit),"
        "   units = CASE WHEN $8 IS NULL THEN budgets.units"
        "                WHEN $8 OPERATOR(pg_catalog.>) 0 THEN $8 END",
        default_delta, set_by);
  RunAsCatalogOwner(sql,
                    has_units_argument   ? 8
                    : has_unit_arguments ? 7
                    : has_accounting     ? 5
                                         : 4,
                    types, args, nulls, SPI_OK_INSERT, false);
  SPI_finish();
  PG_RETURN_VOID();
}

// dperm.move_budget(from_relation regclass, to_relation regclass): the owner
// of both (or a superuser) moves from_relation's budget to to_relation,
// which replaces it (the ETL reload: CREATE TABLE new AS ..., move, DROP
// old, RENAME): the budget row, every ledger charge (relations rewritten;
// relation_names keep the names released under; dperm.budget_totals is
// rebuilt by the ledger's triggers), the protection (re-applied to
// to_relation and its partitions, as dperm.protect does) and the named
// models trained on it. Refused when to_relation has a budget or ledger rows
// of its own (two histories are not merged) or is temporary. Both relations
// are locked ACCESS EXCLUSIVE until the end of the transaction: no release
// of either (or of from_relation's partitions) is in flight or starts before
// the move commits, and no release of from_relation is unbudgeted when the
// DROP runs in the same transaction.
DPERM_FUNCTION(dperm_move_budget) {
  if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
    ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                    errmsg("from_relation and to_relation must not be NULL")));
  Oid from = PG_GETARG_OID(0);
  Oid to = PG_GETARG_OID(1);
  // Ownership before any lock: a role may not lock others' relations.
  char* from_name = OwnedRelation(from, "move its privacy budget");
  char* to_name = OwnedRelation(to, "move a privacy budget to it");
  if (from == to)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("cannot move the privacy budget of %s to itself", from_name)));
  RefuseTemporary(to, to_name);
  // Releases hold ACCESS SHARE on what they read until they commit (a
  // release from a partition, on the partition only).
  LockRelationOid(from, AccessExclusiveLock);
  find_all_inheritors(from, AccessExclusiveLock, nullptr);
  LockRelationOid(to, AccessExclusiveLock);
  MovedUnitFits(from, to, to_name);
  if (get_rel_name(from) == nullptr || get_rel_name(to) == nullptr)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
                    errmsg("relation %s or %s was dropped concurrently", from_name, to_name)));

  SPI_connect();
  Oid types[2] = {OIDOID, OIDOID};
  Datum args[2] = {ObjectIdGetDatum(from), ObjectIdGetDatum(to)};
  // The budget row, locked against concurrent charges and set_budget.
  RunAsCatalogOwner(
      "SELECT 1 FROM dperm.budgets b"
      " WHERE b.relation::pg_catalog.oid OPERATOR(pg_catalog.=) $1 FOR UPDATE",
      1, types, args, nullptr, SPI_OK_SELECT, false);
  if (SPI_processed == 0)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                    errmsg("relation %s has no privacy budget to move", from_name),
                    errhint("dperm.budgets lists the budgeted relations.")));
  RunAsCatalogOwner(
      "SELECT EXISTS (SELECT 1 FROM dperm.budgets b"
      "                WHERE b.relation::pg_catalog.oid OPERATOR(pg_catalog.=) $2),"
      "       (SELECT pg_catalog.count(*) FROM dperm.ledger l"
      "         WHERE l.relations OPERATOR(pg_catalog.@>) ARRAY[$2::pg_catalog.regclass])",
      2, types, args, nullptr, SPI_OK_SELECT, true);
  bool isnull;
  bool to_budgeted =
      DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  int64 to_charges =
      DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
  if (to_budgeted)
    ereport(
        ERROR,
        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
         errmsg("relation %s already has a privacy budget", to_name),
         errdetail("A budget moves only to a relation without one; two budgets are never merged."),
         errhint("Move the budget of %s to a new copy of the data, or retire one of the "
                 "budgets with dperm.retire_budget first.",
                 from_name)));
  if (to_charges > 0)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("releases have been charged to relation %s already", to_name),
                    errdetail("%s has " INT64_FORMAT " ledger row(s); the ledger of %s cannot be "
                              "merged with them.",
                              to_name, to_charges, from_name),
                    errhint("Move the budget to a relation no release has read yet, e.g. a fresh "
                            "CREATE TABLE ... AS SELECT * FROM %s.",
                            from_name)));
  // The protection: re-applied to the new relation (and its partitions and
  // children) with the same analysts, before anything moves.
  RunAsCatalogOwner(
      "SELECT p.analysts FROM dperm.protected p"
      " WHERE p.relation::pg_catalog.oid OPERATOR(pg_catalog.=) $1",
      1, types, args, nullptr, SPI_OK_SELECT, true);
  if (SPI_processed == 1) {
    bool analysts_null;
    Datum analysts = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &analysts_null);
    ProtectRelation(to, analysts, analysts_null);
    RunAsCatalogOwner(
        "DELETE FROM dperm.protected"
        " WHERE relation::pg_catalog.oid OPERATOR(pg_catalog.=) $1",
        1, types, args, nullptr, SPI_OK_DELETE, false);
  }
  RunAsCatalogOwner(
      "UPDATE dperm.budgets SET relation = $2::pg_catalog.regclass"
      " WHERE relation::pg_catalog.oid OPERATOR(pg_catalog.=) $1",
      2, types, args, nullptr, SPI_OK_UPDATE, false);
  RunAsCatalogOwner(
      "UPDATE dperm.ledger SET relations = pg_catalog.array_replace(relations,"
      "         $1::pg_catalog.regclass, $2::pg_catalog.regclass)"
      " WHERE relations OPERATOR(pg_catalog.@>) ARRAY[$1::pg_catalog.regclass]",
      2, types, args, nullptr, SPI_OK_UPDATE, false);
  // The old relation and its partitions and children (which may stay, with
  // their protection) hold the moved budget's rows: their releases are
  // charged to to_relation (dperm.lineage), as are those of relations that
  // held from_relation's rows before.
  if (HasLineage()) {
    RunAsCatalogOwner(
        "INSERT INTO dperm.lineage (relation, ancestor, recorded_at)"
        " SELECT l.relation, $2::pg_catalog.regclass, pg_catalog.now()"
        "   FROM dperm.lineage l"
        "  WHERE l.ancestor::pg_catalog.oid OPERATOR(pg_catalog.=) $1"
        "    AND l.relation::pg_catalog.oid OPERATOR(pg_catalog.<>) $2"
        " ON CONFLICT DO NOTHING",
        2, types, args, nullptr, SPI_OK_INSERT, false);
    RecordLineage(from, list_make1_oid(to));
  }
  RunAsCatalogOwner(
      "UPDATE dperm.models SET"
      "   relation = CASE WHEN relation OPERATOR(pg_catalog.=) $1::pg_catalog.regclass"
      "                   THEN $2::pg_catalog.regclass ELSE relation END,"
      "   relations = pg_catalog.array_replace(relations, $1::pg_catalog.regclass,"
      "                                        $2::pg_catalog.regclass)"
      " WHERE relation OPERATOR(pg_catalog.=) $1::pg_catalog.regclass"
      "    OR relations OPERATOR(pg_catalog.@>) ARRAY[$1::pg_catalog.regclass]",
      2, types, args, nullptr, SPI_OK_UPDATE, false);
  SPI_finish();
  PG_RETURN_VOID();
}
