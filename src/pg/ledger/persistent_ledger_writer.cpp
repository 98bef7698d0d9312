// The persistent ledger writer (shared_preload_libraries = dperm): the
// request queue in shared memory, how a release waits on it, and the
// background worker that serves it (ledger_writer.cpp says how it fits in).
//
// _PG_init reserves the queue and registers a static background worker. A
// release puts its LedgerRequest in a dynamic shared memory segment,
// appends {segment handle, database, request id} to the queue, sets the
// writer's latch and sleeps on its own latch until the writer marks the
// request done. A background worker connects to one database for life, so
// the writer connects on its first request, serves the queue in FIFO order
// while the oldest request is for its database, and exits with code 1 when
// it is for another database (or after kIdleDisconnectMs without work, so
// that DROP DATABASE is not blocked); the postmaster restarts it at once
// (bgw_restart_time = 0) and it connects to the next database. No release
// ever needs a free worker slot. The queue has a slot for every backend
// (MaxBackends), and a backend has at most one request in it, so it never
// fills.
#include "ledger/ledger.hpp"
#include "ledger/persistent_ledger_writer.hpp"

extern "C" {
#include "access/transam.h"
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

PGDLLEXPORT void dperm_persistent_ledger_writer_main(Datum arg);
}

namespace dperm::pg {

namespace {

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
  uint64 head;  // entries[head % capacity] is the oldest
  uint64 tail;
  uint64 capacity;
  QueueEntry entries[FLEXIBLE_ARRAY_MEMBER];
};

uint64 QueueCapacity() { return 2 * static_cast<uint64>(Max(MaxBackends, 64)); }

Size QueueSize() {
  return add_size(offsetof(LedgerQueue, entries), mul_size(QueueCapacity(), sizeof(QueueEntry)));
}

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
  g_queue = static_cast<LedgerQueue*>(ShmemInitStruct("dperm ledger queue", QueueSize(), &found));
  if (!found) {
    memset(g_queue, 0, QueueSize());
    SpinLockInit(&g_queue->mutex);
    g_queue->writer_procno = -1;
    g_queue->capacity = QueueCapacity();
  }
  LWLockRelease(AddinShmemInitLock);
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

// ------------------------------------------------------------- the writer

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

}  // namespace

bool PersistentLedgerWriterConfigured() { return g_queue != nullptr; }

// Enqueue, wake the writer, wait for the answer.
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
      ereport(ERROR,
              (errcode(ERRCODE_INSUFFICIENT_RESOURCES),
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
  { AwaitPersistentWriter(req, start); }
  PG_CATCH();
  {
    WithdrawRequest(id);
    PG_RE_THROW();
  }
  PG_END_TRY();
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
    (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH | (timeout >= 0 ? WL_TIMEOUT : 0),
                    timeout, PG_WAIT_EXTENSION);
  }
}
