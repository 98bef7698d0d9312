#!/usr/bin/env bash
# Per-row cost beyond a bare scan: a synthetic
# N x D table (generated in SQL), then, interleaved over REPEAT rounds,
#   scan       SELECT count(features) FROM t (the bare scan)
#   in_memory  SELECT dp_logreg(features, label, ... iterations => 1 ...)
#              (one buffered copy of every row, one gradient step)
#   in_memory11  the same with iterations => 11: (11 - 1) / 10 is one
#              gradient pass over the buffer, and in_memory minus that pass
#              is what the aggregate itself adds (the buffered copy of every
#              row, the offset statistic, the plan and the charge)
#   pass       one streaming pass: dperm.train(..., mode => 'streaming') with
#              iterations => 11 minus iterations => 1, over 10
# and prints the medians and the ns per row beyond the scan. Serial plans
# (max_parallel_workers_per_gather = 0).
#
# Usage (dperm built and installed; hold the lock, the system PostgreSQL is
# shared):
#   flock -o /tmp/dperm-pg.lock bash bench/scripts/time/row_cost.sh [N] [D] [REPEAT]
set -euo pipefail
cd "$(dirname "$0")/../../.."
N=${1:-1000000}
D=${2:-42}
REPEAT=${3:-5}
OUT=$(mktemp)

pg_virtualenv -t bash -c '
  set -euo pipefail
  N=$0; D=$1; REPEAT=$2; OUT=$3
  psql() { command psql -X -q -v ON_ERROR_STOP=1 "$@"; }
  psql -c "CREATE EXTENSION dperm"
  # 0.15 sin(...) per feature: ||x|| <= 0.15 sqrt(D), rows with D > 44 may be clipped.
  cols=$(for k in $(seq 1 $D); do printf "0.15 * sin(%d * i + %d)," $k $((k * k)); done)
  psql -c "CREATE TABLE t AS SELECT ARRAY[${cols%,}]::float8[] AS features,
             sin(i) + sin(2 * i + 4) > 0 AS label FROM generate_series(1, $N) i" \
       -c "VACUUM ANALYZE t"
  secs() {  # query -> seconds
    printf "%s\n" "SET max_parallel_workers_per_gather = 0;" "SET dperm.max_buffer = '\''8GB'\'';" \
      "SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset" "SELECT ($1) IS NULL AS r \gset" \
      "SELECT extract(epoch FROM clock_timestamp()) - :t0;" | psql -At -f -
  }
  opts() { echo "dp_options(epsilon => 1, l2 => 0.1, algorithm => '\''output_gd'\'', iterations => $1)"; }
  train() { echo "dperm.train('\''t'\'', '\''features'\'', '\''label'\'', '\''logistic'\'', $(opts $1), mode => '\''streaming'\'')"; }
  secs "SELECT count(features) FROM t" >/dev/null  # warm the cache
  for r in $(seq 1 $REPEAT); do
    echo "scan $(secs "SELECT count(features) FROM t")" >> "$OUT"
    echo "in_memory $(secs "SELECT dp_logreg(features, label, $(opts 1)) FROM t")" >> "$OUT"
    echo "in_memory11 $(secs "SELECT dp_logreg(features, label, $(opts 11)) FROM t")" >> "$OUT"
    echo "stream1 $(secs "SELECT $(train 1)")" >> "$OUT"
    echo "stream11 $(secs "SELECT $(train 11)")" >> "$OUT"
  done
' "$N" "$D" "$REPEAT" "$OUT"

python3 - "$N" "$D" "$OUT" <<'EOF'
import statistics, sys
n, d = int(sys.argv[1]), int(sys.argv[2])
t = {}
for line in open(sys.argv[3]):
    k, v = line.split()
    t.setdefault(k, []).append(float(v))
m = {k: statistics.median(v) for k, v in t.items()}
scan = m["scan"]
per_pass = (m["stream11"] - m["stream1"]) / 10
mem_pass = (m["in_memory11"] - m["in_memory"]) / 10
aggregate = m["in_memory"] - mem_pass
print(f"n = {n}, d = {d}, medians of {len(t['scan'])} interleaved rounds, serial")
print("| what | seconds | x scan | ns/row beyond the scan |")
print("|---|---:|---:|---:|")
print(f"| bare scan | {scan:.3f} | 1.00 | 0 |")
print(f"| in memory, 1 iteration | {m['in_memory']:.3f} | {m['in_memory'] / scan:.2f} | {(m['in_memory'] - scan) / n * 1e9:.0f} |")
print(f"| in memory, one gradient pass over the buffer | {mem_pass:.3f} | {mem_pass / scan:.2f} | {mem_pass / n * 1e9:.0f} (of the pass itself) |")
print(f"| in memory, 1 iteration minus its gradient pass (the aggregate: buffered rows, offset, plan, charge) | {aggregate:.3f} | {aggregate / scan:.2f} | {(aggregate - scan) / n * 1e9:.0f} |")
print(f"| streaming pass | {per_pass:.3f} | {per_pass / scan:.2f} | {(per_pass - scan) / n * 1e9:.0f} |")
EOF
rm -f "$OUT"
