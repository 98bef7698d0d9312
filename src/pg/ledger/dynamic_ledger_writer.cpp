// The dynamic ledger writer (ledger_writer.cpp says how it fits in): without
// shared_preload_libraries = dperm, each request gets a dynamic background
// worker of its own, which connects to the release's database, serves the
// request in one transaction (ServeLedgerRequest) and exits. When every slot
// is taken (parallel query uses the same slots) the release retries with a
// short backoff for up to dperm.ledger_wait_timeout before it fails with
// 53000.
#include "ledger/dynamic_ledger_writer.hpp"
#include "ledger/ledger.hpp"

extern "C" {
#include "access/transam.h"
#include "catalog/pg_authid.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "tcop/tcopprot.h"
#include "utils/timestamp.h"

PGDLLEXPORT void dperm_ledger_worker_main(Datum arg);
}

namespace dperm::pg {

// One background worker for this request, started as soon as a slot is
// free (within dperm.ledger_wait_timeout).
void SubmitToDynamicWriter(dsm_segment* seg) {
  BackgroundWorker worker;
  memset(&worker, 0, sizeof worker);
  worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
  worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
  worker.bgw_restart_time = BGW_NEVER_RESTART;
  strlcpy(worker.bgw_library_name, "dperm", BGW_MAXLEN);
  strlcpy(worker.bgw_function_name, "dperm_ledger_worker_main", BGW_MAXLEN);
  strlcpy(worker.bgw_name, "dperm ledger writer", BGW_MAXLEN);
  strlcpy(worker.bgw_type, "dperm ledger writer", BGW_MAXLEN);
  worker.bgw_main_arg = UInt32GetDatum(dsm_segment_handle(seg));
  worker.bgw_notify_pid = MyProcPid;
  BackgroundWorkerHandle* handle;
  // Parallel query takes slots for milliseconds at a time: retry with a
  // short backoff rather than fail at the first full house.
  TimestampTz start = GetCurrentTimestamp();
  long delay = 5;
  while (!RegisterDynamicBackgroundWorker(&worker, &handle)) {
    if (WaitedLongerThan(start, g_ledger_wait_timeout_ms))
      ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_RESOURCES),
                      errmsg("could not start the dperm ledger writer: no background worker "
                             "slot became free within %d ms",
                             g_ledger_wait_timeout_ms),
                      errdetail("Every release is charged by a background worker; parallel "
                                "query workers use the same max_worker_processes slots."),
                      errhint("Add dperm to shared_preload_libraries for a persistent ledger "
                              "writer that needs no free slot, or raise max_worker_processes. "
                              "No model was computed.")));
    Nap(delay);
    delay = Min(delay * 2, 100);
  }
  // If the wait is interrupted (cancel, timeout), withdraw the writer: one
  // that has not started frees its slot; one that has loses only its
  // uncommitted charge, and no model is released either way.
  BgwHandleStatus status;
  PG_TRY();
  { status = WaitForBackgroundWorkerShutdown(handle); }
  PG_CATCH();
  {
    TerminateBackgroundWorker(handle);
    PG_RE_THROW();
  }
  PG_END_TRY();
  if (status == BGWH_POSTMASTER_DIED)
    ereport(FATAL,
            (errcode(ERRCODE_ADMIN_SHUTDOWN), errmsg("postmaster exited during a dperm release")));
}

}  // namespace dperm::pg

using namespace dperm::pg;

// Entry point of the dynamic ledger writer: one request, one transaction.
void dperm_ledger_worker_main(Datum arg) {
  pqsignal(SIGTERM, die);
  BackgroundWorkerUnblockSignals();
  dsm_segment* seg = dsm_attach(DatumGetUInt32(arg));
  if (seg == nullptr)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("dperm ledger writer: the request is gone")));
  LedgerRequest* req = static_cast<LedgerRequest*>(dsm_segment_address(seg));
  BackgroundWorkerInitializeConnectionByOid(req->database, BOOTSTRAP_SUPERUSERID, 0);
  pgstat_report_appname("dperm ledger writer");
  ServeLedgerRequest(req);
  pg_write_barrier();
  req->done = 1;
  dsm_detach(seg);
  proc_exit(0);
}
