// Protected relations (DESIGN.md trust model): the owner of a table protects
// it; analysts then lose direct SELECT and train through dperm.train, which
// reads the table as the catalog owner, charges it, and returns only a
// private model.
//
// dperm.train is a C function rather than a SECURITY DEFINER one so that it
// knows its caller: it checks the caller, records them as the releasing role
// in the ledger, and switches to the catalog owner only around the one query
// it builds itself (identifiers quoted, search_path pinned to pg_catalog).
#include "dperm/options.hpp"

#include "dperm_pg.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
}

namespace dperm::pg {
namespace {

// Runs `sql` through SPI as the bootstrap superuser with search_path =
// pg_catalog; the caller's identity comes back on return or on abort.
void RunAsCatalogOwner(const char* sql, int nargs, Oid* types, Datum* args,
                       const char* nulls, int expected, bool read_only) {
  Oid saved_user;
  int saved_context;
  GetUserIdAndSecContext(&saved_user, &saved_context);
  SetUserIdAndSecContext(BOOTSTRAP_SUPERUSERID,
                         saved_context | SECURITY_LOCAL_USERID_CHANGE);
  int level = NewGUCNestLevel();
  set_config_option("search_path", "pg_catalog", PGC_USERSET, PGC_S_SESSION,
                    GUC_ACTION_SAVE, true, 0, false);
  // Serial plans only: the release's role (g_release_role) lives in this
  // backend, and a parallel worker running the final function would not see it.
  set_config_option("max_parallel_workers_per_gather", "0", PGC_USERSET, PGC_S_SESSION,
                    GUC_ACTION_SAVE, true, 0, false);
  set_config_option("force_parallel_mode", "off", PGC_USERSET, PGC_S_SESSION,
                    GUC_ACTION_SAVE, true, 0, false);
  if (SPI_execute_with_args(sql, nargs, types, args, nulls, read_only, 0) != expected)
    elog(ERROR, "dperm: could not run \"%s\"", sql);
  AtEOXact_GUC(true, level);
  SetUserIdAndSecContext(saved_user, saved_context);
}

// The protection row of a relation: found, and whether `role` may train.
bool ProtectedFor(Oid relid, Oid role, bool* allowed) {
  Oid types[2] = {OIDOID, OIDOID};
  Datum args[2] = {ObjectIdGetDatum(relid), ObjectIdGetDatum(role)};
  RunAsCatalogOwner(
      "SELECT p.analysts IS NULL OR EXISTS (SELECT 1 FROM unnest(p.analysts) a"
      "   WHERE pg_has_role($2, a::oid, 'MEMBER'))"
      "  FROM dperm.protected p WHERE p.relation = $1::regclass",
      2, types, args, nullptr, SPI_OK_SELECT, true);
  if (SPI_processed == 0) return false;
  bool isnull;
  *allowed = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  return true;
}

// The type of a column of `relid` named exactly `name` (not dropped, not a
// system column), or an error naming both.
Oid ColumnType(Oid relid, const char* name) {
  AttrNumber attnum = get_attnum(relid, name);
  if (attnum <= 0)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_COLUMN),
                    errmsg("column \"%s\" of relation %s does not exist", name, get_rel_name(relid)),
                    errhint("dperm.train takes column names, not expressions.")));
  return get_atttype(relid, attnum);
}

}  // namespace
}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.protect(relation regclass, analysts regrole[] DEFAULT NULL): the
// owner (or a superuser) revokes every direct privilege on the relation and
// its columns from everyone but the owner, and lets `analysts` (NULL: every
// role) train on it through dperm.train.
DPERM_FUNCTION(dperm_protect) {
  if (PG_ARGISNULL(0))
    ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("relation must not be NULL")));
  Oid relid = PG_GETARG_OID(0);
  char* name = get_rel_name(relid);
  if (name == nullptr)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
                    errmsg("relation with OID %u does not exist", relid)));
  char kind = get_rel_relkind(relid);
  if (kind != RELKIND_RELATION && kind != RELKIND_PARTITIONED_TABLE && kind != RELKIND_MATVIEW)
    ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                    errmsg("%s is not a table or materialized view", name),
                    errhint("Protect the tables a view reads instead.")));
  if (!pg_class_ownercheck(relid, GetUserId()))
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("must be owner of relation %s to protect it", name)));
  SPI_connect();
  // Revoke table and column privileges of every grantee but the owner
  // (grants made by any grantor: CASCADE), then record the protection.
  Oid types[3] = {OIDOID, REGROLEARRAYOID, TEXTOID};
  Datum args[3] = {ObjectIdGetDatum(relid), PG_ARGISNULL(1) ? (Datum)0 : PG_GETARG_DATUM(1),
                   CStringGetTextDatum(GetUserNameFromId(GetUserId(), false))};
  char nulls[3] = {' ', PG_ARGISNULL(1) ? 'n' : ' ', ' '};
  RunAsCatalogOwner(
      "SELECT format('REVOKE ALL ON %s FROM %s CASCADE', $1::regclass,"
      "              CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END)"
      "  FROM pg_class c, aclexplode(c.relacl) a LEFT JOIN pg_roles r ON r.oid = a.grantee"
      " WHERE c.oid = $1 AND a.grantee <> c.relowner"
      " UNION"
      " SELECT format('REVOKE ALL (%I) ON %s FROM %s CASCADE', t.attname, $1::regclass,"
      "              CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END)"
      "  FROM pg_attribute t JOIN pg_class c ON c.oid = t.attrelid,"
      "       aclexplode(t.attacl) a LEFT JOIN pg_roles r ON r.oid = a.grantee"
      " WHERE t.attrelid = $1 AND a.grantee <> c.relowner",
      1, types, args, nullptr, SPI_OK_SELECT, true);
  uint64 n = SPI_processed;
  SPITupleTable* revokes = SPI_tuptable;
  for (uint64 i = 0; i < n; i++)
    RunAsCatalogOwner(SPI_getvalue(revokes->vals[i], revokes->tupdesc, 1), 0, nullptr, nullptr,
                      nullptr, SPI_OK_UTILITY, false);
  RunAsCatalogOwner(
      "INSERT INTO dperm.protected (relation, analysts, protected_by, protected_at)"
      " VALUES ($1::regclass, $2, $3::name, now())"
      " ON CONFLICT (relation) DO UPDATE SET analysts = excluded.analysts,"
      "   protected_by = excluded.protected_by, protected_at = excluded.protected_at",
      3, types, args, nulls, SPI_OK_INSERT, false);
  SPI_finish();
  PG_RETURN_VOID();
}

