// How a release's charge reaches a ledger writer, a process with a
// transaction of its own (charge.cpp says why one is needed).
//
// Two transports, one transaction (ServeLedgerRequest):
//
// * Persistent writer (shared_preload_libraries = dperm): one static
//   background worker serves a queue in shared memory, so no release ever
//   needs a free worker slot (persistent_ledger_writer.cpp).
// * Dynamic writer (no preload). One dynamic background worker per release,
//   as before; when every slot is taken (parallel query uses the same slots)
//   the release retries with a short backoff for up to
//   dperm.ledger_wait_timeout before it fails with 53000
//   (dynamic_ledger_writer.cpp).
//
// No role can stall another through the writer. The writer never waits for
// a lock (ledger.cpp: budget rows are locked with SKIP LOCKED, any other
// lock within 100 ms): a request whose budget row another transaction holds
// is answered busy at once, and the releasing backend hands it in again
// with backoff (cancellable) until dperm.ledger_wait_timeout, then fails
// with 55P03. So a held budget row delays only the releases charged to that
// relation, in both modes. With dynamic writers, charges to one relation
// take turns, in the order they ask (TakeBudgetTurns), so no release is
// starved by later ones; the persistent writer serves them in order. The
// persistent writer's queue never fills; one role's share of the writer is
// its sessions' releases (bounded by its connection limit), each a short
// transaction.
//
// Either way the model is computed only after the writer has committed the
// ledger row and said so (status kCharged): a cancel or an error while
// waiting gives no model, and the writer may still commit the charge (at
// worst a failed training is charged; no charge is ever lost).
#include <algorithm>

#include "ledger/dynamic_ledger_writer.hpp"
#include "base/internal_sql.hpp"
#include "ledger/ledger_writer.hpp"
#include "ledger/persistent_ledger_writer.hpp"

extern "C" {
#include "access/transam.h"
#include "access/xact.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
}

