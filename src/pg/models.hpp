// Named, versioned models (models.cpp): training runs recorded as
// versions, and the ledger writer's record requests.
#pragma once

#include "boundary.hpp"
#include "ledger_writer.hpp"
#include "model_registry.hpp"

namespace dperm::pg {

// Hands a dperm.models row or an evaluation (as JSON) to the ledger writer,
// which writes it in a transaction of its own; returns the version. Raises
// if the writer could not write it.
int64 SubmitModelRecord(LedgerRequestKind kind, const char* json);

// Runs `spec` once as the caller and records it as a new version (trained,
// or failed after its charge; a run refused before the charge leaves none)
// and returns it; raises the run's error. With `budget_refusal`, a budget
// refusal (DP001, nothing charged) is returned there, with -1, instead.
int64 RunVersion(const ModelSpec& spec, ErrorData** budget_refusal);

// The record requests of the ledger writer: one dperm.models row, or an
// evaluation appended to one, in the writer's own transaction.
void ServeModelRecord(LedgerRequest* req);

}  // namespace dperm::pg
