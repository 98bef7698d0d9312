// The waits every ledger transport shares (ledger_request.hpp): a release
// waiting for a worker slot, a queue place, its turn or its answer sleeps on
// its latch, interruptibly, for at most dperm.ledger_wait_timeout.
#include "ledger/ledger_request.hpp"

extern "C" {
#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"
}

namespace dperm::pg {

int g_ledger_wait_timeout_ms = 30000;

void Nap(long ms) {
  (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, ms, PG_WAIT_EXTENSION);
  ResetLatch(MyLatch);
  CHECK_FOR_INTERRUPTS();
}

bool WaitedLongerThan(TimestampTz start, int ms) {
  return TimestampDifferenceExceeds(start, GetCurrentTimestamp(), ms);
}

}  // namespace dperm::pg
