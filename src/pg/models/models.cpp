// Named, versioned models (docs/design.md section 7): dperm.train_model,
// dperm.retrain and dperm.drop_model. A run and the version that records it
// are model_versions.cpp; scheduled retraining is model_cron.cpp.
//
// Like dperm.train these are C functions, not SECURITY DEFINER ones: they
// know their caller, train as the caller, and switch identity only for
// dperm's own catalog (internal_sql.cpp).
#include "dperm/model/feature_spec.hpp"
#include "dperm/options/options.hpp"

#include "types/feature_spec_pg.hpp"
#include "base/internal_sql.hpp"
#include "models/model_registry.hpp"
#include "models/model_schedule.hpp"
#include "models/model_versions.hpp"
#include "types/options_pg.hpp"
#include "release/train_input.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
}

using namespace dperm::pg;

// dperm.train_model(name, relation, features, label, loss, options) -> int:
// trains a new version of the caller's own model `name` (created if new,
// whatever models of that name other roles have) and returns its number. A
// failed run is recorded as a failed version, then its error is raised.
DPERM_FUNCTION(dperm_train_model) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  Oid relid = PG_GETARG_OID(1);
  RequireModelCatalog();
  CheckModelName(name);
  // The arguments are checked before anything runs: errors here leave no
  // version (failures of the run itself do).
  dperm::LossKind loss = ParseLossName(text_to_cstring(PG_GETARG_TEXT_PP(4)));
  char* relation_name = get_rel_name(relid);
  if (relation_name == nullptr)
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
                    errmsg("relation with OID %u does not exist", relid)));
  // features: a float8[] column, or a feature spec (jsonb) of raw columns,
  // checked against the relation here.
  const bool has_spec = get_fn_expr_argtype(fcinfo->flinfo, 2) == JSONBOID;
  char* spec_text = nullptr;
  char* label = text_to_cstring(PG_GETARG_TEXT_PP(3));
  ColumnType(relid, label);
  // The options as the run will see them: with a spec, its shape and label.
  Datum options = PG_GETARG_DATUM(5);
  if (has_spec) {
    SpecFeatures features = SpecFeaturesFor(relid, PG_GETARG_JSONB_P(2));
    if (features.spec->has_label) CheckSpecLabel(*features.spec, label, loss);
    options = WithSpecOptions(DatumGetJsonbP(options), *features.spec, loss);
    spec_text = JsonbText(PG_GETARG_JSONB_P(2));
  } else {
    ColumnType(relid, text_to_cstring(PG_GETARG_TEXT_PP(2)));
  }
  ParsedOptions parsed = ParseOptionsJsonb(DatumGetJsonbP(options));
  RunCore([&] { dperm::CheckOptionsForLoss(parsed.options, loss); });
  ModelSpec spec;
  spec.name = name;
  spec.owner = GetUserId();
  spec.relid = relid;
  spec.relation_name =
      psprintf("%s.%s", quote_identifier(get_namespace_name(get_rel_namespace(relid))),
               quote_identifier(relation_name));
  spec.features = has_spec ? spec_text : text_to_cstring(PG_GETARG_TEXT_PP(2));
  spec.feature_spec = spec_text;
  spec.label = label;
  spec.loss = text_to_cstring(PG_GETARG_TEXT_PP(4));
  spec.options = JsonbText(PG_GETARG_JSONB_P(5));
  CheckSameSpecification(spec);
  PG_RETURN_INT32(static_cast<int32>(RunVersion(spec, nullptr)));
}

// dperm.retrain(name [, owner regrole]) -> int: trains the next version of
// a model (the one `name` resolves to, or `owner`'s) from the specification
// of its latest version; for its owner only, checked by OID (a scheduled
// job runs dperm.retrain_on_schedule(name, owner), model_cron.cpp).
DPERM_FUNCTION(dperm_retrain) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  Oid owner = PG_NARGS() > 1 ? PG_GETARG_OID(1) : InvalidOid;
  if (PG_NARGS() > 1 && !OidIsValid(owner))
    ereport(ERROR,
            (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("model \"%s\" does not exist", name)));
  ModelSpec spec = OwnedModel(name, "retrain", owner);
  PG_RETURN_INT32(static_cast<int32>(RunVersion(spec, nullptr)));
}

// dperm.drop_model(name): drops every version of a model and its schedule
// (the pg_cron job too); the ledger keeps every charge.
DPERM_FUNCTION(dperm_drop_model) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  Oid owner = OwnedModel(name, "drop").owner;
  MemoryContext context = CurrentMemoryContext;
  SPI_connect();
  bool scheduled;
  int64 job = ScheduledJob(name, owner, &scheduled);
  char* cron = scheduled ? CronSchema(context) : nullptr;
  if (cron != nullptr && job >= 0) UnscheduleJob(cron, job);
  DeleteSchedule(name, owner);
  Oid types[2] = {TEXTOID, OIDOID};
  Datum args[2] = {CStringGetTextDatum(name), ObjectIdGetDatum(owner)};
  RunAsCatalogOwner(
      "DELETE FROM dperm.models WHERE name OPERATOR(pg_catalog.=) $1"
      " AND owner OPERATOR(pg_catalog.=) $2",
      2, types, args, nullptr, SPI_OK_DELETE, false);
  SPI_finish();
  PG_RETURN_VOID();
}
