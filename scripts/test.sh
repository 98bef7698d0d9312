#!/usr/bin/env bash
# Sets up, builds and runs every dperm test: the core guard, the
# include-cycle check, the check of the paths comments and docs name, the
# GoogleTest unit tests (no server), then the pg_regress suite against a
# throwaway PostgreSQL 15 cluster (pg_virtualenv -t), including the BANK
# utility test, the server scripts and the Python package's tests.
#
# After the build, the unit tests, pg_regress and the server scripts are
# independent jobs (each server job in a pg_virtualenv -t cluster of its own,
# on a port of its own): they run DPERM_TEST_JOBS at a time (default: the
# number of cores + 1, as test/cron.sh mostly waits), longest first, each
# job's output printed when it ends.
# A table of every stage's wall and CPU time ends the output (CPU: user +
# sys of all the stage's processes, the server's included; scripts/stage_time.py).
set -euo pipefail
cd "$(dirname "$0")/.."
export DPERM_SHARED=${DPERM_SHARED:-$(cd .. && pwd)/shared}
jobs_at_once=${DPERM_TEST_JOBS:-$(($(nproc) + 1))}
work=$(mktemp -d -t dperm-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
start_all=$SECONDS

# stage NAME COMMAND...: runs COMMAND as the timed stage NAME.
stage_names=()
stage() {
  local name=$1
  shift
  stage_names+=("$name")
  /usr/bin/python3 scripts/stage_time.py "$work/$name.time" "$@"
}

stage setup bash scripts/setup.sh

# The library and the unit-test binary in one parallel build (the unit
# tests' objects used to compile one at a time in `make unit`).
stage clean make -s clean
stage build make -j"$(nproc)" DPERM_WERROR=1 DPERM_FAST_BUILD=1 all test/unit/run_unit_tests bench-check
stage checks bash -c 'set -o pipefail && bash test/core_guard.sh && bash test/check_includes.sh &&
  bash test/check_paths.sh && /usr/bin/python3 scripts/gen_reference_constants.py --check | tail -1'
# (checks: the core guard, the include-cycle check, the paths comments and
# docs name, and the unit tests' high-precision constants against their
# generator, mpmath)
script_passed=4
stage install make -s DPERM_FAST_BUILD=1 install

# --- the jobs -------------------------------------------------------------
# job NAME COMMAND...: queued; runs with its output in $work/NAME.log.
job_names=()
job_cmds=()
job() {
  local name=$1
  shift
  job_names+=("$name")
  job_cmds+=("$(printf '%q ' "$@")")
}
# A free TCP port at or above $1, for one job's cluster (pg_virtualenv -t
# passes $PGPORT to pg_createcluster, which would otherwise give two clusters
# created at the same time the same port).
free_port() {
  /usr/bin/python3 - "$1" <<'PY'
import socket, sys
p = int(sys.argv[1])
while True:
    s = socket.socket()
    try:
        s.bind(("", p))
        print(p)
        break
    except OSError:
        p += 1
    finally:
        s.close()
PY
}

# Scheduled retraining with a real pg_cron (background-worker jobs, so no
# password is needed for pg_cron's connections): a job every minute, a
# refused run in cron.job_run_details, the forecast's count of runs.
# Mostly waiting for pg_cron's minute: first, beside the others.
job cron pg_virtualenv -t -o shared_preload_libraries=pg_cron -o cron.database_name=dperm_cron \
  -o cron.use_background_workers=on -o max_worker_processes=16 bash test/cron.sh
# Then longest first. pg_regress in a fresh cluster; max_worker_processes leaves room for the ledger writer
# next to parallel query workers.
job regress pg_virtualenv -t -o max_worker_processes=16 -o max_parallel_workers=8 make -s installcheck
# The unit tests run as two gtest shards (tests dealt round-robin), so that
# no long job is left alone at the end.
for shard in 0 1; do
  job "unit$shard" env GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$shard \
    make -s unit DPERM_WERROR=1 DPERM_FAST_BUILD=1
done
# Citus (docs/citus.md): a coordinator and two workers of its own (three
# throwaway clusters), a distributed table trained through dperm.train.
# Builds Citus 13.2.2 once per machine (~5 minutes); a failed build fails.
job citus bash -c 'bash scripts/setup-citus.sh && bash test/citus.sh'
# Server-level checks: pg_dump keeps budgets and the ledger; concurrent
# charges are atomic; CREATE EXTENSION gives the catalog of every upgrade
# path, and the upgrade from 0.1.0 keeps everything; no failure
# (rollback, cancel, kill, crash) loses a charge; 16 pgbench clients never
# overspend; hostile inputs never crash, corrupt or leak; hostile dp_model
# values (text, jsonb, binary COPY) never crash or raise internal errors;
# dperm.progress shows a running release to its role only and never
# outlives it (success, error, cancel).
# fuzz.sh's memory loop runs 10^4 releases in one backend: with the
# persistent ledger writer each costs ~1 ms instead of a process start
# (~20 ms here), the same leak sensitivity in a quarter of the time.
job fuzz pg_virtualenv -t -o max_worker_processes=40 -o shared_preload_libraries=dperm bash test/fuzz.sh
for check in failure_modes progress fuzz_model pgbench_charges concurrent_charges \
             dump_restore upgrade; do
  job "$check" pg_virtualenv -t -o max_worker_processes=40 bash "test/$check.sh"
done
# The doc-test: every ```sql block of README.md and docs/*.md runs as
# written (a block marked expect-error must fail with its SQLSTATE); and
# docs/sql-reference.md is what scripts/gen_sql_reference.py generates from
# the installed extension.
job doc_test pg_virtualenv -t -o max_worker_processes=16 bash test/doc_test.sh
job sql_reference pg_virtualenv -t /usr/bin/python3 scripts/gen_sql_reference.py --check
# The Python package (python/dperm): predictions equal the server's to
# 1e-12 for the three losses, a refused release raises BudgetExhausted
# (DP001), the ledger and budgets as DataFrames, the three pictures; then
# the ```python blocks of docs/python.md run as written.
job python pg_virtualenv -t bash test/python.sh
# Releases while parallel query holds every worker slot (max_worker_processes
# = 8), without preload (the release waits for a slot) and with
# shared_preload_libraries = dperm (the persistent ledger writer).
job worker_slots pg_virtualenv -t -o max_worker_processes=8 bash test/worker_slots.sh
job worker_slots_preload pg_virtualenv -t -o max_worker_processes=8 \
  -o shared_preload_libraries=dperm bash test/worker_slots.sh
# No role can stall another: a held budget row delays only its own releases;
# cron_next_run and softmax releases stop within seconds (both writer modes).
job stall pg_virtualenv -t -o max_worker_processes=40 bash test/stall.sh
job stall_preload pg_virtualenv -t -o max_worker_processes=40 \
  -o shared_preload_libraries=dperm bash test/stall.sh
# No lock one role holds in an open transaction (any dperm function it may
# call, the DDL dperm's event triggers follow) delays another role's release.
job role_locks pg_virtualenv -t -o max_worker_processes=40 bash test/role_locks.sh
job role_locks_preload pg_virtualenv -t -o max_worker_processes=40 \
  -o shared_preload_libraries=dperm bash test/role_locks.sh

declare -A job_status=()
declare -A running=()  # pid -> job index
print_job() {  # index: the job's output, framed
  local name=${job_names[$1]}
  echo "===== $name (status ${job_status[$name]}) ====="
  cat "$work/$name.log"
}
reap_one() {
  local pid status=0 i
  wait -n -p pid "${!running[@]}" || status=$?
  i=${running[$pid]}
  unset "running[$pid]"
  job_status[${job_names[$i]}]=$status
  print_job "$i"
}
for i in "${!job_names[@]}"; do
  while [ ${#running[@]} -ge "$jobs_at_once" ]; do reap_one; done
  name=${job_names[$i]}
  stage_names+=("$name")
  port=$(free_port $((5500 + 10 * i)))
  # (the queued command was quoted by printf %q)
  eval "PGPORT=$port /usr/bin/python3 scripts/stage_time.py \"\$work/\$name.time\" ${job_cmds[$i]}" \
    > "$work/$name.log" 2>&1 < /dev/null &
  running[$!]=$i
done
while [ ${#running[@]} -gt 0 ]; do reap_one; done

# --- the report -----------------------------------------------------------
regress_status=0
regress_failed=0
for name in "${job_names[@]}"; do
  [ "${job_status[$name]}" = 0 ] && continue
  regress_status=1
  case $name in
    unit*) ;;  # counted below
    regress) [ -f regression.diffs ] && head -300 regression.diffs ;;
    *) regress_failed=$((regress_failed + 1)) ;;
  esac
done
for name in "${job_names[@]}"; do
  case $name in unit*|regress) ;; *) [ "${job_status[$name]}" = 0 ] && script_passed=$((script_passed + 1)) ;; esac
