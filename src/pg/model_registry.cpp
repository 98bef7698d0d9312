// Named models' catalog (docs/design.md section 7): looking a model up by
// name for the caller, and who may act on it.
//
// Model names belong to their owner, a role stored by OID (regrole): the key
// is (owner, name, version). A name resolves, for the caller, to its own
// model of that name, else to the one model of that name it may see, else
// (several roles' models visible) to an error naming them (ResolveOwner).
// Creating a model never depends on names other roles use, and a role
// created later under a dropped role's name does not inherit its models.
// What a caller may see of dperm.models is decided by its row-level
// security policy, which the lookups here run under (as the caller).
#include "internal_sql.hpp"
#include "model_registry.hpp"

extern "C" {
#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/dsm.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
}

namespace dperm::pg {
namespace {

// The owner of the model that `name` resolves to for the caller: its own
// model of that name, else the one role's among the models of that name it
// may see (row-level security applies: the lookup runs as the caller);
// InvalidOid if it sees none; 42725 if several roles' models are visible.
// Needs an SPI connection.
Oid ResolveOwner(const char* name) {
  Oid caller = GetUserId();
  Oid types[1] = {TEXTOID};
  Datum args[1] = {CStringGetTextDatum(name)};
  RunInternalSql(caller,
                 "SELECT DISTINCT m.owner::pg_catalog.oid, m.owner::pg_catalog.text"
                 "  FROM dperm.models m WHERE m.name OPERATOR(pg_catalog.=) $1 ORDER BY 2",
                 1, types, args, nullptr, SPI_OK_SELECT, true);
  uint64 n = SPI_processed;
  bool isnull;
  StringInfoData owners;
  initStringInfo(&owners);
  for (uint64 i = 0; i < n; i++) {
    Oid owner = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
    if (owner == caller) return owner;
    appendStringInfo(&owners, "%s%s", i > 0 ? ", " : "",
                     SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2));
  }
  if (n == 0) return InvalidOid;
  if (n == 1)
    return DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  ereport(ERROR, (errcode(ERRCODE_AMBIGUOUS_FUNCTION),
                  errmsg("model name \"%s\" is ambiguous", name),
                  errdetail("You have no model of that name, and you may see models of that name "
                            "owned by: %s.", owners.data),
                  errhint("Read the version you want from dperm.models (by owner, name and "
                          "version) and use its model column with dp_predict, or train a model "
                          "of your own under that name.")));
  pg_unreachable();
}

// The latest version of `owner`'s model `name`, if the caller may see it
// (row-level security applies: the lookup runs as the caller); false if not.
// Copies into `context`. Needs an SPI connection.
bool LookupModelOf(const char* name, Oid owner, ModelSpec* spec, MemoryContext context) {
  Oid types[2] = {TEXTOID, OIDOID};
  Datum args[2] = {CStringGetTextDatum(name), ObjectIdGetDatum(owner)};
  RunInternalSql(GetUserId(),
                 "SELECT m.relation::pg_catalog.oid, m.relation_name,"
                 "       m.features, m.label, m.loss, m.options::pg_catalog.text,"
                 "       m.feature_spec::pg_catalog.text"
                 "  FROM dperm.models m WHERE m.name OPERATOR(pg_catalog.=) $1"
                 "   AND m.owner OPERATOR(pg_catalog.=) $2"
                 " ORDER BY m.version DESC LIMIT 1",
                 2, types, args, nullptr, SPI_OK_SELECT, true);
  if (SPI_processed == 0) return false;
  HeapTuple row = SPI_tuptable->vals[0];
  TupleDesc desc = SPI_tuptable->tupdesc;
  bool isnull;
  spec->name = MemoryContextStrdup(context, name);
  spec->owner = owner;
  spec->relid = DatumGetObjectId(SPI_getbinval(row, desc, 1, &isnull));
  spec->relation_name = CopyValue(context, row, desc, 2);
  spec->features = CopyValue(context, row, desc, 3);
  spec->label = CopyValue(context, row, desc, 4);
  spec->loss = CopyValue(context, row, desc, 5);
  spec->options = CopyValue(context, row, desc, 6);
  spec->feature_spec = CopyValue(context, row, desc, 7);  // nullptr for NULL
  return true;
}

// Whether the caller acts for `owner` (by OID): is it, has its privileges,
// or is a superuser. Nobody but a superuser acts for a dropped role, nor
// does a new role that took its name.
bool ActsFor(Oid owner) {
  if (!OidIsValid(owner) || !SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(owner)))
    return superuser();
  return has_privs_of_role(GetUserId(), owner);
}

}  // namespace

