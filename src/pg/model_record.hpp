// The ledger writer's handler of the named models' record requests
// (kRecordModelVersion, kRecordEvaluation), registered by _PG_init.
#pragma once

#include "ledger_writer.hpp"

namespace dperm::pg {

// Writes the dperm.models row of a record request (kind != kChargeRelease),
// inside the writer's transaction (SPI connected, search_path pinned);
// leaves the version in req->ledger_id. Raises on failure. In models.cpp.
void ServeModelRecord(LedgerRequest* req);

}  // namespace dperm::pg
