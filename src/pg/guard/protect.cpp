// Protected relations (docs/design.md section 6): the owner of a table
// protects it; analysts then lose direct SELECT and train through
// dperm.train (train_pg.cpp), which reads the table as its owner, charges
// it, and returns only a private model. Reading as the owner would evaluate
// row-level security policies for the owner, not the analyst: a relation
// with row-level security enabled in its family is neither protected nor
// read through its protection (RefuseRowSecurity).
#include "dperm/options/options.hpp"

#include "base/arrays.hpp"
#include "base/internal_sql.hpp"
#include "guard/protect.hpp"
#include "guard/relation_access.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
}

namespace dperm::pg {
namespace {

// The views and materialized views that read one of `relations` (directly
// or through other views) and whose rows a role other than `owner` can
// still read once the relations' own privileges are revoked: every
// materialized view another role owns or may SELECT (it holds a copy of the
// rows), and every view that runs with its owner's rights where that owner is
// `owner` or a superuser and another role may SELECT it. A comma-separated
// list, or nullptr. Needs an SPI connection.
char* ExposingViews(List* relations, Oid owner) {
  Oid types[2] = {OIDARRAYOID, OIDOID};
  Oid* oids = static_cast<Oid*>(palloc(sizeof(Oid) * Max(list_length(relations), 1)));
  int n = 0;
  ListCell* lc;
  foreach (lc, relations) oids[n++] = lfirst_oid(lc);
  Datum args[2] = {OidArrayDatum(oids, n), ObjectIdGetDatum(owner)};
  RunAsCatalogOwner(
      "WITH RECURSIVE readers(oid) AS ("
      "  SELECT r.ev_class FROM pg_catalog.pg_depend d"
      "    JOIN pg_catalog.pg_rewrite r ON r.oid OPERATOR(pg_catalog.=) d.objid"
      "   WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass"
      "     AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass"
      "     AND d.refobjid OPERATOR(pg_catalog.=) ANY ($1)"
      "     AND r.ev_class OPERATOR(pg_catalog.<>) ALL ($1)"
      "  UNION"
      "  SELECT r.ev_class FROM readers v"
      "    JOIN pg_catalog.pg_depend d ON d.refobjid OPERATOR(pg_catalog.=) v.oid"
      "     AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass"
      "     AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass"
      "    JOIN pg_catalog.pg_rewrite r ON r.oid OPERATOR(pg_catalog.=) d.objid"
      "   WHERE r.ev_class OPERATOR(pg_catalog.<>) v.oid)"
      " SELECT pg_catalog.string_agg(c.oid::pg_catalog.regclass::pg_catalog.text, ', '"
      "                              ORDER BY c.oid::pg_catalog.regclass::pg_catalog.text)"
      "   FROM readers v JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) v.oid"
      "  WHERE (c.relkind OPERATOR(pg_catalog.=) 'm' AND c.relowner OPERATOR(pg_catalog.<>) $2)"
      "     OR ((c.relkind OPERATOR(pg_catalog.=) 'm'"
      "          OR c.relowner OPERATOR(pg_catalog.=) $2"
      "          OR (SELECT a.rolsuper FROM pg_catalog.pg_authid a"
      "               WHERE a.oid OPERATOR(pg_catalog.=) c.relowner))"
      "         AND EXISTS (SELECT 1 FROM pg_catalog.aclexplode(c.relacl) g"
      "                      WHERE g.grantee OPERATOR(pg_catalog.<>) $2"
      "                        AND g.privilege_type OPERATOR(pg_catalog.=) 'SELECT'))",
      2, types, args, nullptr, SPI_OK_SELECT, true);
  bool isnull;
  Datum list = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
  return isnull ? nullptr : TextDatumGetCString(list);
}

// Revokes every table and column privilege on `relid` from every grantee but
// its owner (grants made by any grantor: CASCADE). Needs an SPI connection.
void RevokeAll(Oid relid) {
  Oid types[1] = {OIDOID};
  Datum args[1] = {ObjectIdGetDatum(relid)};
  RunAsCatalogOwner(
      "SELECT pg_catalog.format('REVOKE ALL ON %s FROM %s CASCADE', $1::pg_catalog.regclass,"
      "         CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'"
      "              ELSE pg_catalog.quote_ident(r.rolname) END)"
      "  FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a"
      "  LEFT JOIN pg_catalog.pg_authid r ON r.oid OPERATOR(pg_catalog.=) a.grantee"
      " WHERE c.oid OPERATOR(pg_catalog.=) $1 AND a.grantee OPERATOR(pg_catalog.<>) c.relowner"
      " UNION"
      " SELECT pg_catalog.format('REVOKE ALL (%I) ON %s FROM %s CASCADE', t.attname,"
      "         $1::pg_catalog.regclass,"
      "         CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'"
      "              ELSE pg_catalog.quote_ident(r.rolname) END)"
      "  FROM pg_catalog.pg_attribute t"
      "  JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) t.attrelid,"
      "       pg_catalog.aclexplode(t.attacl) a"
      "  LEFT JOIN pg_catalog.pg_authid r ON r.oid OPERATOR(pg_catalog.=) a.grantee"
      " WHERE t.attrelid OPERATOR(pg_catalog.=) $1 AND a.grantee OPERATOR(pg_catalog.<>) c.relowner",
      1, types, args, nullptr, SPI_OK_SELECT, true);
  uint64 n = SPI_processed;
  SPITupleTable* revokes = SPI_tuptable;
  for (uint64 i = 0; i < n; i++)
    RunAsCatalogOwner(SPI_getvalue(revokes->vals[i], revokes->tupdesc, 1), 0, nullptr, nullptr,
                      nullptr, SPI_OK_UTILITY, false);
}

}  // namespace

// Locks `relid` against concurrent DDL for the rest of the transaction and
// checks, now, that it is a table, a partitioned table or a materialized
// view (a table can become a view through a "_RETURN" rule), or, when
// `view_allowed` (dperm.train reading as the caller), a view. Returns its
// name and owner.
char* LockReadableRelation(Oid relid, Oid* owner, bool view_allowed) {
  LockRelationOid(relid, AccessShareLock);
  HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
  if (!HeapTupleIsValid(tuple))
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
                    errmsg("relation with OID %u does not exist", relid)));
  Form_pg_class form = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple));
  char kind = form->relkind;
  char* name = pstrdup(NameStr(form->relname));
  *owner = form->relowner;
  ReleaseSysCache(tuple);
  if (view_allowed && kind == RELKIND_VIEW) return name;
  if (kind != RELKIND_RELATION && kind != RELKIND_PARTITIONED_TABLE && kind != RELKIND_MATVIEW)
    ereport(
        ERROR,
        (errcode(ERRCODE_WRONG_OBJECT_TYPE),
         errmsg(view_allowed ? "%s is not a table, materialized view or view"
                             : "%s is not a table or materialized view",
                name),
         errhint(view_allowed ? "dperm.train reads tables, partitioned tables, materialized views "
                                "and views."
                              : "dperm protects tables, partitioned tables and materialized "
                                "views; protect the tables a view reads instead.")));
  return name;
}

