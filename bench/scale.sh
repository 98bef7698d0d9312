#!/usr/bin/env bash
# Scale benchmark (issue 12): dperm.train's default release in memory and
# streaming, with 0 and 2 parallel workers, along the ladder BANK (45211 x
# 42), synthetic 452k x 42 and 4.5M x 42, and 10M x 50. Prints, per run:
# wall time, time / bare scan, scans of the table, and the backend's peak
# resident memory (VmHWM, which counts the shared buffers the backend
# touched: shared_buffers = 128MB here).
#
# Usage (dperm built and installed; the system PostgreSQL is shared, so hold
# the lock):
#   flock -o /tmp/dperm-pg.lock bash bench/scale.sh [LADDER]
# LADDER: space-separated rows x features, default "452000x42 4500000x42
# 10000000x50" (BANK is always first). SCALE_IN_MEMORY_MAX (default
# 10000000) is the largest n trained in memory as well.
# Every release: dp_options(epsilon => 1, l2 => 0.1) without an algorithm --
# the default of its mode (in memory: bolton; streaming: output_gd, at most
# 100 passes) -- not seeded, each charged to a table without a budget. The
# synthetic tables are generated in SQL (generate_series); ||x|| < 1.
set -euo pipefail
cd "$(dirname "$0")/.."
LADDER=${1:-"452000x42 4500000x42 10000000x50"}
py=/usr/bin/python3

pg_virtualenv -t -o max_worker_processes=16 -o max_parallel_workers=8 bash -c '
  set -euo pipefail
  LADDER=$0; py=$1; MAXMEM=${SCALE_IN_MEMORY_MAX:-10000000}
  psql() { command psql -X -q -v ON_ERROR_STOP=1 "$@"; }
  $py bench/load_datasets.py --load bank >/dev/null 2>&1
  psql -c "CREATE EXTENSION dperm" -c "VACUUM ANALYZE bank"
  tables="bank"
  for rung in $LADDER; do
    n=${rung%x*}; d=${rung#*x}
    # 0.14 sin(...) per feature: ||x|| <= 0.14 sqrt(d) < 1 for d <= 50.
    cols=$(for k in $(seq 1 $d); do printf "0.14 * sin(%d * i + %d)," $k $((k * k)); done)
    psql -c "CREATE TABLE s$rung AS SELECT ARRAY[${cols%,}]::float8[] AS features,
               sin(i) + sin(2 * i + 4) + 0.3 * sin(3 * i + 9) > 0 AS label
               FROM generate_series(1, $n) i" -c "VACUUM ANALYZE s$rung"
    tables="$tables s$rung"
  done
  opts="dp_options(epsilon => 1, l2 => 0.1)"
  # one measurement in a fresh backend: seconds, peak MiB, the query result
  run() {  # workers query
    printf "%s\n" "SET max_parallel_workers_per_gather = $1;" \
      "SET dperm.max_buffer = '\''16GB'\'';" \
      "SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset" \
      "SELECT ($2) AS r \gset" \
      "SELECT round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 3), (substring(pg_read_file('\''/proc/self/status'\'') from '\''VmHWM:\s*(\d+)'\'')::int / 1024), :'\''r'\'';" |
      psql -At -F " " -f -
  }
  printf "| table | n | d | mode | workers | algorithm | seconds | x scan | scans | peak MiB |\n"
  printf "|---|---:|---:|---|---:|---|---:|---:|---:|---:|\n"
  for t in $tables; do
    n=$(psql -At -c "SELECT count(*) FROM $t")
    d=$(psql -At -c "SELECT array_length(features, 1) FROM $t LIMIT 1")
    bare="SELECT count(*) FROM $t WHERE features IS NOT NULL"
    run 0 "$bare" >/dev/null  # warm the cache
    read -r scan _ _ < <(run 0 "$bare")
    read -r scan2 _ _ < <(run 2 "$bare")
    row() { printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$@"; }
    results=()
    for mode in in_memory streaming; do
      [ $mode = in_memory ] && [ "$n" -gt "$MAXMEM" ] && continue
      for w in 0 2; do
        q="dperm.train('\''$t'\'', '\''features'\'', '\''label'\'', '\''logistic'\'', $opts, mode => '\''$mode'\'')::jsonb"
        read -r secs peak out < <(run $w "SELECT ($q->>'\''algorithm'\'') || '\'':'\'' || ($q->'\''plan'\''->>'\''iterations'\'')")
        results+=("$mode $w $secs $peak $out")
      done
    done
    # the bare scan again, after the releases: x scan uses the mean of both
    read -r scan_b _ _ < <(run 0 "$bare")
    scan=$(echo "scale=4; ($scan + $scan_b) / 2" | bc)
    row $t $n $d "bare scan" 0 - $scan 1.00 1 -
    row $t $n $d "bare scan" 2 - $scan2 $(echo "scale=2; $scan2 / $scan" | bc) 1 -
    for r in "${results[@]}"; do
      read -r mode w secs peak out <<<"$r"
      alg=${out%%:*}; iters=${out#*:}
      # scans: the count of n and d, then one aggregate (in memory) or T passes
      scans=$([ $mode = in_memory ] && echo 2 || echo $((iters + 1)))
      row $t $n $d $mode $w "$alg" $secs $(echo "scale=2; $secs / $scan" | bc) $scans $peak
    done
  done
' "$LADDER" "$py"
