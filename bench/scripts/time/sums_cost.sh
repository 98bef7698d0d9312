#!/usr/bin/env bash
# Cost of the exact sums over rows (include/dperm/rows/exact_sum.hpp) on the
# streaming release, before/after in one interleaved run (docs/scale.md,
# *Exact sums*): the same dperm.train(..., mode => 'streaming') default
# release, alternately with two builds of dperm.so swapped into the library
# directory between fresh backends (each backend loads the file anew; the
# two builds must share one SQL catalog), in the order A B B A per round.
#
# Usage, inside a throwaway cluster whose rung table already exists (see
# bench/scripts/time/scale.sh's make_rung; creating it needs no lock), holding the
# install lock for the swaps and the releases only:
#   pg_virtualenv -t -o max_worker_processes=16 -o max_parallel_workers=8 bash -c '
#     psql -c "CREATE TABLE s10000000x50 AS ..."
#     flock /tmp/dperm-install.lock bash bench/scripts/time/sums_cost.sh BEFORE.so AFTER.so s10000000x50'
# SUMS_REPS rounds (default 1), SUMS_WORKERS (default 0) parallel workers.
set -euo pipefail
cd "$(dirname "$0")/../../.."
before=$1 after=$2 table=$3
reps=${SUMS_REPS:-1} workers=${SUMS_WORKERS:-0}
libdir=$(pg_config --pkglibdir)
psql() { command psql -X -q -v ON_ERROR_STOP=1 "$@"; }

make -s install >/dev/null  # this branch's SQL and library
psql -c "CREATE EXTENSION IF NOT EXISTS dperm"
swap() {  # so-file: atomically, so that no backend maps a half-written file
  cp "$1" "$libdir/dperm.so.tmp" && mv "$libdir/dperm.so.tmp" "$libdir/dperm.so"
}
release() {  # label: one release in a fresh backend
  local t0 t1 iters
  t0=$(date +%s.%N)
  iters=$(psql -At -c "SET max_parallel_workers_per_gather = $workers" \
    -c "SELECT (dperm.train('$table', 'features', 'label', 'logistic',
                            dp_options(epsilon => 1, l2 => 0.1), 'streaming')::jsonb)->'plan'->>'iterations'")
  t1=$(date +%s.%N)
  printf '%s\t%s\t%.3f\t%s\n' "$1" "$workers" "$(echo "$t1 - $t0" | bc)" "$iters"
}
bare() {
  local t0 t1
  t0=$(date +%s.%N)
  psql -At -c "SET max_parallel_workers_per_gather = $workers" \
    -c "SELECT count(*) FROM $table WHERE features IS NOT NULL" >/dev/null
  t1=$(date +%s.%N)
  printf 'bare scan\t%s\t%.3f\t-\n' "$workers" "$(echo "$t1 - $t0" | bc)"
}
printf 'build\tworkers\tseconds\tpasses\n'
bare
for r in $(seq 1 "$reps"); do
  swap "$before"; release before
  swap "$after"; release after
  release after
  swap "$before"; release before
done
bare
swap "$after"  # leave this branch's build installed