// Refuses named models on a catalog from before 0.7.0 (owners stored by
// name), which this library would misread until ALTER EXTENSION UPDATE.
void RequireModelCatalog() {
  Oid nsp = get_namespace_oid("dperm", true);
  Oid rel = OidIsValid(nsp) ? get_relname_relid("models", nsp) : InvalidOid;
  AttrNumber att = OidIsValid(rel) ? get_attnum(rel, "owner") : InvalidAttrNumber;
  if (att != InvalidAttrNumber && get_atttype(rel, att) == REGROLEOID) return;
  ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                  errmsg("dperm's model catalog is older than its library"),
                  errhint("Run ALTER EXTENSION dperm UPDATE in this database.")));
}

void CheckModelName(const char* name) {
  if (name[0] == '\0' || strlen(name) > 200)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("a model name must have 1 to 200 bytes")));
}

char* CopyValue(MemoryContext context, HeapTuple row, TupleDesc desc, int column) {
  char* value = SPI_getvalue(row, desc, column);
  return value == nullptr ? nullptr : MemoryContextStrdup(context, value);
}

// The name of role `role`, or its OID in digits once it is dropped.
const char* RoleName(Oid role) {
  const char* name = GetUserNameFromId(role, true);
  return name != nullptr ? name : psprintf("%u", role);
}

// The latest version of the model `name` resolves to (or of `owner`'s
// model `name` when `owner` is valid) for an operation only its owner may
// run: 42704 if the caller sees no such model, 42501 if it does not act for
// the owner.
ModelSpec OwnedModel(const char* name, const char* operation, Oid owner) {
  RequireModelCatalog();
  MemoryContext context = CurrentMemoryContext;
  ModelSpec spec;
  SPI_connect();
  if (!OidIsValid(owner)) owner = ResolveOwner(name);
  bool found = OidIsValid(owner) && LookupModelOf(name, owner, &spec, context);
  SPI_finish();
  if (!found)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("model \"%s\" does not exist", name),
                    errhint("dperm.train_model creates a model; dperm.models lists the models "
                            "you may see.")));
  const char* owner_name = GetUserNameFromId(spec.owner, true);
  if (!ActsFor(spec.owner))
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("must be owner of model \"%s\" to %s it", name, operation),
                    owner_name != nullptr
                        ? errdetail("Model \"%s\" belongs to role %s.", name, owner_name)
                        : errdetail("Model \"%s\" belongs to a role that was dropped; a superuser "
                                    "can delete it from dperm.models.", name)));
  return spec;
}

// The schema of an installed extension, or nullptr. Needs SPI.
char* ExtensionSchema(const char* extension, MemoryContext context) {
  Oid types[1] = {TEXTOID};
  Datum args[1] = {CStringGetTextDatum(extension)};
  RunAsCatalogOwner("SELECT n.nspname::pg_catalog.text FROM pg_catalog.pg_extension e"
                    "  JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace"
                    " WHERE e.extname OPERATOR(pg_catalog.=) $1",
                    1, types, args, nullptr, SPI_OK_SELECT, true);
  return SPI_processed == 0 ? nullptr
                            : CopyValue(context, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
}

}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.model_owner(name) -> regrole: the owner of the model `name`
// resolves to for the caller (ResolveOwner), NULL when it sees none; the
// lookup of dperm.model, dperm.predict and dperm.retraining_forecast.
DPERM_FUNCTION(dperm_model_owner) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  RequireModelCatalog();
  SPI_connect();
  Oid owner = ResolveOwner(name);
  SPI_finish();
  if (!OidIsValid(owner)) PG_RETURN_NULL();
  PG_RETURN_OID(owner);
}