void RefuseRowSecurity(Oid relid, const char* name, bool protecting) {
  Oid rls = RowSecurityInFamily(relid);
  if (!OidIsValid(rls)) return;
  char* rls_name = get_rel_name(rls);
  const char* why =
      "dperm reads a protected relation as its owner, so row-level security policies would be "
      "evaluated for the owner, not for the analyst (the owner's rows, the analyst's settings).";
  const char* what =
      "Keep one table per tenant and protect each, or grant the analysts SELECT without "
      "dperm.protect: dperm.train then reads the relation with their own rights and the "
      "policies apply to them.";
  if (protecting)
    ereport(ERROR,
            (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
             errmsg("cannot protect %s: row-level security is enabled on %s", name, rls_name),
             errdetail("%s", why), errhint("%s", what)));
  ereport(ERROR,
          (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
           errmsg("cannot read the protected relation %s: row-level security is enabled on %s",
                  name, rls_name),
           errdetail("%s Nothing was charged.", why),
           errhint("The owner can disable row-level security on %s. %s", rls_name, what)));
}

void ProtectRelation(Oid relid, Datum analysts, bool analysts_null) {
  Oid owner;
  char* name = LockReadableRelation(relid, &owner, false);
  RefuseRowSecurity(relid, name, true);
  // The relation first, then every partition and inheritance child.
  List* family = find_all_inheritors(relid, AccessShareLock, nullptr);
  SPI_connect();
  char* views = ExposingViews(family, owner);
  if (views != nullptr)
    ereport(ERROR, (errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
                    errmsg("cannot protect %s: views or materialized views expose its rows", name),
                    errdetail("Other roles can read the rows of %s through: %s.", name, views),
                    errhint("Revoke SELECT on them from every other role, drop them, or make the "
                            "views security_invoker; then protect %s again.",
                            name)));
  Oid types[3] = {OIDOID, REGROLEARRAYOID, OIDOID};
  Datum args[3] = {(Datum)0, analysts, ObjectIdGetDatum(GetUserId())};
  char nulls[3] = {' ', analysts_null ? 'n' : ' ', ' '};
  char* sql = psprintf(
      "INSERT INTO dperm.protected (relation, analysts, protected_by, protected_at)"
      " VALUES ($1::pg_catalog.regclass, $2, %s, pg_catalog.now())"
      " ON CONFLICT (relation) DO UPDATE SET analysts = excluded.analysts,"
      "   protected_by = excluded.protected_by, protected_at = excluded.protected_at",
      RoleColumnValue("protected", "protected_by", 3));
  ListCell* lc;
  foreach (lc, family) {
    RevokeAll(lfirst_oid(lc));
    args[0] = ObjectIdGetDatum(lfirst_oid(lc));
    RunAsCatalogOwner(sql, 3, types, args, nulls, SPI_OK_INSERT, false);
  }
  SPI_finish();
}

}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.protect(relation regclass, analysts regrole[] DEFAULT NULL): the
// owner (or a superuser) revokes every direct privilege on the relation, its
// partitions and inheritance children, and their columns from everyone but
// their owners, and lets `analysts` (NULL: every role) train on them through
// dperm.train. Refused while a view or materialized view exposes the rows,
// or while row-level security is enabled in the relation's family.
DPERM_FUNCTION(dperm_protect) {
  if (PG_ARGISNULL(0))
    ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("relation must not be NULL")));
  Oid relid = PG_GETARG_OID(0);
  Oid owner;
  char* name = LockReadableRelation(relid, &owner, false);
  if (!pg_class_ownercheck(relid, GetUserId()))
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("must be owner of relation %s to protect it", name)));
  ProtectRelation(relid, PG_ARGISNULL(1) ? (Datum)0 : PG_GETARG_DATUM(1), PG_ARGISNULL(1));
  PG_RETURN_VOID();
}
