// How a release's charge reaches a ledger writer, a process with a
// transaction of its own (charge.cpp says why one is needed).
//
// Two transports, one transaction (ServeLedgerRequest):
//
// * Persistent writer (shared_preload_libraries = dperm). _PG_init reserves
//   a small queue in shared memory and registers a static background worker.
//   A release puts its LedgerRequest in a dynamic shared memory segment,
//   appends {segment handle, database, request id} to the queue, sets the
//   writer's latch and sleeps on its own latch until the writer marks the
//   request done. A background worker connects to one database for life, so
//   the writer connects on its first request, serves the queue in FIFO order
//   while the oldest request is for its database, and exits with code 1 when
//   it is for another database (or after kIdleDisconnectMs without work, so
//   that DROP DATABASE is not blocked); the postmaster restarts it at once
//   (bgw_restart_time = 0) and it connects to the next database. No release
//   ever needs a free worker slot.
// * Dynamic writer (no preload). One dynamic background worker per release,
//   as before; when every slot is taken (parallel query uses the same slots)
//   the release retries with a short backoff for up to
//   dperm.ledger_wait_timeout before it fails with 53000.
//
// No role can stall another through the writer. The writer never waits for
// a lock (ledger.cpp: budget rows are locked with SKIP LOCKED, any other
// lock within 100 ms): a request whose budget row another transaction holds
// is answered busy at once, and the releasing backend hands it in again
// with backoff (cancellable) until dperm.ledger_wait_timeout, then fails
// with 55P03. So a held budget row delays only the releases charged to that
// relation, in both modes. The queue has a slot for every backend
// (MaxBackends), and a backend has at most one request in it, so it never
// fills; one role's share of the writer is its sessions' releases (bounded
// by its connection limit), each a short transaction.
//
// Either way the model is computed only after the writer has committed the
// ledger row and said so (status kCharged): a cancel or an error while
// waiting gives no model, and the writer may still commit the charge (at
// worst a failed training is charged; no charge is ever lost).
#include "internal_sql.hpp"
#include "ledger.hpp"
#include "ledger_writer.hpp"

extern "C" {
#include "access/transam.h"
#include "access/xact.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "catalog/pg_authid.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

PGDLLEXPORT void dperm_ledger_worker_main(Datum arg);
PGDLLEXPORT void dperm_persistent_ledger_writer_main(Datum arg);
}

