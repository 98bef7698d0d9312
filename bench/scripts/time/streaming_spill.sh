#!/usr/bin/env bash
# Streaming with and without the temporary copy of the rows
# (dperm.streaming_spill), docs/scale.md "Streaming reads the table once":
# one table s<n>x<d> (bench/scripts/time/scale.sh's generator, ||x|| < 1), then, in
# rounds, a serial and a 2-worker bare scan, scale.sh's streaming release
# (dp_options(epsilon => 1, l2 => 0.1): output_gd) with the file on 2 and 1
# training threads and without it on 2 and 0 workers, and the dperm.train
# default at delta = 1e-6 (dp_gd, 100 passes) with the file. Each statement
# in a fresh psql, its \timing. Needs an installed dperm and n (d + 1) 8
# bytes of temporary disk twice over (the table and the file).
# Usage: flock /tmp/dperm-install.lock bash bench/scripts/time/streaming_spill.sh [n] [d] [rounds]
set -euo pipefail
n=${1:-10000000} d=${2:-50} rounds=${3:-2}
pg_virtualenv -t -o shared_preload_libraries=dperm -o max_wal_size=8GB -o max_worker_processes=16 \
  -o max_parallel_workers=8 bash -c '
set -euo pipefail
n=$0 d=$1 rounds=$2
psql() { command psql -X -q -v ON_ERROR_STOP=1 "$@"; }
psql -c "CREATE EXTENSION dperm CASCADE" >/dev/null
cols=$(for k in $(seq 1 "$d"); do printf "0.14 * sin(%d * i + %d)," "$k" $((k * k)); done)
psql -c "CREATE TABLE big AS SELECT ARRAY[${cols%,}]::float8[] AS features,
           sin(i) + sin(2 * i + 4) + 0.3 * sin(3 * i + 9) > 0 AS label FROM generate_series(1, $n) i"
psql -c "VACUUM ANALYZE big"
tm() {  # what, settings, statement
  local out
  out=$(printf "%s\n" "$2" "\\timing on" "$3" | psql -At | grep -E "^Time:|:" | tail -2 | tr "\n" " ")
  echo "| $1 | $out |"
}
rel() { echo "SELECT (m->>'\''algorithm'\'') || '\'':'\'' || (m->'\''plan'\''->>'\''iterations'\'') FROM (SELECT dperm.train('\''big'\'', '\''features'\'', '\''label'\'', '\''logistic'\'', $1, mode => '\''streaming'\'')::jsonb AS m) r;"; }
scale="dp_options(epsilon => 1, l2 => 0.1)"
default="dp_options(epsilon => 1, delta => 1e-6)"
echo "s${n}x${d}: $(date -u +%FT%TZ), load $(cut -d" " -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  tm "bare scan, 0 workers" "SET max_parallel_workers_per_gather = 0;" "SELECT count(*) FROM big WHERE features IS NOT NULL;"
  tm "bare scan, 2 workers" "SET max_parallel_workers_per_gather = 2;" "SELECT count(*) FROM big WHERE features IS NOT NULL;"
  tm "l2 = 0.1, file, 2 threads" "SET max_parallel_workers_per_gather = 2;" "$(rel "$scale")"
  tm "l2 = 0.1, file, 1 thread" "SET max_parallel_workers_per_gather = 2; SET dperm.training_threads = 1;" "$(rel "$scale")"
  tm "l2 = 0.1, no file, 2 workers" "SET max_parallel_workers_per_gather = 2; SET dperm.streaming_spill = off;" "$(rel "$scale")"
  tm "l2 = 0.1, no file, 0 workers" "SET max_parallel_workers_per_gather = 0; SET dperm.streaming_spill = off;" "$(rel "$scale")"
  tm "default delta = 1e-6, file, 2 threads" "SET max_parallel_workers_per_gather = 2;" "$(rel "$default")"
done' "$n" "$d" "$rounds"
