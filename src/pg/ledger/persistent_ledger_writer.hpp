// The persistent ledger writer (persistent_ledger_writer.cpp): with
// shared_preload_libraries = dperm, one background worker serves every
// release's request from a queue in shared memory.
#pragma once

#include "ledger/ledger_request.hpp"

namespace dperm::pg {

// Whether this server has the persistent writer (dperm was preloaded, so
// the queue exists); otherwise each request gets a dynamic writer.
bool PersistentLedgerWriterConfigured();

// Hands the request in `seg` to the persistent writer and waits until it is
// served (req->done). Raises 53000 when the writer does not take it within
// dperm.ledger_wait_timeout, and an error when the writer that took it
// exits first; a cancel withdraws a request the writer has not taken.
void SubmitToPersistentWriter(dsm_segment* seg, LedgerRequest* req);

// With shared_preload_libraries = dperm: reserves the request queue in
// shared memory and registers the persistent writer. Called from _PG_init.
void InitPersistentLedgerWriter();

}  // namespace dperm::pg
