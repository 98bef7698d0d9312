// The event trigger dperm.budgeted_alter: budgets and protection follow the
// rows through ALTER TABLE. A DETACH PARTITION or NO INHERIT records the
// relation's old ancestors in dperm.lineage (lineage.cpp), a protected
// relation joins only a protected parent, and a budget's privacy unit
// follows RENAME COLUMN.
#include "base/arrays.hpp"
#include "base/internal_sql.hpp"
#include "guard/lineage.hpp"
#include "guard/relation_access.hpp"

extern "C" {
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
}

namespace dperm::pg {
namespace {

// The name of `relid` as the caller would write it (schema-qualified when
// not on its search_path).
char* RelationDisplayName(Oid relid) {
  return DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(relid)));
}

// `parent` and every ancestor of it (pg_inherits and dperm.lineage).
List* ParentAndAncestors(Oid parent) { return lcons_oid(parent, AncestorsOf(parent)); }

// The relation a RangeVar of an ALTER TABLE names, or InvalidOid (the
// command itself reports a missing one).
Oid RelationOfCommand(RangeVar* rv) {
  return rv == nullptr ? InvalidOid : RangeVarGetRelid(rv, NoLock, true);
}

// RENAME COLUMN: a budget whose privacy unit is the renamed column, on the
// relation or (unless ONLY) a partition or child the rename recurses to,
// follows it to the new name in the same transaction (a column added later
// under the old name is not the unit). Only for the relation's owner: for
// anyone else the rename itself fails.
void FollowUnitRename(RenameStmt* stmt) {
  Oid relid = RelationOfCommand(stmt->relation);
  if (!OidIsValid(relid) || stmt->subname == nullptr || stmt->newname == nullptr ||
      !pg_class_ownercheck(relid, GetUserId()))
    return;
  List* family =
      stmt->relation->inh ? find_all_inheritors(relid, NoLock, nullptr) : list_make1_oid(relid);
  Oid* members = static_cast<Oid*>(palloc(sizeof(Oid) * list_length(family)));
  int n = 0;
  ListCell* lc;
  foreach (lc, family) members[n++] = lfirst_oid(lc);
  Oid types[3] = {OIDARRAYOID, TEXTOID, TEXTOID};
  Datum args[3] = {OidArrayDatum(members, n), CStringGetTextDatum(stmt->subname),
                   CStringGetTextDatum(stmt->newname)};
  SPI_connect();
  RunAsCatalogOwner(
      "SELECT 1 FROM pg_catalog.pg_attribute a"
      " WHERE a.attrelid OPERATOR(pg_catalog.=) 'dperm.budgets'::pg_catalog.regclass"
      "   AND a.attname OPERATOR(pg_catalog.=) 'privacy_unit' AND NOT a.attisdropped",
      0, nullptr, nullptr, nullptr, SPI_OK_SELECT, true);
  if (SPI_processed == 1)
    RunAsCatalogOwner(
        "UPDATE dperm.budgets SET privacy_unit = $3::pg_catalog.name"
        " WHERE relation::pg_catalog.oid OPERATOR(pg_catalog.=) ANY ($1)"
        "   AND privacy_unit OPERATOR(pg_catalog.=) $2::pg_catalog.name",
        3, types, args, nullptr, SPI_OK_UPDATE, false);
  SPI_finish();
}

// Whether `relid`, one of its ancestors (with dperm.lineage's) or one of its
// partitions or children is protected. Needs an SPI connection.
bool InProtectedFamily(Oid relid) {
  bool allowed;
  if (OidIsValid(ProtectionOf(relid, GetUserId(), &allowed))) return true;
  List* family = find_all_inheritors(relid, NoLock, nullptr);
  Oid* members = static_cast<Oid*>(palloc(sizeof(Oid) * list_length(family)));
  int n = 0;
  ListCell* lc;
  foreach (lc, family) members[n++] = lfirst_oid(lc);
  Oid types[1] = {OIDARRAYOID};
  Datum args[1] = {OidArrayDatum(members, n)};
  RunAsCatalogOwner(
      "SELECT 1 FROM dperm.protected p"
      " WHERE p.relation::pg_catalog.oid OPERATOR(pg_catalog.=) ANY ($1) LIMIT 1",
      1, types, args, nullptr, SPI_OK_SELECT, true);
  return SPI_processed > 0;
}