// dperm.train(relation regclass, features text, label text, loss text,
// options jsonb) -> dp_model: a private release from a protected relation,
// charged to it and recorded under the caller's name.
DPERM_FUNCTION(dperm_train) {
  Oid relid = PG_GETARG_OID(0);
  char* features = text_to_cstring(PG_GETARG_TEXT_PP(1));
  char* label = text_to_cstring(PG_GETARG_TEXT_PP(2));
  char* loss_name = text_to_cstring(PG_GETARG_TEXT_PP(3));
  Datum options = PG_GETARG_DATUM(4);
  Oid caller = GetUserId();
  char* name = get_rel_name(relid);
  if (name == nullptr)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
                    errmsg("relation with OID %u does not exist", relid)));
  dperm::LossKind loss = ParseLossName(loss_name);
  SPI_connect();
  bool allowed = false;
  if (!ProtectedFor(relid, caller, &allowed))
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("relation %s is not protected by dperm", name),
                    errhint("dperm.train reads protected relations only; train with dp_logreg, "
                            "dp_huber or dp_softmax on relations you can read, or ask the owner to "
                            "run dperm.protect.")));
  if (!allowed)
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("role %s may not train on %s", GetUserNameFromId(caller, false), name),
                    errhint("The owner lists the analysts of a protected relation with dperm.protect.")));
  Oid feature_type = ColumnType(relid, features);
  Oid label_type = ColumnType(relid, label);
  if (feature_type != FLOAT8ARRAYOID)
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("column \"%s\" must be float8[], not %s", features, format_type_be(feature_type))));
  // The label types each aggregate takes without a cast that could fail on
  // a value (an error would depend on the data).
  bool label_ok;
  const char* label_types;
  const char* aggregate;
  switch (loss) {
    case dperm::LossKind::kLogistic:
      label_ok = label_type == FLOAT8OID || label_type == BOOLOID;
      label_types = "boolean or float8";
      aggregate = "dp_logreg";
      break;
    case dperm::LossKind::kHuber:
      label_ok = label_type == FLOAT8OID;
      label_types = "float8";
      aggregate = "dp_huber";
      break;
    default:  // softmax: a class index; smallint widens to integer
      label_ok = label_type == INT4OID || label_type == INT2OID;
      label_types = "integer or smallint";
      aggregate = "dp_softmax";
      break;
  }
  if (!label_ok)
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("column \"%s\" has type %s; %s needs %s", label, format_type_be(label_type),
                           loss_name, label_types)));
  // Everything in the query is an identifier we quote or a parameter; the
  // aggregates live in the extension's schema.
  RunAsCatalogOwner(
      "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace"
      " WHERE e.extname = 'dperm'",
      0, nullptr, nullptr, nullptr, SPI_OK_SELECT, true);
  if (SPI_processed != 1) elog(ERROR, "dperm is not installed in this database");
  char* schema = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
  char* sql = psprintf("SELECT %s.%s(%s, %s, $1) FROM %s.%s", quote_identifier(schema),
                       aggregate,
                       quote_identifier(features), quote_identifier(label),
                       quote_identifier(get_namespace_name(get_rel_namespace(relid))),
                       quote_identifier(name));
  Oid types[1] = {JSONBOID};
  Datum args[1] = {options};
  Datum model = (Datum)0;
  bool isnull = true;
  PG_TRY();
  {
    g_release_role = caller;
    RunAsCatalogOwner(sql, 1, types, args, nullptr, SPI_OK_SELECT, false);
    g_release_role = InvalidOid;
  }
  PG_CATCH();
  {
    g_release_role = InvalidOid;
    PG_RE_THROW();
  }
  PG_END_TRY();
  if (SPI_processed == 1)
    model = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
  if (!isnull) model = SPI_datumTransfer(model, false, -1);
  SPI_finish();
  if (isnull) PG_RETURN_NULL();
  PG_RETURN_DATUM(model);
}