namespace dperm::pg {

int g_ledger_wait_timeout_ms = 30000;

namespace {

// A busy answer is retried after this many ms, doubling up to the second
// figure: a role's retries keep the persistent writer busy for at most a
// few per cent of its time (a busy answer costs it well under a millisecond).
const long kBusyFirstMs = 5;
const long kBusyMaxMs = 250;
// A connected writer that has been idle this long exits (and is restarted
// unconnected), so that it never holds up DROP DATABASE (which waits 5 s).
const long kIdleDisconnectMs = 1000;
// How often a waiting release re-checks that its writer is alive.
const long kPollMs = 100;
const char* const kPersistentName = "dperm persistent ledger writer";

struct QueueEntry {
  dsm_handle handle;
  Oid database;
  uint64 request_id;  // 0: withdrawn or taken
};

// The persistent writer's queue, in the main shared memory segment. Every
// field is read and written under `mutex` (a spinlock: no section calls out).
// capacity: twice MaxBackends (each backend has at most one live request;
// withdrawn ones wait for the head to pass them).
struct LedgerQueue {
  slock_t mutex;
  bool writer_running;
  int writer_procno;         // the running writer's PGPROC, for its latch
  uint64 writer_generation;  // incremented at each start of the writer
  uint64 next_request_id;
  uint64 head;               // entries[head % capacity] is the oldest
  uint64 tail;
  uint64 capacity;
  QueueEntry entries[FLEXIBLE_ARRAY_MEMBER];
};

uint64 QueueCapacity() { return 2 * static_cast<uint64>(Max(MaxBackends, 64)); }

Size QueueSize() { return add_size(offsetof(LedgerQueue, entries), mul_size(QueueCapacity(), sizeof(QueueEntry))); }

LedgerQueue* g_queue = nullptr;  // set only with shared_preload_libraries
shmem_request_hook_type g_prev_shmem_request_hook = nullptr;
shmem_startup_hook_type g_prev_shmem_startup_hook = nullptr;

void QueueShmemRequest() {
  if (g_prev_shmem_request_hook != nullptr) g_prev_shmem_request_hook();
  RequestAddinShmemSpace(MAXALIGN(QueueSize()));
}

void QueueShmemStartup() {
  if (g_prev_shmem_startup_hook != nullptr) g_prev_shmem_startup_hook();
  LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
  bool found;
  g_queue = static_cast<LedgerQueue*>(
      ShmemInitStruct("dperm ledger queue", QueueSize(), &found));
  if (!found) {
    memset(g_queue, 0, QueueSize());
    SpinLockInit(&g_queue->mutex);
    g_queue->writer_procno = -1;
    g_queue->capacity = QueueCapacity();
  }
  LWLockRelease(AddinShmemInitLock);
}

// Sleeps on this process's latch for up to `ms`; a cancel or termination
// raises here, so no wait of a release is uninterruptible.
void Nap(long ms) {
  (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, ms,
                  PG_WAIT_EXTENSION);
  ResetLatch(MyLatch);
  CHECK_FOR_INTERRUPTS();
}

bool WaitedLongerThan(TimestampTz start, int ms) {
  return TimestampDifferenceExceeds(start, GetCurrentTimestamp(), ms);
}

// Takes request `id` out of the queue if the writer has not taken it yet.
bool WithdrawRequest(uint64 id) {
  bool found = false;
  SpinLockAcquire(&g_queue->mutex);
  for (uint64 i = g_queue->head; i < g_queue->tail; i++) {
    QueueEntry* entry = &g_queue->entries[i % g_queue->capacity];
    if (entry->request_id == id) {
      entry->request_id = 0;
      found = true;
      break;
    }
  }
  SpinLockRelease(&g_queue->mutex);
  return found;
}

// Until the persistent writer has served `req`: raises if the writer that
// took it exits first, or if no writer takes it within the timeout.
void AwaitPersistentWriter(LedgerRequest* req, TimestampTz start) {
  for (;;) {
    SpinLockAcquire(&g_queue->mutex);  // also a full memory barrier
    bool running = g_queue->writer_running;
    uint64 generation = g_queue->writer_generation;
    SpinLockRelease(&g_queue->mutex);
    if (req->done) {
      pg_read_barrier();  // the answer was written before `done`
      return;
    }
    uint64 claimed_by = *static_cast<volatile uint64*>(&req->claimed_by);
    if (claimed_by != 0 && (!running || generation != claimed_by))
      ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                      errmsg("the dperm ledger writer exited while charging the release"),
                      errhint("See the server log. The release may have been charged; "
                              "no model was computed.")));
    if (claimed_by == 0 && WaitedLongerThan(start, g_ledger_wait_timeout_ms)) {
      WithdrawRequest(req->request_id);
      ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_RESOURCES),
                      errmsg("the dperm ledger writer did not take the release within %d ms",
                             g_ledger_wait_timeout_ms),
                      errhint(running ? "The writer is busy; raise dperm.ledger_wait_timeout, or "
                                        "retry. No model was computed."
                                      : "The persistent ledger writer is not running; see the "
                                        "server log (max_worker_processes must leave it a slot). "
                                        "No model was computed.")));
    }
    Nap(kPollMs);
  }
}

// The persistent transport: enqueue, wake the writer, wait for the answer.
void SubmitToPersistentWriter(dsm_segment* seg, LedgerRequest* req) {
  TimestampTz start = GetCurrentTimestamp();
  long delay = 5;
  for (;;) {
    bool queued = false;
    int writer = -1;
    SpinLockAcquire(&g_queue->mutex);
    if (g_queue->tail - g_queue->head < g_queue->capacity) {
      uint64 id = ++g_queue->next_request_id;
      req->request_id = id;  // plain stores into our own segment
      QueueEntry* entry = &g_queue->entries[g_queue->tail % g_queue->capacity];
      entry->handle = dsm_segment_handle(seg);
      entry->database = req->database;
      entry->request_id = id;
      g_queue->tail++;
      queued = true;
    }
    if (g_queue->writer_running) writer = g_queue->writer_procno;
    SpinLockRelease(&g_queue->mutex);
    if (queued) {
      if (writer >= 0) SetLatch(&GetPGProcByNumber(writer)->procLatch);
      break;
    }
    if (WaitedLongerThan(start, g_ledger_wait_timeout_ms))
      ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_RESOURCES),
                      errmsg("the dperm ledger writer's queue stayed full for %d ms",
                             g_ledger_wait_timeout_ms),
                      errhint("Raise dperm.ledger_wait_timeout, or retry. No model was computed.")));
    Nap(delay);
    delay = Min(delay * 2, 100);
  }
  // A cancel while waiting withdraws the request if the writer has not
  // taken it; a taken request is charged or not, but no model is released.
  uint64 id = req->request_id;
  PG_TRY();
  {
    AwaitPersistentWriter(req, start);
  }
  PG_CATCH();
  {
    WithdrawRequest(id);
    PG_RE_THROW();
  }
  PG_END_TRY();
}

