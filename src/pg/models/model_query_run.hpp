// Named models on a query (model_query_run.cpp; the SQL function: model_query.cpp): one run of a model whose
// specification is a query (dperm.train_model_query).
#pragma once

#include "base/boundary.hpp"
#include "ledger/charge.hpp"
#include "models/model_registry.hpp"

namespace dperm::pg {

// One training run of the query model `spec` as the caller: its canonical
// text validated again (AnalyseQueryInput under the pinned settings, as it
// was deparsed) and checked to read the relation the model was recorded on,
// then dperm.train_query's steps on it (TrainQueryResolved), the charge
// told to `outcome`. Every refusal comes before the charge. Returns the
// model's text (in `context`); raises on any failure.
char* TrainQueryOnce(const ModelSpec& spec, MemoryContext context, ChargeOutcome* outcome);

}  // namespace dperm::pg
