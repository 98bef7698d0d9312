// Which relations a release reads and is charged to (docs/design.md section 3,
// item 4), protection lookups, and the `dataset` option's checks.
#include "internal_sql.hpp"
#include "relations.hpp"
#include "ledger_writer.hpp"

extern "C" {
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/catalog.h"
#include "catalog/namespace.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_rewrite.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
}

namespace dperm::pg {

ReleaseContext g_release;
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

Oid ReleasingRole() { return OidIsValid(g_release.caller) ? g_release.caller : GetUserId(); }

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
    SysScanDesc scan = systable_beginscan(inherits, InheritsRelidSeqnoIndexId, true, nullptr, 1, &key);
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
  return ancestors;
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
    ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                    errmsg("option \"dataset\" cannot name the system relation %s", dataset),
                    errhint("dataset names a relation whose rows reach the aggregate through a function.")));
  // Only what the releasing role may read: otherwise anyone could spend
  // anyone's budget.
  bool readable = pg_class_aclcheck(relid, role, ACL_SELECT) == ACLCHECK_OK ||
                  pg_attribute_aclcheck_all(relid, role, ACL_SELECT, ACLMASK_ANY) == ACLCHECK_OK;
  bool analyst = false;
  if (!readable && OidIsValid(ProtectionOf(relid, role, &analyst)) && analyst) readable = true;
  if (!readable)
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("option \"dataset\" names %s, which role %s may not read", dataset,
                           GetUserNameFromId(role, false)),
                    errhint("dataset charges a release to a relation the releasing role can SELECT, "
                            "or to a protected relation it is an analyst of.")));
  return relid;
}

// relids plus every ancestor of each (a budget on a parent covers releases
// that read its partitions or inheritance children directly), as a palloc'd
// array of at most kMaxRelations.
static Oid* WithAncestors(List* relids, int* count) {
  int read = list_length(relids);
  for (int i = 0; i < read; i++) {
    ListCell* lc;
    foreach (lc, AncestorsOf(list_nth_oid(relids, i)))
      relids = list_append_unique_oid(relids, lfirst_oid(lc));
  }
  if (list_length(relids) > kMaxRelations)
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("a release may read at most %d relations", kMaxRelations)));
  Oid* out = static_cast<Oid*>(palloc(sizeof(Oid) * Max(list_length(relids), 1)));
  int i = 0;
  ListCell* lc;
  foreach (lc, relids) out[i++] = lfirst_oid(lc);
  *count = i;
  return out;
}

List* EStateRelations(EState* estate) {
  List* relids = NIL;
  ListCell* lc;
  foreach (lc, estate->es_range_table) {
    RangeTblEntry* rte = lfirst_node(RangeTblEntry, lc);
    if (rte->rtekind == RTE_RELATION) relids = list_append_unique_oid(relids, rte->relid);
  }
  return relids;
}

List* RangeTableRelations(FunctionCallInfo fcinfo) {
  if (fcinfo->context != nullptr && IsA(fcinfo->context, AggState))
    return EStateRelations(reinterpret_cast<AggState*>(fcinfo->context)->ss.ps.state);
  return NIL;
}

// `relids` plus the `dataset` option's relation (resolved by dperm.train,
// or checked here for the releasing role), with every ancestor of each.
static Oid* WithDataset(List* relids, const char* dataset, int* count) {
  // `dataset` adds a relation to charge; it never removes inferred ones.
  // dperm.train resolved it under the caller's search_path already.
  if (OidIsValid(g_release.dataset)) {
    relids = list_append_unique_oid(relids, g_release.dataset);
  } else if (dataset != nullptr) {
    SPI_connect();
    relids = list_append_unique_oid(relids, CheckDataset(dataset, ReleasingRole()));
    SPI_finish();
  }
  return WithAncestors(relids, count);
}

Oid* RelationsRead(FunctionCallInfo fcinfo, const char* dataset, int* count) {
  return WithDataset(RangeTableRelations(fcinfo), dataset, count);
}