// The dynamic transport: one background worker for this request, started as
// soon as a slot is free (within dperm.ledger_wait_timeout).
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
  {
    status = WaitForBackgroundWorkerShutdown(handle);
  }
  PG_CATCH();
  {
    TerminateBackgroundWorker(handle);
    PG_RE_THROW();
  }
  PG_END_TRY();
  if (status == BGWH_POSTMASTER_DIED)
    ereport(FATAL, (errcode(ERRCODE_ADMIN_SHUTDOWN), errmsg("postmaster exited during a dperm release")));
}

// ---------------------------------------------------- the persistent writer

enum TakeResult { kNothing, kTaken, kOtherDatabase };

// Pops the oldest request if it is for `connected` (any database while the
// writer is not connected yet).
TakeResult TakeRequest(Oid connected, QueueEntry* out) {
  TakeResult result;
  SpinLockAcquire(&g_queue->mutex);
  while (g_queue->head < g_queue->tail &&
         g_queue->entries[g_queue->head % g_queue->capacity].request_id == 0)
    g_queue->head++;
  if (g_queue->head == g_queue->tail) {
    result = kNothing;
  } else {
    QueueEntry* entry = &g_queue->entries[g_queue->head % g_queue->capacity];
    if (OidIsValid(connected) && entry->database != connected) {
      result = kOtherDatabase;
    } else {
      *out = *entry;
      entry->request_id = 0;
      g_queue->head++;
      result = kTaken;
    }
  }
  SpinLockRelease(&g_queue->mutex);
  return result;
}

// Marks the writer gone, so that releases waiting for it stop waiting.
void WriterExit(int, Datum) {
  SpinLockAcquire(&g_queue->mutex);
  g_queue->writer_running = false;
  g_queue->writer_procno = -1;
  SpinLockRelease(&g_queue->mutex);
}

// Serves one queue entry: attaches its segment (gone: the release was
// withdrawn or its backend has exited), connects on the first request, runs
// the transaction, publishes the answer and wakes the releasing backend.
void ServeEntry(const QueueEntry& entry, uint64 generation, Oid* connected) {
  dsm_segment* seg = dsm_attach(entry.handle);
  if (seg == nullptr) return;
  LedgerRequest* req = static_cast<LedgerRequest*>(dsm_segment_address(seg));
  // A handle of a withdrawn request could in principle name a newer,
  // unrelated segment: serve only what is recognisably this request.
  if (dsm_segment_map_length(seg) < offsetof(LedgerRequest, query) + 1 ||
      req->magic != kLedgerRequestMagic || req->request_id != entry.request_id ||
      req->database != entry.database || req->backend_procno < 0 ||
      static_cast<uint32>(req->backend_procno) >= ProcGlobal->allProcCount) {
    dsm_detach(seg);
    return;
  }
  req->claimed_by = generation;
  pg_write_barrier();
  if (!OidIsValid(*connected)) {
    // If this fails (say, the database was dropped) the writer exits and
    // the release, claimed by a writer that is gone, gets an error.
    BackgroundWorkerInitializeConnectionByOid(req->database, BOOTSTRAP_SUPERUSERID, 0);
    *connected = req->database;
    pgstat_report_appname(kPersistentName);
  }
  pgstat_report_activity(STATE_RUNNING, "dperm ledger charge");
  ServeLedgerRequest(req);
  int procno = req->backend_procno;
  pg_write_barrier();  // the answer before `done`
  req->done = 1;
  dsm_detach(seg);
  // A backend that has exited meanwhile may have passed its PGPROC on: a
  // spurious wakeup of its successor is harmless.
  SetLatch(&GetPGProcByNumber(procno)->procLatch);
  pgstat_report_activity(STATE_IDLE, nullptr);
  pgstat_report_stat(false);
}

// Clears the writer's answer, so that the request can be handed in again.
void ResetAnswer(LedgerRequest* req) {
  req->request_id = 0;
  req->claimed_by = 0;
  req->status = kPending;
  req->sqlstate = 0;
  req->ledger_id = 0;
  req->busy_relation = InvalidOid;
  req->message[0] = req->detail[0] = req->hint[0] = '\0';
  req->done = 0;
  pg_write_barrier();
}

}  // namespace