done
unit_passed=0
unit_failed=0
for shard in 0 1; do
  n=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\..*/\1/p' "$work/unit$shard.log" | tail -1)
  unit_passed=$((unit_passed + ${n:-0}))
  [ "${job_status[unit$shard]}" = 0 ] || unit_failed=$((unit_failed + 1))
done
regress_passed=$(grep -cE '^(test|     ) *[a-z0-9_]+ +\.\.\. ok' "$work/regress.log" || true)
regress_bad=$(grep -cE '\.\.\. FAILED' "$work/regress.log" || true)
regress_failed=$((regress_failed + regress_bad))
regress_total=$((regress_passed + regress_bad))
[ -f results/utility_figures.txt ] && { echo "BANK utility figures:"; cat results/utility_figures.txt; }
[ -f results/algorithms_figures.txt ] && { echo "SGD-family utility figures (BANK, WINE):"; cat results/algorithms_figures.txt; }

echo "stage timing (wall and CPU seconds; jobs ran $jobs_at_once at a time):"
printf '  %-22s %8s %8s\n' stage wall cpu
cpu_sum=0
for name in "${stage_names[@]}"; do
  read -r wall user sys < "$work/$name.time" || { wall='?'; user=0; sys=0; }
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
  cpu_sum=$(awk -v a="$cpu_sum" -v b="$cpu" 'BEGIN { printf "%.1f", a + b }')
  printf '  %-22s %8s %8s\n' "$name" "$wall" "$cpu"
done
printf '  %-22s %8s %8s\n' total "$((SECONDS - start_all))" "$cpu_sum"

# The failed jobs again, last, in a few lines each: a CI log that keeps only
# its tail (and a long server log printed by the failed job) must still name
# which check failed.
for name in "${job_names[@]}"; do
  [ "${job_status[$name]}" = 0 ] && continue
  echo "FAILED job $name (status ${job_status[$name]}):"
  { grep -m 5 -E 'FAILED|FAIL:|not ok' "$work/$name.log" || grep -m 5 -E 'ERROR|Error' "$work/$name.log"; } \
    | cut -c1-400 | sed 's/^/  /'
done
echo "unit tests passed: ${unit_passed:-0}; pg_regress tests: $regress_passed of $regress_total; script checks: $script_passed"
echo "dperm: $(( ${unit_passed:-0} + regress_passed + script_passed )) passed, $((regress_failed + unit_failed + (regress_status != 0 && regress_failed + unit_failed == 0 ? 1 : 0))) failed"
exit $regress_status
