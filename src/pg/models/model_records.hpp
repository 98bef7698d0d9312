// The ledger writer's record requests for named models (model_records.cpp):
// a dperm.models row, or an evaluation appended to one, written in the
// writer's own transaction.
#pragma once

#include "base/boundary.hpp"
#include "ledger/ledger_request.hpp"

namespace dperm::pg {

// Hands a dperm.models row or an evaluation (as JSON) to the ledger writer,
// which writes it in a transaction of its own; returns the version. Raises
// if the writer could not write it.
int64 SubmitModelRecord(LedgerRequestKind kind, const char* json);

// The record requests of the ledger writer: one dperm.models row, or an
// evaluation appended to one, in the writer's own transaction. Registered
// for kRecordModelVersion and kRecordEvaluation from _PG_init.
void ServeModelRecord(LedgerRequest* req);

}  // namespace dperm::pg
