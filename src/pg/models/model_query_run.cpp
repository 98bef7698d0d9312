// One run of a named model on a query (model_query_run.hpp); the model's
// specification and what a run re-validates: model_query.cpp.
#include "dperm/options/options.hpp"

#include "base/internal_sql.hpp"
#include "guard/lineage.hpp"
#include "guard/query_input.hpp"
#include "ledger/ledger_writer.hpp"
#include "models/model_query_run.hpp"
#include "release/train_query.hpp"
#include "release/train_steps.hpp"
#include "types/model_type.hpp"

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

// One release of TrainQueryOnce, run by RunInternalCall as the caller.
struct QueryCall {
  const char* query;
  TrainInput* in;
  ChargeOutcome* outcome;
  Datum model;
  bool isnull;
};

void CallTrainQuery(void* arg) {
  QueryCall* call = static_cast<QueryCall*>(arg);
  call->model = TrainQueryResolved(call->query, *call->in, call->outcome, &call->isnull);
}

// The stored query reads `read`, not the model's relation. When the model's
// relation holds the budget of `read` (dperm.lineage: dperm.move_budget
// moved it there, with the ledger and the model, and left the query as it
// was written), the message says so and what to do. Nothing was charged.
[[noreturn]] void RefuseOtherRelation(const ModelSpec& spec, Oid read) {
  const char* reads = RelationNameForMessage(read);
  const char* holds = RelationNameForMessage(spec.relid);
  if (list_member_oid(LineageAncestors(read, NIL), spec.relid))
    ereport(ERROR,
            (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
             errmsg("the query of model \"%s\" reads %s, whose privacy budget moved to %s",
                    spec.name, reads, holds),
             errdetail("dperm.move_budget moved the budget, its ledger and the model to %s; the "
                       "model's stored query still reads %s. Nothing was charged.",
                       holds, reads),
             errhint("Train a new model on %s with dperm.train_model_query, or, when %s replaces "
                     "%s, drop %s and rename %s to its name: the stored query then reads it.",
                     holds, holds, reads, reads, holds)));
  ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                  errmsg("the query of model \"%s\" now reads relation %s, not %s", spec.name,
                         reads, holds),
                  errdetail("Nothing was charged."),
                  errhint("A model's versions read one relation. Drop the model with "
                          "dperm.drop_model, then train it again with "
                          "dperm.train_model_query.")));
  pg_unreachable();
}

}  // namespace

char* TrainQueryOnce(const ModelSpec& spec, MemoryContext context, ChargeOutcome* outcome) {
  Oid caller = GetUserId();
  SPI_connect();
  // Validated again as it was deparsed: the same names, whatever the
  // caller's settings now.
  int level = PinInternalSettings();
  const QueryInput q = AnalyseQueryInput(spec.query, IsPrivateQueryRelation);
  AtEOXact_GUC(true, level);
  if (q.relid != spec.relid) RefuseOtherRelation(spec, q.relid);
  TrainInput in = {};
  in.features = spec.features;
  in.label = spec.label;
  in.loss_name = spec.loss;
  in.options = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(spec.options)));
  in.mode = TrainMode::kAuto;
  // As the caller, under the pinned settings (dperm.train_query parses the
  // canonical text under them), as a statement of dperm's would run it.
  QueryCall call = {spec.query, &in, outcome, (Datum)0, true};
  RunInternalCall(caller, CallTrainQuery, &call);
  char* released =
      call.isnull ? nullptr : MemoryContextStrdup(context, ModelJsonText(CheckedModel(call.model)));
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
