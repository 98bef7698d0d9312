#!/usr/bin/env bash
# Sets up, builds and runs every dperm test: the core guard, the GoogleTest
# unit tests (no server), then the pg_regress suite against a throwaway
# PostgreSQL 15 cluster (pg_virtualenv), including the BANK utility test.
set -euo pipefail
cd "$(dirname "$0")/.."
export DPERM_SHARED=${DPERM_SHARED:-$(cd .. && pwd)/shared}
bash scripts/setup.sh

make -s clean
make -j"$(nproc)" DPERM_WERROR=1
bash test/core_guard.sh
bash test/check_schedule.sh

unit_log=$(mktemp)
make -s unit DPERM_WERROR=1 | tee "$unit_log"
unit_passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\..*/\1/p' "$unit_log" | tail -1)

make -s install
regress_status=0
# A fresh cluster; max_worker_processes leaves room for the ledger writer
# next to parallel query workers.
pg_virtualenv -o max_worker_processes=16 -o max_parallel_workers=8 \
  make -s installcheck || regress_status=$?
if [ $regress_status != 0 ]; then
  [ -f regression.diffs ] && head -300 regression.diffs
fi
regress_total=$(awk '/^test |^ok |^not ok /{n++} END{print n+0}' regression.out 2>/dev/null || echo 0)
regress_failed=$(grep -cE '\.\.\. FAILED|^not ok' regression.out 2>/dev/null || true)
regress_passed=$((regress_total - regress_failed))
echo "unit tests passed: ${unit_passed:-0}; pg_regress tests: $regress_passed of $regress_total"
echo "dperm: $(( ${unit_passed:-0} + regress_passed )) passed, $regress_failed failed"
exit $regress_status
