// Reading a relation's rows through a cursor (row_reader.hpp). A cursor,
// not SPI_execute: SPI would materialise the whole result in its tuple
// table; a cursor hands over a batch at a time, and its plan can be
// checked before the first row is read (RunReleaseCount).
#include "dperm/options/options.hpp"

#include "base/citus.hpp"
#include "base/internal_sql.hpp"
#include "release/progress.hpp"
#include "guard/relations.hpp"
#include "release/row_reader.hpp"

extern "C" {
#include "executor/spi.h"
#include "miscadmin.h"
}

namespace dperm::pg {
namespace {

// Rows fetched at a time: SPI's tuple table holds one batch.
const long kBatchRows = 1000;

struct CursorOpen {
  const char* sql;
  Portal portal;
};

// Plans and starts the cursor: no parallel plan (the rows are added in this
// backend), no scrolling (nothing is materialised for it); read-only, so it
// runs in the statement's snapshot.
void OpenCursor(void* arg) {
  CursorOpen* open = static_cast<CursorOpen*>(arg);
  open->portal = SPI_cursor_open_with_args(nullptr, open->sql, 0, nullptr, nullptr, nullptr, true,
                                           CURSOR_OPT_NO_SCROLL);
}

struct CursorFetch {
  Portal portal;
  long count;
};

void FetchCursor(void* arg) {
  CursorFetch* fetch = static_cast<CursorFetch*>(arg);
  SPI_cursor_fetch(fetch->portal, true, fetch->count);
}

}  // namespace

Portal OpenInternalCursor(Oid role, const char* sql) {
  CursorOpen open = {sql, nullptr};
  RunInternalCall(role, OpenCursor, &open);
  return open.portal;
}

void FetchInternalCursor(Oid role, Portal portal, long count) {
  CursorFetch fetch = {portal, count};
  RunInternalCall(role, FetchCursor, &fetch);
}

void ReadRows(const RowQuery& query, RowBuffer* rows, bool reports) {
  Portal portal = OpenInternalCursor(query.reader, query.sql);
  // The plan's relations (public: the catalog), as the aggregate's
  // transition checks its statement's.
  if (portal->queryDesc == nullptr) elog(ERROR, "dperm: a read is not a single query");
  if (query.refuse_citus != nullptr)
    RefuseCitusRelations(EStateRelations(portal->queryDesc->estate), query.refuse_citus);
  // Each batch's detoasted values are freed with it.
  MemoryContext batch =
      AllocSetContextCreate(CurrentMemoryContext, "dperm rows", ALLOCSET_DEFAULT_SIZES);
  for (;;) {
    CHECK_FOR_INTERRUPTS();
    FetchInternalCursor(query.reader, portal, kBatchRows);
    if (SPI_processed == 0) break;
    MemoryContext caller = MemoryContextSwitchTo(batch);
    TupleDesc desc = SPI_tuptable->tupdesc;
    for (uint64 i = 0; i < SPI_processed; i++) {
      HeapTuple tuple = SPI_tuptable->vals[i];
      bool features_null, label_null;
      Datum features = SPI_getbinval(tuple, desc, 1, &features_null);
      Datum label = SPI_getbinval(tuple, desc, 2, &label_null);
      if (reports) ProgressCountRow();
      AddRow(rows, features_null ? nullptr : DatumGetArrayTypeP(features),
             StoredLabel(rows->rule, label_null, label, rows->target_bound, rows->classes));
    }
    MemoryContextSwitchTo(caller);
    MemoryContextReset(batch);
    SPI_freetuptable(SPI_tuptable);
  }
  SPI_cursor_close(portal);
  MemoryContextDelete(batch);
  FinishRows(rows);
}

}  // namespace dperm::pg
