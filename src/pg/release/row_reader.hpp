// Reading a relation's rows through a cursor (row_reader.cpp): dperm.train's
// read into the row buffer, and the cursors of its internal statements
// whose plan is checked before they run (RunReleaseCount).
#pragma once

#include "base/boundary.hpp"
#include "release/row_buffer.hpp"

extern "C" {
#include "utils/portal.h"
}

namespace dperm::pg {

// Opens `sql` (a read-only SELECT, no parameters) as a cursor as `role`,
// with RunInternalSql's identity, settings and error rule, in the
// statement's snapshot (the one a count before it read): planned and
// started (its QueryDesc set), no row read yet.
Portal OpenInternalCursor(Oid role, const char* sql);

// Fetches up to `count` rows of `portal` into SPI_tuptable (SPI_processed),
// as `role` the same way.
void FetchInternalCursor(Oid role, Portal portal, long count);

// A query of rows (features float8[], label) read as `reader`: dperm.train's
// read in memory and streaming's copy of the rows. `refuse_citus`: the
// aggregate the release stands for (dp_logreg, ...), refused on a Citus
// table or shard in the query's plan as the aggregate refuses one; nullptr:
// not checked.
struct RowQuery {
  Oid reader;
  const char* sql;
  const char* refuse_citus;
};

// Reads every row of `query` into `rows`, whose d is known (AddRow: sanitised and clipped,
// labels by rows->rule) in batches, checking for interrupts between them;
// counts each row in dperm.progress when `reports`. Then FinishRows.
void ReadRows(const RowQuery& query, RowBuffer* rows, bool reports);

}  // namespace dperm::pg
