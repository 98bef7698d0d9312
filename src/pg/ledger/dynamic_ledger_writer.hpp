// The dynamic ledger writer (dynamic_ledger_writer.cpp): without
// shared_preload_libraries = dperm, one dynamic background worker serves
// each request, in a transaction of its own.
#pragma once

#include "ledger/ledger_request.hpp"

namespace dperm::pg {

// Starts a ledger writer for the request in `seg` and waits until it has
// served it and exited. Waits up to dperm.ledger_wait_timeout for a free
// worker slot (then raises 53000); a cancel while waiting withdraws the
// writer.
void SubmitToDynamicWriter(dsm_segment* seg);

}  // namespace dperm::pg
