#!/usr/bin/env bash
# Scoring at the speed of SQL: a synthetic N x 10 table (generated in SQL),
# one logistic model trained on it with dperm.train_model (named 'm'), then,
# interleaved over REPEAT rounds, each query in a fresh session:
#   scan          SELECT count(f) FROM t (the bare scan)
#   hand_sql      sum(1 / (1 + exp(-(w1 * f[1] + ... + w10 * f[10] + b)))),
#                 the model's coefficients written into the query
#   dp_predict    sum(dp_predict(m, f)), m from a CTE over dperm.models
#   dp_predict_subquery  the same with m a scalar subquery in the call
#   predict_class sum(dp_predict_class(m, f)), the same
#   predict_name  sum(dperm.predict('m', f))
# and prints the medians in ms, and each one's ratio to hand_sql. Serial
# plans (max_parallel_workers_per_gather = 0). The rows lie inside the unit
# ball, so the clipping dp_predict applies changes nothing and hand_sql is
# the same function.
#
# Usage (dperm built and installed; hold the install lock, the system
# PostgreSQL is shared):
#   flock /tmp/dperm-install.lock bash bench/scripts/time/scoring.sh [N] [REPEAT]
set -euo pipefail
cd "$(dirname "$0")/../../.."
N=${1:-1000000}
REPEAT=${2:-3}
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT

pg_virtualenv -t bash -c '
  set -euo pipefail
  N=$0; REPEAT=$1; OUT=$2
  psql() { command psql -X -q -v ON_ERROR_STOP=1 "$@"; }
  psql -c "CREATE EXTENSION dperm"
  # 0.3 sin(...) per feature: ||x|| <= 0.3 sqrt(10) < 1, no row is clipped.
  cols=$(for k in $(seq 1 10); do printf "0.3 * sin(%d * i + %d)," $k $((k * k)); done)
  psql -c "CREATE TABLE t AS SELECT ARRAY[${cols%,}]::float8[] AS f,
             sin(i) + sin(2 * i + 4) > 0 AS y FROM generate_series(1, $N) i" \
       -c "VACUUM ANALYZE t" \
       -c "SET dperm.max_buffer = '\''8GB'\''" \
       -c "SELECT dperm.train_model('\''m'\'', '\''t'\'', '\''f'\'', '\''y'\'', '\''logistic'\'',
                                    dp_options(epsilon => 1, l2 => 0.1))" >/dev/null
  # The hand-written expression: the coefficients as literals.
  hand=$(psql -At -c "SELECT string_agg(format('\''%s * f[%s]'\'', c.coefficient, substr(c.term, 2)), '\'' + '\'')
                             FILTER (WHERE c.term <> '\''intercept'\'')
                             || '\'' + '\'' || coalesce(max(c.coefficient) FILTER (WHERE c.term = '\''intercept'\''), 0)
                        FROM dperm.models, dp_coefficients(model) c WHERE name = '\''m'\''")
  model="WITH mm AS (SELECT model AS m FROM dperm.models WHERE name = '\''m'\'' AND version = 1)"
  declare -A q=(
    [scan]="SELECT count(f) FROM t"
    [hand_sql]="SELECT sum(1 / (1 + exp(-($hand)))) FROM t"
    [dp_predict]="$model SELECT sum(dp_predict(m, f)) FROM t, mm"
    [dp_predict_subquery]="SELECT sum(dp_predict((SELECT model FROM dperm.models WHERE name = '\''m'\'' AND version = 1), f)) FROM t"
    [predict_class]="$model SELECT sum(dp_predict_class(m, f)) FROM t, mm"
    [predict_name]="SELECT sum(dperm.predict('\''m'\'', f)) FROM t"
  )
  # The three scoring functions agree with the hand-written expression.
  psql -At -c "$model SELECT '\''agree '\'' || (abs(sum(dp_predict(m, f)) - sum(1 / (1 + exp(-($hand)))))
                                              < 1e-9 * count(*)
                                         AND sum(dperm.predict('\''m'\'', f)) = sum(dp_predict(m, f))
                                         AND sum(dp_predict_class(m, f)) = count(*) FILTER (WHERE dp_predict(m, f) > 0.5))
                      || '\'' '\'' || sum(dp_predict(m, f)) || '\'' '\'' || sum(1 / (1 + exp(-($hand))))
                      || '\'' '\'' || sum(dperm.predict('\''m'\'', f)) || '\'' '\'' || sum(dp_predict_class(m, f))
               FROM t, mm" >> "$OUT"
  secs() {  # query -> seconds
    printf "%s\n" "SET max_parallel_workers_per_gather = 0;" \
      "SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset" "SELECT ($1) IS NULL AS r \gset" \
      "SELECT extract(epoch FROM clock_timestamp()) - :t0;" | psql -At -f -
  }
  secs "SELECT count(f) FROM t" >/dev/null  # warm the cache
  for r in $(seq 1 $REPEAT); do
    for k in scan hand_sql dp_predict dp_predict_subquery predict_class predict_name; do
      echo "$k $(secs "${q[$k]}")" >> "$OUT"
    done
  done
' "$N" "$REPEAT" "$OUT"

python3 - "$N" "$OUT" <<'EOF'
import statistics, sys
n = int(sys.argv[1])
t = {}
for line in open(sys.argv[2]):
    k, v = line.split()[:2]
    if k == "agree":
        print("agree:", line.split(None, 1)[1].strip())
        if v != "true":
            sys.exit("scoring: the scoring functions disagree with the hand-written SQL")
        continue
    t.setdefault(k, []).append(float(v))
m = {k: statistics.median(v) * 1000 for k, v in t.items()}
print(f"{n} rows x 10 features, medians of {len(t['scan'])} interleaved rounds")
print("| query | ms | / hand SQL | ns per row beyond the scan |")
print("|---|---:|---:|---:|")
for k in ["scan", "hand_sql", "dp_predict", "dp_predict_subquery", "predict_class", "predict_name"]:
    print(f"| {k} | {m[k]:.0f} | {m[k] / m['hand_sql']:.2f} | {(m[k] - m['scan']) * 1e6 / n:.0f} |")
EOF
