#!/usr/bin/env bash
# Sets up, builds and runs every dperm test: the core guard, the
# include-cycle check, the GoogleTest unit tests (no server), then the
# pg_regress suite against a throwaway PostgreSQL 15 cluster (pg_virtualenv),
# including the BANK utility test.
set -euo pipefail
cd "$(dirname "$0")/.."
export DPERM_SHARED=${DPERM_SHARED:-$(cd .. && pwd)/shared}
bash scripts/setup.sh

make -s clean
# The library and the unit-test binary in one parallel build (the unit
# tests' objects used to compile one at a time in `make unit`).
make -j"$(nproc)" DPERM_WERROR=1 all test/unit/run_unit_tests
bash test/core_guard.sh
bash test/check_includes.sh
# The unit tests' high-precision constants against their generator (mpmath).
/usr/bin/python3 scripts/gen_reference_constants.py --check | tail -1
script_passed=3

unit_log=$(mktemp)
make -s unit DPERM_WERROR=1 | tee "$unit_log"
unit_passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\..*/\1/p' "$unit_log" | tail -1)

make -s install
regress_status=0
regress_log=$(mktemp)
# A fresh cluster (-t: a temporary one of its own, which never collides
# with another 15/regress, even as root); max_worker_processes leaves room for the ledger writer
# next to parallel query workers.
pg_virtualenv -t -o max_worker_processes=16 -o max_parallel_workers=8 \
  make -s installcheck 2>&1 | tee "$regress_log" || regress_status=$?
if [ $regress_status != 0 ]; then
  [ -f regression.diffs ] && head -300 regression.diffs
fi
regress_passed=$(grep -cE '^(test|     ) *[a-z_]+ +\.\.\. ok' "$regress_log" || true)
regress_failed=$(grep -cE '\.\.\. FAILED' "$regress_log" || true)
regress_total=$((regress_passed + regress_failed))
# Server-level checks: pg_dump keeps budgets and the ledger; concurrent
# charges are atomic; CREATE EXTENSION gives the catalog of every upgrade
# path, and the upgrade from 0.1.0 keeps everything; no failure
# (rollback, cancel, kill, crash) loses a charge; 16 pgbench clients never
# overspend; hostile inputs never crash, corrupt or leak; hostile dp_model
# values (text, jsonb, binary COPY) never crash or raise internal errors;
# dperm.progress shows a running release to its role only and never
# outlives it (success, error, cancel).
for check in test/dump_restore.sh test/concurrent_charges.sh test/upgrade.sh \
             test/failure_modes.sh test/pgbench_charges.sh test/fuzz.sh \
             test/fuzz_model.sh test/progress.sh; do
  opts=(-o max_worker_processes=40)
  # fuzz.sh's memory loop runs 10^4 releases in one backend: with the
  # persistent ledger writer each costs ~1 ms instead of a process start
  # (~20 ms here), the same leak sensitivity in a quarter of the time.
  [ "$check" = test/fuzz.sh ] && opts+=(-o shared_preload_libraries=dperm)
  if pg_virtualenv -t "${opts[@]}" bash "$check"; then
    script_passed=$((script_passed + 1))
  else
    regress_failed=$((regress_failed + 1)); regress_status=1
  fi
done
# Releases while parallel query holds every worker slot (max_worker_processes
# = 8), without preload (the release waits for a slot) and with
# shared_preload_libraries = dperm (the persistent ledger writer).
for preload in "" "-o shared_preload_libraries=dperm"; do
  # shellcheck disable=SC2086  # $preload is two words or none
  if pg_virtualenv -t -o max_worker_processes=8 $preload bash test/worker_slots.sh; then
    script_passed=$((script_passed + 1))
  else
    regress_failed=$((regress_failed + 1)); regress_status=1
  fi
done
# Scheduled retraining with a real pg_cron (background-worker jobs, so no
# password is needed for pg_cron's connections): a job every minute, a
# refused run in cron.job_run_details, the forecast's count of runs.
if pg_virtualenv -t -o shared_preload_libraries=pg_cron -o cron.database_name=dperm_cron \
     -o cron.use_background_workers=on -o max_worker_processes=16 bash test/cron.sh; then
  script_passed=$((script_passed + 1))
else
  regress_failed=$((regress_failed + 1)); regress_status=1
fi
# Citus (issue 12 item 4): a coordinator and two workers of its own (three
# throwaway clusters), a distributed table trained through dperm.train.
# Builds Citus 13.2.2 once per machine (~5 minutes); a failed build fails.
if bash scripts/setup-citus.sh && bash test/citus.sh; then
  script_passed=$((script_passed + 1))
else
  regress_failed=$((regress_failed + 1)); regress_status=1
fi
[ -f results/utility_figures.txt ] && { echo "BANK utility figures:"; cat results/utility_figures.txt; }
[ -f results/algorithms_figures.txt ] && { echo "SGD-family utility figures (BANK, WINE):"; cat results/algorithms_figures.txt; }
echo "unit tests passed: ${unit_passed:-0}; pg_regress tests: $regress_passed of $regress_total; script checks: $script_passed"
echo "dperm: $(( ${unit_passed:-0} + regress_passed + script_passed )) passed, $((regress_failed + (regress_status != 0 && regress_failed == 0 ? 1 : 0))) failed"
exit $regress_status
