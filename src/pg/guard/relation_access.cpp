// Who may read or see a relation, through its family (docs/design.md
// section 3, item 4): a budget or a protection on a parent covers its
// partitions and children, and what they held before a DETACH PARTITION, NO
// INHERIT or dperm.move_budget (dperm.lineage).
#include "base/internal_sql.hpp"
#include "guard/lineage.hpp"
#include "guard/relation_access.hpp"

extern "C" {
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/catalog.h"
#include "catalog/namespace.h"
#include "catalog/indexing.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
}

namespace dperm::pg {
namespace {

// Whether `role` is listed as an analyst of the protected relation `relid`
// (a NULL list admits every role). Needs an SPI connection.
bool FindProtection(Oid relid, Oid role, bool* allowed) {
  Oid types[2] = {OIDOID, OIDOID};
  Datum args[2] = {ObjectIdGetDatum(relid), ObjectIdGetDatum(role)};
  RunAsCatalogOwner(
      "SELECT p.analysts IS NULL OR EXISTS (SELECT 1 FROM pg_catalog.unnest(p.analysts) a"
      "   WHERE pg_catalog.pg_has_role($2, a::pg_catalog.oid, 'MEMBER'))"
      "  FROM dperm.protected p WHERE p.relation::pg_catalog.oid OPERATOR(pg_catalog.=) $1",
      2, types, args, nullptr, SPI_OK_SELECT, true);
  if (SPI_processed == 0) return false;
  bool isnull;
  *allowed = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  return true;
}

}  // namespace

List* AncestorsOf(Oid relid) {
  List* ancestors = NIL;
  List* pending = list_make1_oid(relid);
  Relation inherits = table_open(InheritsRelationId, AccessShareLock);
  while (pending != NIL) {
    Oid child = linitial_oid(pending);
    pending = list_delete_first(pending);
    ScanKeyData key;
    ScanKeyInit(&key, Anum_pg_inherits_inhrelid, BTEqualStrategyNumber, F_OIDEQ,
                ObjectIdGetDatum(child));
    SysScanDesc scan =
        systable_beginscan(inherits, InheritsRelidSeqnoIndexId, true, nullptr, 1, &key);
    HeapTuple tuple;
    while (HeapTupleIsValid(tuple = systable_getnext(scan))) {
      Oid parent = reinterpret_cast<Form_pg_inherits>(GETSTRUCT(tuple))->inhparent;
      if (parent != relid && !list_member_oid(ancestors, parent)) {
        ancestors = lappend_oid(ancestors, parent);
        pending = lappend_oid(pending, parent);
      }
    }
    systable_endscan(scan);
  }
  table_close(inherits, AccessShareLock);
  return LineageAncestors(relid, ancestors);
}

namespace {

// pg_class.relrowsecurity of `relid` (false once it is gone).
bool RowSecurityEnabled(Oid relid) {
  HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
  if (!HeapTupleIsValid(tuple)) return false;
  bool enabled = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relrowsecurity;
  ReleaseSysCache(tuple);
  return enabled;
}

}  // namespace

// Catalog data only (pg_class.relrowsecurity), so a refusal depends on no row.
Oid RowSecurityInFamily(Oid relid) {
  ListCell* lc;
  foreach (lc, find_all_inheritors(relid, AccessShareLock, nullptr))
    if (RowSecurityEnabled(lfirst_oid(lc))) return lfirst_oid(lc);
  foreach (lc, AncestorsOf(relid))
    if (RowSecurityEnabled(lfirst_oid(lc))) return lfirst_oid(lc);
  return InvalidOid;
}

bool MaySeeRelation(Oid relid, Oid role) {
  if (superuser_arg(role) || has_privs_of_role(role, ROLE_PG_READ_ALL_STATS)) return true;
  if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid))) return false;
  // A parent's readers read its partitions and children's rows.
  List* family = lcons_oid(relid, AncestorsOf(relid));
  ListCell* lc;
  foreach (lc, family) {
    Oid member = lfirst_oid(lc);
    HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(member));
    if (!HeapTupleIsValid(tuple)) continue;
    Oid owner = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relowner;
    ReleaseSysCache(tuple);
    bool missing = false;  // dropped meanwhile: no privilege, no error
    if (has_privs_of_role(role, owner) ||
        pg_class_aclcheck_ext(member, role, ACL_SELECT, &missing) == ACLCHECK_OK ||
        pg_attribute_aclcheck_all(member, role, ACL_SELECT, ACLMASK_ANY) == ACLCHECK_OK)
      return true;
  }
  bool allowed = false;
  SPI_connect();
  bool analyst = OidIsValid(ProtectionOf(relid, role, &allowed)) && allowed;
  SPI_finish();
  return analyst;
}

Oid ProtectionOf(Oid relid, Oid role, bool* allowed) {
  if (FindProtection(relid, role, allowed)) return relid;
  ListCell* lc;
  foreach (lc, AncestorsOf(relid))
    if (FindProtection(lfirst_oid(lc), role, allowed)) return lfirst_oid(lc);
  return InvalidOid;
}

Oid CheckDataset(const char* dataset, Oid role) {
  Oid relid = DatumGetObjectId(DirectFunctionCall1(regclassin, CStringGetDatum(dataset)));
  Oid nsp = get_rel_namespace(relid);
  char* nsp_name = get_namespace_name(nsp);
  // A catalog is nobody's dataset: charging it would only let anyone spend
  // a budget an administrator set there.
  if (IsCatalogRelationOid(relid) || IsCatalogNamespace(nsp) || IsToastNamespace(nsp) ||
      (nsp_name != nullptr && strcmp(nsp_name, "information_schema") == 0))
    ereport(
        ERROR,
        (errcode(ERRCODE_WRONG_OBJECT_TYPE),
         errmsg("option \"dataset\" cannot name the system relation %s", dataset),
         errhint("dataset names a relation whose rows reach the aggregate through a function.")));
  // Only what the releasing role may read: otherwise anyone could spend
  // anyone's budget.
  bool readable = pg_class_aclcheck(relid, role, ACL_SELECT) == ACLCHECK_OK ||
                  pg_attribute_aclcheck_all(relid, role, ACL_SELECT, ACLMASK_ANY) == ACLCHECK_OK;
  bool analyst = false;
  if (!readable && OidIsValid(ProtectionOf(relid, role, &analyst)) && analyst) readable = true;
  if (!readable)
    ereport(ERROR,
            (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
             errmsg("option \"dataset\" names %s, which role %s may not read", dataset,
                    GetUserNameFromId(role, false)),
             errhint("dataset charges a release to a relation the releasing role can SELECT, "
                     "or to a protected relation it is an analyst of.")));
  return relid;
}

}  // namespace dperm::pg
