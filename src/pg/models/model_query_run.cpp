// One run of a named model on a query (model_query_run.hpp); the model's
// specification and what a run re-validates: model_query.cpp.
#include "dperm/options/options.hpp"

#include "base/internal_sql.hpp"
#include "guard/query_input.hpp"
#include "models/model_query_run.hpp"
#include "release/train_query.hpp"
#include "release/train_steps.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
}

namespace dperm::pg {
char* TrainQueryOnce(const ModelSpec& spec, MemoryContext context) {
  Oid caller = GetUserId();
  SPI_connect();
  // Validated again as it was deparsed: the same names, whatever the
  // caller's settings now.
  int level = PinInternalSettings();
  const QueryInput q = AnalyseQueryInput(spec.query, IsPrivateQueryRelation);
  AtEOXact_GUC(true, level);
  if (q.relid != spec.relid)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("the query of model \"%s\" now reads relation %s, not %s", spec.name,
                           get_rel_name(q.relid), spec.relation_name),
                    errdetail("Nothing was charged."),
                    errhint("A model's versions read one relation. Drop the model with "
                            "dperm.drop_model, then train it again with "
                            "dperm.train_model_query.")));
  Oid types[5] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID};
  Datum args[5] = {CStringGetTextDatum(spec.query), CStringGetTextDatum(spec.features),
                   CStringGetTextDatum(spec.label), CStringGetTextDatum(spec.loss),
                   CStringGetTextDatum(spec.options)};
  // As the caller, under the pinned settings (dperm.train_query parses the
  // canonical text under them).
  RunInternalSql(caller,
                 "SELECT dperm.train_query($1, $2, $3, $4, $5::pg_catalog.jsonb)::pg_catalog.text",
                 5, types, args, nullptr, SPI_OK_SELECT, false);
  bool isnull = true;
  Datum model = (Datum)0;
  if (SPI_processed == 1)
    model = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
  char* released = isnull ? nullptr : MemoryContextStrdup(context, TextDatumGetCString(model));
  SPI_finish();
  // A noisy count of zero units: charged, no model (dperm.train_query
  // returns NULL), recorded as a failed version.
  if (released == nullptr)
    ereport(ERROR, (errcode(ERRCODE_DATA_EXCEPTION),
                    errmsg("the query of model \"%s\" released a noisy size of zero", spec.name),
                    errdetail("The noisy count was charged; no model was released.")));
  return released;
}

}  // namespace dperm::pg
