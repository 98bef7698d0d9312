// The request a release (or a named model's record) hands to a ledger
// writer, and the writer's answer, in a dynamic shared memory segment
// (ledger_request.cpp); and the waits both transports share. How a request
// reaches a writer is SubmitLedgerRequest (ledger_writer.hpp); the writer's
// transaction is ServeLedgerRequest (ledger.hpp).
#pragma once

#include "base/boundary.hpp"
#include "guard/relations.hpp"  // kMaxRelations: the most relations a release reads

extern "C" {
#include "datatype/timestamp.h"
#include "storage/dsm.h"
}

namespace dperm::pg {

// The most Renyi orders of a ledger curve.
const int kMaxOrders = 64;
// Marks a dynamic shared memory segment as a ledger request ("DPLR").
const uint32 kLedgerRequestMagic = 0x44504c52;

// kBusy: a row the writer needs (a budget row: busy_relation names its
// relation) is locked by another transaction; nothing was written, and
// SubmitLedgerRequest hands the request in again until it is served or
// dperm.ledger_wait_timeout has passed.
// kNoTurn (set by the releasing backend, never the writer): the charges to
// busy_relation ahead of this one took all of dperm.ledger_wait_timeout;
// the request never reached the writer.
enum LedgerStatus { kPending = 0, kCharged = 1, kRefused = 2, kFailed = 3, kBusy = 4, kNoTurn = 5 };

// What a request asks the writer to do: charge a release (the default), or
// write a record in a transaction of its own, so that it outlives the
// caller's rollback (the kinds served by RegisterLedgerHandler's handlers).
enum LedgerRequestKind { kChargeRelease = 0, kRecordModelVersion = 1, kRecordEvaluation = 2 };

// The request and the writer's answer, in a dynamic shared memory segment.
struct LedgerRequest {
  uint32 magic;        // kLedgerRequestMagic
  int32 kind;          // LedgerRequestKind; records carry their row as JSON in query[]
  uint64 request_id;   // the persistent writer's queue entry (0: none)
  int backend_procno;  // the releasing backend, whose latch is set when done
  Oid database;
  char role[NAMEDATALEN];  // the releasing role's name (ledger.role_name)
  Oid role_id;             // and OID (ledger.role); charges only
  TimestampTz released_at;
  char algorithm[64];
  char mechanism[64];
  char loss[64];
  char unit[NAMEDATALEN];  // the privacy unit's column ("" : the row)
  int64 unit_rows;         // and k (0: the row)
  char neighbors[192];     // "replace_one", or a unit's (privacy_unit.hpp)
  double epsilon;
  double delta;
  int64 n;
  int32 d;
  bool seeded;
  int32 n_relations;
  Oid relations[kMaxRelations];
  int32 n_rdp;             // 0: the release has no RDP curve
  double rdp[kMaxOrders];  // its curve on the ledger's orders
  // A unit-level release (unit_rows > 0): its cost at the row, for the
  // relations whose budget names no unit (ChargeRequest).
  double row_epsilon;
  double row_delta;
  int32 n_row_rdp;
  double row_rdp[kMaxOrders];
  bool legacy_catalog;  // set by the worker: 0.1.0 SQL objects
  // Written by the worker.
  uint64 claimed_by;  // generation of the persistent writer serving it
  int32 status;
  int32 sqlstate;
  int64 ledger_id;    // the ledger row; for records, what their handler returns
  Oid busy_relation;  // kBusy: whose budget row is locked (0: another row)
  char message[1024];
  char detail[1024];
  char hint[512];
  // Set (after a write barrier) once status and the fields above are final.
  volatile int32 done;
  char query[FLEXIBLE_ARRAY_MEMBER];
};

// Sleeps on this process's latch for up to `ms`; a cancel or termination
// raises here, so no wait of a release is uninterruptible.
void Nap(long ms);

// Whether more than `ms` milliseconds have passed since `start`.
bool WaitedLongerThan(TimestampTz start, int ms);

// dperm.ledger_wait_timeout in milliseconds.
extern int g_ledger_wait_timeout_ms;

}  // namespace dperm::pg
