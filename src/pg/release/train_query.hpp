// The steps of dperm.train_query (train_query.cpp) that
// dperm.train_query_groups (train_query_groups.cpp) shares. Every refusal
// here costs nothing.
#pragma once

#include "guard/query_input.hpp"
#include "release/release_request.hpp"
#include "release/train_input.hpp"

namespace dperm::pg {

// Whether a query may read `relid` as its private relation: a budget or
// protection in its family (the predicate of dperm.train_query,
// train_query_groups and train_model_query for AnalyseQueryInput).
bool IsPrivateQueryRelation(Oid relid);

// Who reads the query's input: the owner of a protected relation (the
// caller must be one of its analysts), else the role PostgreSQL would read
// it as -- the caller, or the owner of the (not security_invoker) view over
// it -- after PostgreSQL's checks of every view read and of the relation
// (42501 otherwise); the lookups must be readable by both.
void CheckQueryReader(TrainInput* in, const QueryInput& q);

// Refuses (42501, nothing charged) a reader who may not read the private
// relation's unit column `unit_column` (nullptr: the row's tableoid and
// ctid), which the read selects whatever the query selects.
void CheckUnitReadable(const TrainInput& in, const QueryInput& q, const char* unit_column);

// The relations charged, the unit (the budgets', or the row with k = 1)
// and the model's options (the count's share off epsilon); the release is
// charged whole with its count (request->charged). Returns the private
// relation's unit column, or nullptr for the row.
const char* QueryChargedTo(const TrainInput& in, Oid dataset, ReleaseRequest* request);

// Steps 1 and 2 of dperm.train_query (every refusal costs nothing; within
// SPI): the caller, the loss, the query analysed as the caller
// (AnalyseQueryInput), its private relation locked, who reads
// (CheckQueryReader) and the types of its columns `in->features` and
// `in->label`. Reads no row.
QueryInput ResolveQueryReader(const char* query_text, TrainInput* in);

// Step 3 (every refusal costs nothing): the label's target, the request
// (the options and the `dataset` they name, RequestFor), the relations
// charged and the unit (QueryChargedTo), and whether the reader may read
// the unit (CheckUnitReadable). Returns the private relation's unit column,
// or nullptr for the row. Reads no row.
const char* ResolveQueryRequest(const QueryInput& q, TrainInput* in, ReleaseRequest* request);

// The arguments every SQL entry point on a query shares (train_query,
// train_query_groups, explain_query): features, label, loss and options
// (arguments 1 to 4; the query is argument 0), the mode auto.
TrainInput QueryArguments(FunctionCallInfo fcinfo);

// dperm.train_query on `query_text` with `in`'s features, label, loss_name,
// options and mode (the rest is resolved here), its charge told to
// `outcome` (nullptr: nobody; a named model's run: model_query_run.cpp).
// Returns the model, or *isnull for a noisy size of zero (charged).
Datum TrainQueryResolved(const char* query_text, TrainInput in, ChargeOutcome* outcome,
                         bool* isnull);

}  // namespace dperm::pg