// Reads the budget row as this transaction sees it: a version this
// transaction wrote is the one the writer's lock attempt skipped, and
// waiting for it would only wait out the timeout.
bool BudgetChangedHere(Oid relid) {
  SPI_connect();
  int guc_level = PinInternalSearchPath();
  Oid types[1] = {OIDOID};
  Datum args[1] = {ObjectIdGetDatum(relid)};
  bool ours = false;
  if (SPI_execute_with_args("SELECT b.xmin FROM dperm.budgets b"
                            " WHERE b.relation::pg_catalog.oid OPERATOR(pg_catalog.=) $1",
                            1, types, args, nullptr, true, 1) == SPI_OK_SELECT &&
      SPI_processed == 1) {
    bool isnull;
    Datum xmin = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
    ours = !isnull && TransactionIdIsCurrentTransactionId(DatumGetTransactionId(xmin));
  }
  AtEOXact_GUC(true, guc_level);
  SPI_finish();
  return ours;
}

void SubmitLedgerRequest(dsm_segment* seg, LedgerRequest* req) {
  TimestampTz start = GetCurrentTimestamp();
  long delay = kBusyFirstMs;
  for (;;) {
    ResetAnswer(req);
    if (g_queue != nullptr)
      SubmitToPersistentWriter(seg, req);
    else
      SubmitToDynamicWriter(seg);
    if (req->status != kBusy) return;
    if (OidIsValid(req->busy_relation) && BudgetChangedHere(req->busy_relation)) return;
    long left = g_ledger_wait_timeout_ms -
                static_cast<long>((GetCurrentTimestamp() - start) / 1000);
    if (left <= 0) return;
    Nap(Min(delay, left));  // a cancel or timeout raises here
    delay = Min(delay * 2, kBusyMaxMs);
  }
}

char* RelationNameForMessage(Oid relid) {
  char* name = get_rel_name(relid);
  if (name == nullptr) return psprintf("%u", relid);
  char* schema = get_namespace_name(get_rel_namespace(relid));
  return quote_qualified_identifier(schema, name);
}

void InitPersistentLedgerWriter() {
  if (!process_shared_preload_libraries_in_progress) return;
  g_prev_shmem_request_hook = shmem_request_hook;
  shmem_request_hook = QueueShmemRequest;
  g_prev_shmem_startup_hook = shmem_startup_hook;
  shmem_startup_hook = QueueShmemStartup;
  BackgroundWorker worker;
  memset(&worker, 0, sizeof worker);
  worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
  worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
  worker.bgw_restart_time = 0;  // exit code 1 = "restart me now" (see the top)
  strlcpy(worker.bgw_library_name, "dperm", BGW_MAXLEN);
  strlcpy(worker.bgw_function_name, "dperm_persistent_ledger_writer_main", BGW_MAXLEN);
  strlcpy(worker.bgw_name, kPersistentName, BGW_MAXLEN);
  strlcpy(worker.bgw_type, kPersistentName, BGW_MAXLEN);
  RegisterBackgroundWorker(&worker);
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

// Entry point of the persistent ledger writer (shared_preload_libraries):
// serves the queue of its database until it is idle or the oldest request
// is for another database, then exits with code 1 to be restarted.
void dperm_persistent_ledger_writer_main(Datum) {
  pqsignal(SIGTERM, die);
  pqsignal(SIGHUP, SignalHandlerForConfigReload);
  BackgroundWorkerUnblockSignals();
  on_shmem_exit(WriterExit, 0);
  SpinLockAcquire(&g_queue->mutex);
  uint64 generation = ++g_queue->writer_generation;
  g_queue->writer_procno = MyProc->pgprocno;
  g_queue->writer_running = true;
  SpinLockRelease(&g_queue->mutex);

  Oid connected = InvalidOid;
  TimestampTz idle_since = GetCurrentTimestamp();
  for (;;) {
    ResetLatch(MyLatch);
    CHECK_FOR_INTERRUPTS();
    if (ConfigReloadPending) {
      ConfigReloadPending = false;
      ProcessConfigFile(PGC_SIGHUP);
    }
    QueueEntry entry;
    TakeResult taken = TakeRequest(connected, &entry);
    if (taken == kOtherDatabase) proc_exit(1);
    if (taken == kTaken) {
      ServeEntry(entry, generation, &connected);
      idle_since = GetCurrentTimestamp();
      continue;
    }
    long timeout = -1;
    if (OidIsValid(connected)) {
      long secs;
      int usecs;
      TimestampDifference(idle_since, GetCurrentTimestamp(), &secs, &usecs);
      long idle_ms = secs * 1000 + usecs / 1000;
      if (idle_ms >= kIdleDisconnectMs) proc_exit(1);
      timeout = kIdleDisconnectMs - idle_ms;
    }
    (void)WaitLatch(MyLatch,
                    WL_LATCH_SET | WL_EXIT_ON_PM_DEATH | (timeout >= 0 ? WL_TIMEOUT : 0),
                    timeout, PG_WAIT_EXTENSION);
  }
}