Oid* StatementRelations(EState* estate, const char* dataset, int* count) {
  return WithDataset(EStateRelations(estate), dataset, count);
}

// The rules of view `view` (its "_RETURN" rule, and any other), by OID.
static List* RulesOf(Oid view) {
  List* rules = NIL;
  Relation rewrite = table_open(RewriteRelationId, AccessShareLock);
  ScanKeyData key;
  ScanKeyInit(&key, Anum_pg_rewrite_ev_class, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(view));
  SysScanDesc scan = systable_beginscan(rewrite, RewriteRelRulenameIndexId, true, nullptr, 1, &key);
  HeapTuple tuple;
  while (HeapTupleIsValid(tuple = systable_getnext(scan)))
    rules = lappend_oid(rules, reinterpret_cast<Form_pg_rewrite>(GETSTRUCT(tuple))->oid);
  systable_endscan(scan);
  table_close(rewrite, AccessShareLock);
  return rules;
}

// Every relation (table, partitioned table, materialized view, foreign
// table, view) the rules of view `view` read, recursively through the views
// among them (pg_depend of each view's "_RETURN" rule), nearest first.
static List* ViewReads(Oid view) {
  List* read = NIL;
  List* pending = list_make1_oid(view);
  Relation depend = table_open(DependRelationId, AccessShareLock);
  while (pending != NIL) {
    Oid current = linitial_oid(pending);
    pending = list_delete_first(pending);
    ListCell* rule;
    foreach (rule, RulesOf(current)) {
      ScanKeyData keys[2];
      ScanKeyInit(&keys[0], Anum_pg_depend_classid, BTEqualStrategyNumber, F_OIDEQ,
                  ObjectIdGetDatum(RewriteRelationId));
      ScanKeyInit(&keys[1], Anum_pg_depend_objid, BTEqualStrategyNumber, F_OIDEQ,
                  ObjectIdGetDatum(lfirst_oid(rule)));
      SysScanDesc scan = systable_beginscan(depend, DependDependerIndexId, true, nullptr, 2, keys);
      HeapTuple tuple;
      while (HeapTupleIsValid(tuple = systable_getnext(scan))) {
        Form_pg_depend dep = reinterpret_cast<Form_pg_depend>(GETSTRUCT(tuple));
        Oid target = dep->refobjid;
        if (dep->refclassid != RelationRelationId || target == view || target == current ||
            list_member_oid(read, target))
          continue;
        // Only relations whose rows a query reads (a sequence or a type's
        // relation is named, not read).
        char kind = get_rel_relkind(target);
        if (kind != RELKIND_RELATION && kind != RELKIND_PARTITIONED_TABLE && kind != RELKIND_MATVIEW &&
            kind != RELKIND_FOREIGN_TABLE && kind != RELKIND_VIEW)
          continue;
        read = lappend_oid(read, target);
        if (kind == RELKIND_VIEW) pending = lappend_oid(pending, target);
      }
      systable_endscan(scan);
    }
  }
  table_close(depend, AccessShareLock);
  return read;
}

Oid* TrainRelations(Oid relid, Oid dataset, int* count) {
  List* relids = find_all_inheritors(relid, AccessShareLock, nullptr);
  // A view: every relation its body reads, through nested views, with their
  // partitions and inheritance children, as the rewritten query's range
  // table lists them (the view itself stays in it too).
  if (get_rel_relkind(relid) == RELKIND_VIEW) {
    ListCell* lc;
    foreach (lc, ViewReads(relid)) {
      ListCell* member;
      foreach (member, find_all_inheritors(lfirst_oid(lc), AccessShareLock, nullptr))
        relids = list_append_unique_oid(relids, lfirst_oid(member));
    }
  }
  if (OidIsValid(dataset)) relids = list_append_unique_oid(relids, dataset);
  return WithAncestors(relids, count);
}

}  // namespace dperm::pg
