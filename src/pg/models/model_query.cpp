// Named models on a query (docs/user-guide.md, "Named models on a query"):
// dperm.train_model_query and a run of its specification (model_query_run.hpp).
//
// The query is part of the specification. What a version stores: the text
// as written (dperm.models.query), the private relation it resolved to
// (relation), and its canonical text (query_canonical: CanonicalQuerySource,
// every name qualified under search_path = pg_catalog, pg_temp and the
// other pinned settings; a view kept by name, so that each run reads and
// validates the view as it is then, its rights checked again). Every run -- the first, dperm.retrain and a
// schedule -- reads the canonical text, never the original again: a later
// search_path (the owner's, or pg_cron's) cannot make it read another
// object. Each run validates it again before anything is charged
// (AnalyseQueryInput, then dperm.train_query's own checks): the relation may
// have gained a budget or lost its protection for the caller, a lookup may
// have lost its unique key; a refusal there costs nothing and leaves no
// version (RunVersion). The versions of one name share the canonical text
// (CheckSameSpecification: 42710).
#include "dperm/options/options.hpp"

#include "guard/query_input.hpp"
#include "models/model_versions.hpp"
#include "models/model_registry.hpp"
#include "release/train_input.hpp"
#include "release/train_query.hpp"
#include "release/train_steps.hpp"
#include "types/options_pg.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
}

namespace dperm::pg {
namespace {

// The longest query text a model stores (each version keeps both texts).
constexpr size_t kMaxModelQueryBytes = 65536;

}  // namespace
}  // namespace dperm::pg

using namespace dperm::pg;

// dperm.train_model_query(name, query, features, label, loss, options) ->
// int: trains a new version of the caller's own model `name` on a query (as
// dperm.train_query) and returns its number. The query is validated here,
// as the caller with its search_path, before anything runs (an error here
// leaves no version); the version stores it with its canonical text.
DPERM_FUNCTION(dperm_train_model_query) {
  char* name = text_to_cstring(PG_GETARG_TEXT_PP(0));
  char* query_text = text_to_cstring(PG_GETARG_TEXT_PP(1));
  char* features = text_to_cstring(PG_GETARG_TEXT_PP(2));
  char* label = text_to_cstring(PG_GETARG_TEXT_PP(3));
  char* loss_name = text_to_cstring(PG_GETARG_TEXT_PP(4));
  Jsonb* options = PG_GETARG_JSONB_P(5);
  RequireModelCatalog();
  CheckModelName(name);
  if (strlen(query_text) > kMaxModelQueryBytes)
    ereport(ERROR,
            (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
             errmsg("the query of a named model may have at most %zu bytes", kMaxModelQueryBytes)));
  dperm::LossKind loss = ParseLossName(loss_name);
  ParsedOptions parsed = ParseOptionsJsonb(options);
  RunCore([&] { dperm::CheckOptionsForLoss(parsed.options, loss); });
  MemoryContext context = CurrentMemoryContext;
  SPI_connect();
  const QueryInput q = AnalyseQueryInput(query_text, IsPrivateQueryRelation);
  Oid features_type, label_type;
  QueryColumnTypes(q, features, label, &features_type, &label_type);
  TargetFor(loss, label_type, label, loss_name);
  char* canonical = MemoryContextStrdup(context, CanonicalQuerySource(q));
  const Oid relid = q.relid;
  SPI_finish();
  if (strlen(canonical) > kMaxModelQueryBytes)
    ereport(ERROR,
            (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
             errmsg("the query of a named model may have at most %zu bytes", kMaxModelQueryBytes),
             errdetail("Its canonical text has %zu.", strlen(canonical))));
  ModelSpec spec;
  spec.name = name;
  spec.owner = GetUserId();
  spec.relid = relid;
  spec.relation_name =
      psprintf("%s.%s", quote_identifier(get_namespace_name(get_rel_namespace(relid))),
               quote_identifier(get_rel_name(relid)));
  spec.features = features;
  spec.label = label;
  spec.loss = loss_name;
  spec.options = JsonbText(options);
  spec.query_text = query_text;
  spec.query = canonical;
  CheckSameSpecification(spec);
  PG_RETURN_INT32(static_cast<int32>(RunVersion(spec, nullptr)));
}