// ATTACH PARTITION and INHERIT: a protected relation (or one with a
// protected partition, child or former ancestor) may join only a protected
// family: whoever may read the new parent would read its rows through it,
// bypassing dperm.train (55000). Needs an SPI connection.
void RefuseUnprotectedParent(Oid child, Oid parent) {
  if (!InProtectedFamily(child)) return;
  bool allowed;
  if (OidIsValid(ProtectionOf(parent, GetUserId(), &allowed))) return;
  char* child_name = RelationDisplayName(child);
  char* parent_name = RelationDisplayName(parent);
  ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                  errmsg("cannot make the protected relation %s a partition or child of %s, "
                         "which is not protected",
                         child_name, parent_name),
                  errdetail("Roles that may read %s would read the protected rows through it, "
                            "without dperm.train and its budget.",
                            parent_name),
                  errhint("Protect %s first: SELECT dperm.protect('%s', analysts).", parent_name,
                          parent_name)));
}

// DETACH PARTITION (also CONCURRENTLY, FINALIZE) and NO INHERIT: the
// relation that leaves keeps its old parent and the parent's ancestors
// (dperm.lineage) for its budgets and protection. ATTACH PARTITION and
// INHERIT: RefuseUnprotectedParent.
void FollowAlterTable(AlterTableStmt* stmt) {
  Oid relid = RelationOfCommand(stmt->relation);
  if (!OidIsValid(relid)) return;
  ListCell* lc;
  bool connected = false;
  foreach (lc, stmt->cmds) {
    AlterTableCmd* cmd = lfirst_node(AlterTableCmd, lc);
    Oid child = InvalidOid, parent = InvalidOid;
    if ((cmd->subtype == AT_DetachPartition || cmd->subtype == AT_DetachPartitionFinalize) &&
        cmd->def != nullptr && IsA(cmd->def, PartitionCmd)) {
      child = RelationOfCommand(reinterpret_cast<PartitionCmd*>(cmd->def)->name);
      parent = relid;
    } else if (cmd->subtype == AT_DropInherit && cmd->def != nullptr && IsA(cmd->def, RangeVar)) {
      child = relid;
      parent = RelationOfCommand(reinterpret_cast<RangeVar*>(cmd->def));
    }
    bool joins = false;
    if (cmd->subtype == AT_AttachPartition && cmd->def != nullptr && IsA(cmd->def, PartitionCmd)) {
      child = RelationOfCommand(reinterpret_cast<PartitionCmd*>(cmd->def)->name);
      parent = relid;
      joins = true;
    } else if (cmd->subtype == AT_AddInherit && cmd->def != nullptr && IsA(cmd->def, RangeVar)) {
      child = relid;
      parent = RelationOfCommand(reinterpret_cast<RangeVar*>(cmd->def));
      joins = true;
    }
    if (!OidIsValid(child) || !OidIsValid(parent)) continue;
    if (!connected) SPI_connect(), connected = true;
    if (joins) {
      // Only for the owner of both: for anyone else the command fails.
      if (pg_class_ownercheck(child, GetUserId()) && pg_class_ownercheck(parent, GetUserId()))
        RefuseUnprotectedParent(child, parent);
    } else {
      RecordLineage(child, ParentAndAncestors(parent));
    }
  }
  if (connected) SPI_finish();
}

}  // namespace
}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.budgeted_alter(): the ddl_command_start event trigger of ALTER TABLE,
// ALTER FOREIGN TABLE, ALTER VIEW and ALTER MATERIALIZED VIEW. Budgets and
// protection follow the rows: a partition detached or a child disinherited
// keeps its old ancestors (dperm.lineage, read by AncestorsOf), a protected
// relation joins only a protected parent, and a budget's privacy unit
// follows a RENAME COLUMN. Writes as the catalog owner, in the command's
// transaction: if the command fails, nothing is recorded.
DPERM_FUNCTION(dperm_budgeted_alter) {
  if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
    ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
                    errmsg("dperm.budgeted_alter() is an event trigger function")));
  Node* stmt = reinterpret_cast<EventTriggerData*>(fcinfo->context)->parsetree;
  if (stmt == nullptr || !HasLineage()) PG_RETURN_VOID();
  if (IsA(stmt, AlterTableStmt)) {
    FollowAlterTable(reinterpret_cast<AlterTableStmt*>(stmt));
  } else if (IsA(stmt, RenameStmt)) {
    RenameStmt* rename = reinterpret_cast<RenameStmt*>(stmt);
    if (rename->renameType == OBJECT_COLUMN && rename->relation != nullptr)
      FollowUnitRename(rename);
  }
  PG_RETURN_VOID();
}
