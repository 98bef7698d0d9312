// Named models' catalog (docs/design.md section 7): looking a model up by
// name for the caller, and who may act on it.
//
// Model names belong to their owner, a role stored by OID (regrole): the key
// is (owner, name, version). A name resolves, for the caller, to its own
// model of that name, else by tiers of trust that a role with no grants
// cannot climb (ResolveOwner).
// Creating a model never depends on names other roles use, and a role
// created later under a dropped role's name does not inherit its models.
// What a caller may see of dperm.models is decided by its row-level
// security policy, which the lookups here run under (as the caller).
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"

#include "base/internal_sql.hpp"
#include "ledger/charge.hpp"
#include "models/model_registry.hpp"

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

// The owner of the model that `name` resolves to for the caller (RLS
// applies: the lookup runs as the caller), by the first tier that holds a
// model of that name the caller may see:
//   0. its own;
//   1. of a role whose privileges it has through role memberships, not
//      counting a membership a role granted itself (before PostgreSQL 16 a
//      login role may grant itself to any role: GRANT me TO you);
//   2. trained by a role with the privileges of its relation's owner on a
//      permanent relation (the data owner's model);
//   3. any other.
// InvalidOid if it sees none; 42725 if the first such tier holds several
// roles' models. So a role that creates a model under a name another uses
// changes no resolution of a caller whose model sits in a lower tier: a
// role with no grants has only temporary relations, and others' relations
// it reads but does not own (tier 3). Needs an SPI connection.
Oid ResolveOwner(const char* name) {
  Oid caller = GetUserId();
  Oid types[2] = {TEXTOID, OIDOID};
  Datum args[2] = {CStringGetTextDatum(name), ObjectIdGetDatum(caller)};
  RunInternalSql(
      caller,
      "WITH RECURSIVE trusted(r) AS ("
      "  SELECT $2"
      "  UNION"
      "  SELECT a.roleid FROM pg_catalog.pg_auth_members a"
      "    JOIN trusted t ON a.member OPERATOR(pg_catalog.=) t.r"
      "    JOIN pg_catalog.pg_roles x ON x.oid OPERATOR(pg_catalog.=) t.r"
      "   WHERE x.rolinherit AND a.grantor OPERATOR(pg_catalog.<>) a.roleid)"
      "SELECT m.owner::pg_catalog.oid, m.owner::pg_catalog.text,"
      "       pg_catalog.min(CASE"
      "         WHEN m.owner::pg_catalog.oid OPERATOR(pg_catalog.=) $2 THEN 0"
      "         WHEN m.owner::pg_catalog.oid IN (SELECT r FROM trusted) THEN 1"
      "         WHEN c.relpersistence OPERATOR(pg_catalog.=) 'p'"
      "          AND EXISTS (SELECT 1 FROM pg_catalog.pg_roles o"
      "                       WHERE o.oid OPERATOR(pg_catalog.=) m.owner::pg_catalog.oid)"
      "          AND pg_catalog.pg_has_role(m.owner::pg_catalog.oid, c.relowner, 'USAGE') THEN 2"
      "         ELSE 3 END) AS tier"
      "  FROM dperm.models m"
      "  LEFT JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) m.relation::pg_catalog.oid"
      " WHERE m.name OPERATOR(pg_catalog.=) $1"
      " GROUP BY 1, 2 ORDER BY 3, 2",
      2, types, args, nullptr, SPI_OK_SELECT, true);
  uint64 n = SPI_processed;
  if (n == 0) return InvalidOid;
  bool isnull;
  const auto tier = [](uint64 i) {
    bool null;
    return DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 3, &null));
  };
  const int best = tier(0);
  uint64 tied = 1;
  while (tied < n && tier(tied) == best) tied++;
  if (tied == 1)
    return DatumGetObjectId(
        SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  StringInfoData owners;
  initStringInfo(&owners);
  for (uint64 i = 0; i < tied; i++)
    appendStringInfo(&owners, "%s%s", i > 0 ? ", " : "",
                     SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2));
  ereport(ERROR,
          (errcode(ERRCODE_AMBIGUOUS_FUNCTION), errmsg("model name \"%s\" is ambiguous", name),
           errdetail("You have no model of that name, and you may see models of that name "
                     "owned by: %s.",
                     owners.data),
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
                 "       m.feature_spec::pg_catalog.text, m.query, m.query_canonical"
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
  spec->query_text = CopyValue(context, row, desc, 8);
  spec->query = CopyValue(context, row, desc, 9);
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
// The versions of one name share their relation, columns, loss and query
// (the canonical text: two spellings of one query are one specification).
void CheckSameSpecification(const ModelSpec& spec) {
  Oid types[2] = {TEXTOID, OIDOID};
  Datum args[2] = {CStringGetTextDatum(spec.name), ObjectIdGetDatum(spec.owner)};
  MemoryContext context = CurrentMemoryContext;
  SPI_connect();
  RunAsCatalogOwner(
      "SELECT m.relation::pg_catalog.oid, m.relation_name, m.features, m.label, m.loss,"
      "       m.query_canonical"
      "  FROM dperm.models m WHERE m.name OPERATOR(pg_catalog.=) $1"
      "   AND m.owner OPERATOR(pg_catalog.=) $2"
      " ORDER BY m.version DESC LIMIT 1",
      2, types, args, nullptr, SPI_OK_SELECT, true);
  bool exists = SPI_processed > 0;
  Oid relid = InvalidOid;
  char *relation_name = nullptr, *features = nullptr, *label = nullptr, *loss = nullptr;
  char* query = nullptr;
  if (exists) {
    HeapTuple row = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    bool isnull;
    relid = DatumGetObjectId(SPI_getbinval(row, desc, 1, &isnull));
    relation_name = CopyValue(context, row, desc, 2);
    features = CopyValue(context, row, desc, 3);
    label = CopyValue(context, row, desc, 4);
    loss = CopyValue(context, row, desc, 5);
    query = CopyValue(context, row, desc, 6);
  }
  SPI_finish();
  if (!exists) return;
  const bool same_query =
      (query == nullptr && spec.query == nullptr) ||
      (query != nullptr && spec.query != nullptr && strcmp(query, spec.query) == 0);
  if (relid == spec.relid && strcmp(features, spec.features) == 0 &&
      strcmp(label, spec.label) == 0 && strcmp(loss, spec.loss) == 0 && same_query)
    return;
  if (relid == spec.relid && strcmp(features, spec.features) == 0 &&
      strcmp(label, spec.label) == 0 && strcmp(loss, spec.loss) == 0 && query != nullptr &&
      spec.query != nullptr)
    ereport(ERROR, (errcode(ERRCODE_DUPLICATE_OBJECT),
                    errmsg("model \"%s\" already exists with another specification", spec.name),
                    errdetail("Its versions train on the query\n%s\nthis call asks for\n%s",
                              CappedText(query, kMaxLedgerQueryBytes),
                              CappedText(spec.query, kMaxLedgerQueryBytes)),
                    errhint("Versions of one name share their query (as written with every name "
                            "qualified, dperm.models.query_canonical), relation, columns and "
                            "loss. Drop the model first with dperm.drop_model (the ledger keeps "
                            "its charges), or choose another name.")));
  ereport(ERROR, (errcode(ERRCODE_DUPLICATE_OBJECT),
                  errmsg("model \"%s\" already exists with another specification", spec.name),
                  errdetail("Its versions train loss %s on %s %s, features \"%s\", label "
                            "\"%s\"; this call asks for loss %s on %s %s, features \"%s\", "
                            "label \"%s\".",
                            loss, query != nullptr ? "a query of relation" : "relation",
                            relation_name, features, label, spec.loss,
                            spec.query != nullptr ? "a query of relation" : "relation",
                            spec.relation_name, spec.features, spec.label),
                  errhint("Versions of one name share their relation, columns and loss, so that "
                          "they stay comparable. Drop the model first with dperm.drop_model (the "
                          "ledger keeps its charges), or choose another name.")));
}

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
                                    "can delete it from dperm.models.",
                                    name)));
  return spec;
}

// The schema of an installed extension, or nullptr. Needs SPI.
char* ExtensionSchema(const char* extension, MemoryContext context) {
  Oid types[1] = {TEXTOID};
  Datum args[1] = {CStringGetTextDatum(extension)};
  RunAsCatalogOwner(
      "SELECT n.nspname::pg_catalog.text FROM pg_catalog.pg_extension e"
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
