#!/usr/bin/env bash
# Scale benchmark (issue 12): dperm.train in memory vs streaming, with 0 and
# 2 parallel workers, on BANK (n = 45211, d = 42) and a synthetic N x 42
# table. Prints, per run: wall time, time / bare scan, scans of the table,
# and the backend's peak resident memory (VmHWM, which counts the shared
# buffers the backend touched: shared_buffers = 128MB here).
#
# Usage (dperm built and installed; the system PostgreSQL is shared, so hold
# the lock):
#   flock -o /tmp/dperm-pg.lock bash bench/scale.sh [N]      # N default 4500000
#   SCALE_SKIP_BIG=1 bash bench/scale.sh                      # BANK only
# Every release: dp_options(epsilon => 1, l2 => 0.1, algorithm => 'output_gd')
# (no seed: real releases; each is charged to a table without a budget).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-4500000}
py=/usr/bin/python3

pg_virtualenv -t -o max_worker_processes=16 -o max_parallel_workers=8 bash -c '
  set -euo pipefail
  N=$0; py=$1
  psql() { command psql -X -q -v ON_ERROR_STOP=1 "$@"; }
  $py bench/load_datasets.py --load bank >/dev/null 2>&1
  psql -c "CREATE EXTENSION dperm"
  if [ -z "${SCALE_SKIP_BIG:-}" ]; then
    # ||x|| <= 0.15 sqrt(42) < 1: no row is clipped.
    cols=$(for k in $(seq 1 42); do printf "0.15 * sin(%d * i + %d)," $k $((k * k)); done)
    psql -c "CREATE TABLE synth AS SELECT i AS id, ARRAY[${cols%,}]::float8[] AS features,
               sin(i) + sin(2 * i + 4) + 0.3 * sin(3 * i + 9) > 0 AS label
               FROM generate_series(1, $N) i" -c "VACUUM ANALYZE synth"
  fi
  psql -c "VACUUM ANALYZE bank"
  opts="dp_options(epsilon => 1, l2 => 0.1, algorithm => '\''output_gd'\'')"
  # one measurement in a fresh backend: seconds, peak MiB, the query result
  run() {  # table workers query
    printf "%s\n" "SET max_parallel_workers_per_gather = $2;" \
      "SET dperm.max_buffer = '\''8GB'\'';" \
      "SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset" \
      "SELECT ($3) AS r \gset" \
      "SELECT round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 3), (substring(pg_read_file('\''/proc/self/status'\'') from '\''VmHWM:\s*(\d+)'\'')::int / 1024), :'\''r'\'';" |
      psql -At -F " " -f -
  }
  tables="bank"; [ -z "${SCALE_SKIP_BIG:-}" ] && tables="bank synth"
  printf "%-6s %9s %-9s %7s %9s %10s %6s %9s\n" table n mode workers seconds "x scan" scans "peak MiB"
  for t in $tables; do
    n=$(psql -At -c "SELECT count(*) FROM $t")
    run $t 0 "SELECT count(*) FROM $t WHERE features IS NOT NULL" >/dev/null  # warm the cache
    read -r scan _ _ < <(run $t 0 "SELECT count(*) FROM $t WHERE features IS NOT NULL")
    read -r scan2 _ _ < <(run $t 2 "SELECT count(*) FROM $t WHERE features IS NOT NULL")
    printf "%-6s %9s %-9s %7s %9s %10s %6s %9s\n" $t $n "bare scan" 0 $scan 1.00 1 -
    printf "%-6s %9s %-9s %7s %9s %10s %6s %9s\n" $t $n "bare scan" 2 $scan2 \
      $(echo "scale=2; $scan2 / $scan" | bc) 1 -
    for mode in in_memory streaming; do
      for w in 0 2; do
        q="dperm.train('\''$t'\'', '\''features'\'', '\''label'\'', '\''logistic'\'', $opts, mode => '\''$mode'\'')::jsonb->'\''plan'\''->>'\''iterations'\''"
        read -r secs peak iters < <(run $t $w "SELECT $q")
        # scans: the count of n and d, then one aggregate (in memory) or T passes
        scans=$([ $mode = in_memory ] && echo 2 || echo $((iters + 1)))
        printf "%-6s %9s %-9s %7s %9s %10s %6s %9s\n" $t $n $mode $w $secs \
          $(echo "scale=2; $secs / $scan" | bc) $scans $peak
      done
    done
  done
' "$N" "$py"