namespace dperm::pg {

namespace {

// A busy answer is retried after this many ms, doubling up to the second
// figure: a role's retries keep the persistent writer busy for at most a
// few per cent of its time (a busy answer costs it well under a millisecond).
const long kBusyFirstMs = 5;
const long kBusyMaxMs = 250;

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

// What is left of dperm.ledger_wait_timeout, counted from `start`.
long MillisecondsLeft(TimestampTz start) {
  return g_ledger_wait_timeout_ms - static_cast<long>((GetCurrentTimestamp() - start) / 1000);
}

// With dynamic writers, charges to one relation take turns, first come
// first served. Dynamic writers run side by side, so without turns a
// release answered busy (another charge's writer held the budget row)
// retried after a growing backoff, and newcomers' first tries won the row
// over it again and again, so one release could wait past the 30 s timeout
// while the average took under 2 s (docs/scale.md, "Many charges to one
// budget"; test/pgbench_charges.sh checks that no release is starved). The
// persistent writer serves one request at a time, so no charge ever finds a
// row held by another charge there: it takes no turns
// (a turn held while the request waits in the writer's queue would make
// one role's N sessions delay another's release by N queue lengths).
// A turn is a lock in PostgreSQL's lock manager, whose waiters are served
// in order: an advisory lock on (database, relation) of a class no SQL
// function takes (pg_advisory_lock uses classes 1 and 2, Citus 4 to 16).
// pg_locks shows it as an advisory lock with classid = pg_class, objid =
// the relation and objsubid = 25712.
const uint16 kBudgetTurnClass = 0x6470;  // "dp"

void BudgetTurnTag(LOCKTAG* tag, Oid relid) {
  SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, RelationRelationId, relid, kBudgetTurnClass);
}

// Waits up to `ms` (> 0) for the turn: the lock manager's wait, with
// lock_timeout set to `ms` for it. False when the time ran out; a cancel
// or statement_timeout raises as usual. (A lock wait that times out has
// been withdrawn before the error is raised, so the error can be dropped.)
bool WaitForTurn(const LOCKTAG* tag, long ms) {
  int saved = LockTimeout;
  LockTimeout = static_cast<int>(Min(ms, static_cast<long>(INT_MAX)));
  MemoryContext context = CurrentMemoryContext;
  volatile bool got = true;  // set in PG_CATCH, read after it
  PG_TRY();
  { (void)LockAcquire(tag, ExclusiveLock, false, false); }
  PG_CATCH();
  {
    LockTimeout = saved;
    MemoryContextSwitchTo(context);
    if (geterrcode() != ERRCODE_LOCK_NOT_AVAILABLE) PG_RE_THROW();
    FlushErrorState();
    got = false;
  }
  PG_END_TRY();
  LockTimeout = saved;
  return got;
}

// The turns a request holds, in OID order (so two releases never wait for
// each other's turns).
struct BudgetTurns {
  int n = 0;
  Oid held[kMaxRelations];
};

void GiveBackBudgetTurns(BudgetTurns* turns) {
  for (int i = 0; i < turns->n; i++) {
    LOCKTAG tag;
    BudgetTurnTag(&tag, turns->held[i]);
    (void)LockRelease(&tag, ExclusiveLock, false);
  }
  turns->n = 0;
}

// Takes a charge's turn on each relation it is charged to (dynamic writers
// only), waiting at most `ms` in all. Returns InvalidOid, or the relation
// whose turn did not come (then no turn is held). A relation whose budget this transaction changed
// is skipped: the writer cannot lock that row, and says so at once. The
// turns are given back as soon as the writer has answered: never held while
// a busy answer backs off, so a release that keeps finding a budget row held
// (by an uncommitted dperm.set_budget) holds up no other release for longer
// than one visit to the writer.
Oid TakeBudgetTurns(const LedgerRequest* req, long ms, BudgetTurns* turns) {
  turns->n = 0;
  if (req->kind != kChargeRelease || PersistentLedgerWriterConfigured()) return InvalidOid;
  Oid relations[kMaxRelations];
  std::copy(req->relations, req->relations + req->n_relations, relations);
  std::sort(relations, relations + req->n_relations);
  Oid* end = std::unique(relations, relations + req->n_relations);
  TimestampTz start = GetCurrentTimestamp();
  for (Oid* r = relations; r != end; r++) {
    LOCKTAG tag;
    BudgetTurnTag(&tag, *r);
    bool got = LockAcquire(&tag, ExclusiveLock, false, true) != LOCKACQUIRE_NOT_AVAIL;
    if (!got) {
      if (BudgetChangedHere(*r)) continue;
      long left = ms - static_cast<long>((GetCurrentTimestamp() - start) / 1000);
      if (left <= 0 || !WaitForTurn(&tag, left)) {
        GiveBackBudgetTurns(turns);
        return *r;
      }
    }
    turns->held[turns->n++] = *r;
  }
  return InvalidOid;
}

}  // namespace

// Reads the budget row as this transaction sees it: a version this
// transaction wrote is the one the writer's lock attempt skipped, and
// waiting for it would only wait out the timeout.
bool BudgetChangedHere(Oid relid) {
  SPI_connect();
  int guc_level = PinInternalSettings();
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
  bool was_busy = false;
  Oid last_busy = InvalidOid;  // the row the writer last found locked
  BudgetTurns turns;
  for (;;) {
    ResetAnswer(req);
    Oid no_turn = TakeBudgetTurns(req, MillisecondsLeft(start), &turns);
    if (OidIsValid(no_turn)) {
      // Out of time in the queue: a held row (the likelier cause when the
      // writer has said so) or the releases ahead of this one.
      req->status = was_busy ? kBusy : kNoTurn;
      req->busy_relation = was_busy ? last_busy : no_turn;
      return;
    }
    if (PersistentLedgerWriterConfigured()) SubmitToPersistentWriter(seg, req);
    else SubmitToDynamicWriter(seg);
    GiveBackBudgetTurns(&turns);
    if (req->status != kBusy) return;
    if (OidIsValid(req->busy_relation) && BudgetChangedHere(req->busy_relation)) return;
    was_busy = true;
    last_busy = req->busy_relation;
    long left = MillisecondsLeft(start);
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

}  // namespace dperm::pg
