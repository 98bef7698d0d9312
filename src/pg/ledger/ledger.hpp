// The ledger writer's transaction (ledger.cpp): serving one request, and the
// registry of the request kinds other than a charge.
#pragma once

#include "ledger/ledger_request.hpp"

namespace dperm::pg {

// Checks the budgets and appends the ledger row of `req` in a transaction of
// its own, as the bootstrap superuser, in a process connected to
// req->database; leaves status (and ledger_id or the error) in `req`. A
// request of another kind goes to its registered handler in the same
// transaction. Never raises: an error aborts the transaction and is
// recorded as kFailed.
void ServeLedgerRequest(LedgerRequest* req);

// Serves one request kind other than kChargeRelease inside the writer's
// transaction (SPI connected, snapshot pushed, search_path pinned,
// lock_timeout set): writes what the request carries (its row as JSON in
// req->query) and leaves its result in req->ledger_id. Raises on failure.
using LedgerHandler = void (*)(LedgerRequest* req);

// Makes `handler` serve the requests of `kind` (not kChargeRelease). Called
// from _PG_init, so every process that serves requests has the same table:
// a dynamic writer loads the library, and the persistent writer is forked
// from the postmaster, which loaded it as a preloaded library.
void RegisterLedgerHandler(LedgerRequestKind kind, LedgerHandler handler);

}  // namespace dperm::pg
