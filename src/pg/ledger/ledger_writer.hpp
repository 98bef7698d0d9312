// The ledger writer's transport (ledger_writer.cpp): how a request
// (ledger_request.hpp) reaches a writer, the persistent one or a dynamic one,
// and waits for its answer. The writer's transaction itself (budget check and
// ledger row) is ServeLedgerRequest in ledger.hpp.
#pragma once

#include "base/boundary.hpp"
#include "ledger/ledger_request.hpp"

extern "C" {
#include "storage/dsm.h"
}

namespace dperm::pg {

// Hands the request in `seg` to a ledger writer and waits until it is
// served (req->done). Uses the persistent writer when dperm is in
// shared_preload_libraries, otherwise a dynamic background worker (waiting
// up to dperm.ledger_wait_timeout for a free slot). A busy answer (kBusy:
// a row it needs is locked) is retried with backoff, interruptibly, until
// dperm.ledger_wait_timeout has passed since the first attempt, or at once
// when the lock is this transaction's own; then req->status stays kBusy.
// With dynamic writers, charges to the same relation take turns, first come
// first served; a request whose turn does not come in time ends kNoTurn.
// The writer never waits for a lock, so one relation's locked budget
// delays only the releases charged to it. Raises 53000 when no writer
// takes the request in time; a cancel while waiting raises as usual (the
// writer may still charge the release: at worst a failed training is
// charged).
void SubmitLedgerRequest(dsm_segment* seg, LedgerRequest* req);

// Whether this transaction itself changed the budget row of `relid` (with
// dperm.set_budget, not yet committed): a writer can never lock it.
bool BudgetChangedHere(Oid relid);

// The relation's name for messages (schema-qualified; its OID if gone).
char* RelationNameForMessage(Oid relid);

}  // namespace dperm::pg
