#!/usr/bin/env bash
# Scale benchmark (docs/scale.md). Cells (--cells, comma-
# separated; default "ladder"):
#
#  ladder    dperm.train's default release in memory and streaming, with 0 and
#            2 parallel workers, along BANK (45211 x 42) and the synthetic
#            LADDER: wall time, time / bare scan, scans of the table, the
#            backend's peak resident memory (VmHWM, which counts the shared
#            buffers it touched: shared_buffers = 128MB here).
#  parallel  the in-memory aggregate SELECT dp_logreg(...) FROM t with
#            max_parallel_workers_per_gather 0 and 2, interleaved over
#            SCALE_REPS rounds (default 5; the order alternates), on BANK and
#            the first rung of LADDER: the plans, the medians and the median
#            of the per-round ratios 2 workers / serial.
#  memory    group peak memory (the backend plus its parallel workers,
#            bench/scripts/time/group_memory.py sampling /proc) of the default release in
#            memory and streaming, 0 and 2 workers, on each rung of LADDER.
#  citus     a Citus coordinator and 2 workers (three throwaway clusters,
#            4 shards), each rung of LADDER distributed: the bare scan, the
#            default release (dperm.train streams a Citus table), passes, and
#            the traffic of one pass per shard (the query text the workers
#            log, the text of the partial state a shard returns); at the first
#            rung the seeded model against a local copy of the rows.
#  growth    time(10n)/time(n) of the default release between consecutive
#            rungs of LADDER, interleaved over SCALE_REPS rounds (in memory
#            and streaming, 0 and 2 workers, and the bare scans).
#  excess    excess empirical risk of the in-memory and streaming defaults on
#            the synthetic LADDER (test/unit/test_streaming_defaults.cpp,
#            StreamingDefaultsTable.Synthetic; no server).
#
# Usage (dperm built; install it under the lock first, then run without it:
# every cell runs on its own throwaway clusters):
#   flock -o /tmp/dperm-pg.lock make -s install
#   bash bench/scripts/time/scale.sh [--cells ladder,parallel,memory,citus,excess] [LADDER]
# LADDER: space-separated rows x features, default "452000x42 4500000x42
# 10000000x50" for the ladder, "452000x42 4500000x42" for the other cells.
# SCALE_IN_MEMORY_MAX (default 10000000) is the largest n the ladder trains
# in memory as well.
# Every release: dp_options(epsilon => 1, l2 => 0.1) without an algorithm --
# the default of its mode (in memory: bolton; streaming: output_gd, at most
# 100 passes) -- not seeded (except the Citus equality check), each charged
# to a table without a budget. The synthetic tables are generated in SQL
# (generate_series); ||x|| < 1, so no row is clipped.
set -euo pipefail
cd "$(dirname "$0")/../../.."
CELLS=ladder
if [ "${1:-}" = --cells ]; then CELLS=$2; shift 2; fi
case ",$CELLS," in
  *,ladder,*) DEFAULT_LADDER="452000x42 4500000x42 10000000x50" ;;
  *) DEFAULT_LADDER="452000x42 4500000x42" ;;
esac
LADDER=${1:-$DEFAULT_LADDER}
REPS=${SCALE_REPS:-5}
OPTS="dp_options(epsilon => 1, l2 => 0.1)"
export LADDER REPS OPTS

psql() { command psql -X -q -v ON_ERROR_STOP=1 "$@"; }
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
ratio() { echo "scale=3; $1 / $2" | bc; }

# The synthetic table s<n>x<d> (psql's connection from the environment).
make_rung() {  # rung [distributed]
  local rung=$1 n=${1%x*} d=${1#*x} cols k
  cols=$(for k in $(seq 1 "$d"); do printf "0.14 * sin(%d * i + %d)," "$k" $((k * k)); done)
  # 0.14 sin(...) per feature: ||x|| <= 0.14 sqrt(d) < 1 for d <= 50.
  local select="SELECT ARRAY[${cols%,}]::float8[] AS features,
                sin(i) + sin(2 * i + 4) + 0.3 * sin(3 * i + 9) > 0 AS label
                FROM generate_series(1, $n) i"
  if [ "${2:-}" = distributed ]; then
    psql -c "CREATE TABLE s$rung (id bigint, features float8[], label boolean)" \
         -c "SELECT create_distributed_table('s$rung', 'id')" >/dev/null
    psql -c "INSERT INTO s$rung SELECT row_number() OVER (), * FROM ($select) s"
  else
    psql -c "CREATE TABLE s$rung AS $select"
  fi
  psql -c "VACUUM ANALYZE s$rung"
}

# One measurement in a fresh backend: "seconds peak_MiB result".
run() {  # workers query
  printf "%s\n" "SET max_parallel_workers_per_gather = $1;" \
    "SET dperm.max_buffer = '16GB';" \
    "SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset" \
    "SELECT ($2) AS r \gset" \
    "SELECT round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 3), (substring(pg_read_file('/proc/self/status') from 'VmHWM:\s*(\d+)')::int / 1024), :'r';" |
    psql -At -F " " -f -
}
# The default release of `mode`, evaluated ONCE: "algorithm:iterations".
release() {  # table mode
  echo "SELECT (m->>'algorithm') || ':' || (m->'plan'->>'iterations') AS r
          FROM (SELECT dperm.train('$1', 'features', 'label', 'logistic', $OPTS, mode => '$2')::jsonb AS m) r"
}
bare() { echo "SELECT count(*) FROM $1 WHERE features IS NOT NULL"; }
row() { local out="|" x; for x in "$@"; do out="$out $x |"; done; echo "$out"; }

cell_ladder() {
  local tables="bank" t n d scan scan2 scan_b mode w secs peak out results r alg iters scans
  for rung in $LADDER; do make_rung "$rung"; tables="$tables s$rung"; done
  echo "| table | n | d | mode | workers | algorithm | seconds | x scan | scans | peak MiB |"
  echo "|---|---:|---:|---|---:|---|---:|---:|---:|---:|"
  for t in $tables; do
    n=$(psql -At -c "SELECT count(*) FROM $t")
    d=$(psql -At -c "SELECT array_length(features, 1) FROM $t LIMIT 1")
    run 0 "$(bare "$t")" >/dev/null  # warm the cache
    read -r scan _ _ < <(run 0 "$(bare "$t")")
    read -r scan2 _ _ < <(run 2 "$(bare "$t")")
    results=()
    for mode in in_memory streaming; do
      [ $mode = in_memory ] && [ "$n" -gt "${SCALE_IN_MEMORY_MAX:-10000000}" ] && continue
      for w in 0 2; do
        read -r secs peak out < <(run $w "$(release "$t" $mode)")
        results+=("$mode $w $secs $peak $out")
      done
    done
    # the bare scan again, after the releases: x scan uses the mean of both
    read -r scan_b _ _ < <(run 0 "$(bare "$t")")
    scan=$(echo "scale=4; ($scan + $scan_b) / 2" | bc)
    row "$t" "$n" "$d" "bare scan" 0 - "$scan" 1.00 1 -
    row "$t" "$n" "$d" "bare scan" 2 - "$scan2" "$(ratio "$scan2" "$scan")" 1 -
    for r in "${results[@]}"; do
      read -r mode w secs peak out <<<"$r"
      alg=${out%%:*}; iters=${out#*:}
      # scans: the count of n and d, then one aggregate (in memory) or T passes
      scans=$([ $mode = in_memory ] && echo 2 || echo $((iters + 1)))
      row "$t" "$n" "$d" $mode $w "$alg" "$secs" "$(ratio "$secs" "$scan")" $scans "$peak"
    done
  done
}

cell_parallel() {
  local first=${LADDER%% *} t q w secs s0 s2 tmp
  make_rung "$first"
  for t in bank "s$first"; do
    q="SELECT dp_logreg(features, label, $OPTS) IS NOT NULL FROM $t"
    echo "plans of $t (max_parallel_workers_per_gather = 2):"
    psql -At -c "SET max_parallel_workers_per_gather = 2" -c "EXPLAIN (COSTS OFF) $q" | sed 's/^/    aggregate: /'
    psql -At -c "SET max_parallel_workers_per_gather = 2" -c "EXPLAIN (COSTS OFF) $(bare "$t")" | sed 's/^/    bare scan: /'
    run 0 "$q" >/dev/null  # warm the cache
    tmp=$(mktemp)
    for r in $(seq 1 "$REPS"); do
      for w in $([ $((r % 2)) = 1 ] && echo "0 2" || echo "2 0"); do
        read -r secs _ _ < <(run $w "$q")
        echo "$r $w $secs" >> "$tmp"
      done
    done
    echo "rounds of $t (round workers seconds): $(tr '\n' ';' < "$tmp")"
    s0=$(awk '$2 == 0 {print $3}' "$tmp" | median)
    s2=$(awk '$2 == 2 {print $3}' "$tmp" | median)
    echo "| $t | $REPS | $s0 | $s2 | $(awk '{t[$1 " " $2] = $3} END {for (r = 1; r <= '"$REPS"'; r++)
      print t[r " 2"] / t[r " 0"]}' "$tmp" | median) |"
    rm -f "$tmp"
  done
  echo "(| table | rounds | serial median s | 2 workers median s | median of ratios 2 workers / serial |)"
}

cell_memory() {
  local rung t mode w out secs pid
  echo "| table | n | d | mode | workers | algorithm | passes | seconds | backend peak MiB | group peak MiB (sum VmHWM) | group anon peak MiB | workers seen |"
  echo "|---|---:|---:|---|---:|---|---:|---:|---:|---:|---:|---:|"
  for rung in $LADDER; do
    make_rung "$rung"; t=s$rung
    run 0 "$(bare "$t")" >/dev/null  # warm the cache
    for mw in "in_memory 0" "streaming 0" "in_memory 2" "streaming 2"; do
      read -r mode w <<<"$mw"
      out=$(mktemp -u)
      # group_memory.py starts before the query and stops when the backend
      # is idle again; psql waits for its result file.
      res=$(printf "%s\n" "SET max_parallel_workers_per_gather = $w;" "SET dperm.max_buffer = '16GB';" \
        "SELECT pg_backend_pid() AS pid \gset" "\setenv SCALE_PID :pid" \
        "\! /usr/bin/python3 bench/scripts/time/group_memory.py \$SCALE_PID $out &" \
        "\! while [ ! -e $out.ready ]; do sleep 0.01; done" \
        "SELECT r, round(extract(epoch FROM clock_timestamp() - statement_timestamp())::numeric, 3)
           FROM ($(release "$t" "$mode")) x \gset" \
        "\! while [ ! -s $out ]; do sleep 0.05; done" \
        "SELECT :'r', :round;" | psql -At -F " " -f -)
      read -r alg_iters secs <<<"$res"
      read -r lead group anon seen < "$out"; rm -f "$out"
      row "$t" "${rung%x*}" "${rung#*x}" "$mode" "$w" "${alg_iters%%:*}" \
        "$([ "$mode" = streaming ] && echo "${alg_iters#*:}" || echo -)" "$secs" "$lead" "$group" "$anon" "$seen"
    done
    psql -c "DROP TABLE $t"
  done
}

# time(10n)/time(n) of the default release, interleaved: SCALE_REPS rounds,
# each the release on every rung in turn (in memory, then streaming; serial
# and with 2 workers), plus a bare scan of each rung; the medians and the
# median of the per-round ratios between consecutive rungs.
cell_growth() {
  local rung t mode w secs tmp r prev
  for rung in $LADDER; do make_rung "$rung"; done
  tmp=$(mktemp)
  for rung in $LADDER; do run 0 "$(bare "s$rung")" >/dev/null; done  # warm the cache
  for r in $(seq 1 "$REPS"); do
    for rung in $LADDER; do
      t=s$rung
      read -r secs _ _ < <(run 0 "$(bare "$t")"); echo "$r $rung scan 0 $secs" >> "$tmp"
      for mode in in_memory streaming; do
        for w in 0 2; do
          read -r secs _ _ < <(run $w "$(release "$t" $mode)")
          echo "$r $rung $mode $w $secs" >> "$tmp"
        done
      done
    done
  done
  echo "rounds (round rung mode workers seconds): $(tr '\n' ';' < "$tmp")"
  echo "| what | workers | $(for rung in $LADDER; do printf '%s median s | ' "$rung"; done)median of per-round ratios, consecutive rungs |"
  echo "|---|---:|$(for rung in $LADDER; do printf -- '---:|'; done)---|"
  for mw in "scan 0" "in_memory 0" "in_memory 2" "streaming 0" "streaming 2"; do
    read -r mode w <<<"$mw"
    local meds="" ratios="" m
    for rung in $LADDER; do
      m=$(awk -v g="$rung" -v m="$mode" -v w="$w" '$2 == g && $3 == m && $4 == w {print $5}' "$tmp" | median)
      meds="$meds $m |"
    done
    prev=""
    for rung in $LADDER; do
      if [ -n "$prev" ]; then
        ratios="$ratios $(awk -v a="$prev" -v b="$rung" -v m="$mode" -v w="$w" \
          '$3 == m && $4 == w && $2 == a {x[$1] = $5} $3 == m && $4 == w && $2 == b {y[$1] = $5}
           END {for (r in y) print y[r] / x[r]}' "$tmp" | median)"
      fi
      prev=$rung
    done
    echo "| $mode | $w |$meds$ratios |"
  done
  rm -f "$tmp"
}

cell_excess() {
  make -s test/unit/run_unit_tests DPERM_WERROR=1 >/dev/null
  SCALE_EXCESS_LADDER=$LADDER SCALE_EXCESS_SEEDS=${SCALE_EXCESS_SEEDS:-3} \
    DPERM_SHARED=${DPERM_SHARED:-../shared} ./test/unit/run_unit_tests \
    --gtest_also_run_disabled_tests --gtest_filter='StreamingDefaultsTable.DISABLED_Synthetic' |
    grep '^|'
}

# Three throwaway clusters (test/citus_nodes.sh): coordinator n0, workers n1, n2.
citus_start() {
  local i
  . test/citus_nodes.sh
  CITUS_DIR=$(mktemp -d /tmp/scale-citus.XXXXXX)
  citus_nodes_init "$CITUS_DIR"
  # Workers: every query logged (the pass queries' size), shard tasks serial
  # (4 shard tasks already run at once on the 2 cores).
  for i in 1 2; do
    printf "log_statement = 'all'\nmax_parallel_workers_per_gather = 0\n" >> "$CITUS_DIR/n$i/postgresql.conf"
  done
  citus_nodes_start "$CITUS_DIR"
  for i in 0 1 2; do
    command psql -X -q -h "$CITUS_DIR" -p "${CITUS_PORT[$i]}" -U postgres -d postgres \
      -c "CREATE DATABASE bench" -c "\\c bench" -c "CREATE EXTENSION citus"
  done
  export PGHOST=$CITUS_DIR PGPORT=${CITUS_PORT[0]} PGUSER=postgres PGDATABASE=bench
  psql -c "SELECT citus_set_coordinator_host('127.0.0.1', ${CITUS_PORT[0]})" \
       -c "SELECT citus_add_node('127.0.0.1', ${CITUS_PORT[1]})" \
       -c "SELECT citus_add_node('127.0.0.1', ${CITUS_PORT[2]})" -c "CREATE EXTENSION dperm" >/dev/null
}
citus_stop() {
  local i
  for i in 0 1 2; do
    citus_as_pg "$(pg_config --bindir)/pg_ctl" -s -D "$CITUS_DIR/n$i" -m fast stop || true
  done
  rm -rf "$CITUS_DIR"
}
# The worker_partial_agg pass queries the workers logged past byte offsets
# $1 $2 of their logs: "queries mean_bytes max_bytes".
pass_queries() {
  /usr/bin/python3 - "$CITUS_DIR" "$1" "$2" <<'PY'
import re, sys
d, offsets = sys.argv[1], [int(x) for x in sys.argv[2:]]
sizes = []
for node, off in zip((1, 2), offsets):
    with open(f"{d}/n{node}.log", "rb") as f:
        f.seek(off)
        text = f.read().decode(errors="replace")
    # one record per log line that starts with a timestamp
    for rec in re.split(r"\n(?=\d{4}-\d\d-\d\d )", text):
        m = re.search(r"LOG:  (?:statement|execute [^:]*): (.*)", rec, re.S)
        if m and "worker_partial_agg('dperm.pass_" in m.group(1):
            sizes.append(len(m.group(1).encode()))
            last = (node, m.group(1).strip().rstrip(";"))
if sizes:
    with open(f"{d}/last_pass.sql", "w") as f:
        f.write(last[1])
    with open(f"{d}/last_pass.port", "w") as f:
        f.write(open(f"{d}/n{last[0]}/postgresql.conf").read().split("\nport = ")[1].split()[0])
print(len(sizes), round(sum(sizes) / max(len(sizes), 1)), max(sizes, default=0))
PY
}
log_size() { stat -c %s "$CITUS_DIR/n$1.log"; }

cell_citus() {
  local rung t n d scan scan_b secs out alg iters o1 o2 q_n q_mean q_max bytes first=1 diff
  citus_start
  trap citus_stop EXIT
  psql -c "ALTER SYSTEM SET citus.shard_count = 4" -c "SELECT pg_reload_conf()" >/dev/null
  echo "| table | n | d | shards | seconds (bare scan) | release seconds | x scan | algorithm | passes | pass queries on the workers | bytes per pass query (mean / max) | bytes back per shard and pass |"
  echo "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|"
  for rung in $LADDER; do
    t=s$rung; n=${rung%x*}; d=${rung#*x}
    make_rung "$rung" distributed
    run 0 "$(bare "$t")" >/dev/null  # warm the cache
    read -r scan _ _ < <(run 0 "$(bare "$t")")
    o1=$(log_size 1); o2=$(log_size 2)
    read -r secs _ out < <(run 0 "$(release "$t" auto)")
    read -r q_n q_mean q_max < <(pass_queries "$o1" "$o2")
    read -r scan_b _ _ < <(run 0 "$(bare "$t")")
    scan=$(echo "scale=4; ($scan + $scan_b) / 2" | bc)
    alg=${out%%:*}; iters=${out#*:}
    # What one shard sends back for a pass: the last pass query a worker
    # logged, run again there (its token is valid for an hour), the text of
    # its partial state (Citus moves states as text).
    bytes=$(psql -At -p "$(cat "$CITUS_DIR/last_pass.port")" \
      -c "SELECT octet_length(c::text) FROM ($(cat "$CITUS_DIR/last_pass.sql")) AS q(c)")
    row "$t" "$n" "$d" 4 "$scan" "$secs" "$(ratio "$secs" "$scan")" "$alg" "$iters" "$q_n" "$q_mean / $q_max" "$bytes"
    if [ $first = 1 ]; then
      # Where a pass's time goes on a worker: one shard, serial, the logged
      # pass (worker_partial_agg, as Citus runs it), the same aggregate
      # called directly (a superuser's dperm.internal_pass, w = 0), and a
      # bare scan of the shard; medians of 3.
      local shard wport
      shard=$(grep -o 'FROM public\.s[0-9x]*_[0-9]*' "$CITUS_DIR/last_pass.sql" | head -1 | cut -d' ' -f2)
      wport=$(cat "$CITUS_DIR/last_pass.port")
      for q in "SELECT octet_length(c::text) AS x FROM ($(cat "$CITUS_DIR/last_pass.sql")) q(c)" \
               "SELECT dperm.pass_logreg(features, label, array_fill(0::float8, ARRAY[$((d + 1))]), '{0,$d,1,1,1,0,1,1,-45,0}'::float8[]) IS NULL AS x FROM $shard" \
               "SELECT count(*) AS x FROM $shard WHERE features IS NOT NULL"; do
        echo "shard $shard, ${q:0:60}...: $(for r in 1 2 3; do
          printf "%s\n" "SET dperm.internal_pass = on;" "SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset" "$q \gset" \
            "SELECT round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 3);" | psql -At -p "$wport" -f -
        done | median) s (median of 3)"
      done
      # The seeded model of the distributed table equals a local copy's.
      psql -c "CREATE TABLE l$rung AS SELECT features, label FROM $t ORDER BY id" -c "VACUUM ANALYZE l$rung"
      diff=$(psql -At -c "SET dperm.allow_seed = on" -c "
        WITH m AS (SELECT dperm.train('$t', 'features', 'label', 'logistic',
                          dp_options(epsilon => 1, l2 => 0.1, seed => 7))::jsonb AS dist,
                          dperm.train('l$rung', 'features', 'label', 'logistic',
                          dp_options(epsilon => 1, l2 => 0.1, seed => 7), 'streaming')::jsonb AS loc)
        SELECT max(abs(a::float8 - b::float8)) || ' over ' || count(*) || ' coordinates; noise_scale equal: '
               || ((dist->'noise_scale') = (loc->'noise_scale'))
          FROM m, jsonb_array_elements_text(dist->'coefficients' || (dist->'intercept')) WITH ORDINALITY x(a, i)
          JOIN jsonb_array_elements_text(loc->'coefficients' || (loc->'intercept')) WITH ORDINALITY y(b, j) ON i = j
         GROUP BY dist, loc")
      echo "seeded model, $t (distributed) vs l$rung (local, streaming): max |difference| $diff"
      psql -c "DROP TABLE l$rung"
      first=0
    fi
    psql -c "DROP TABLE $t"
  done
  echo "ledger on the coordinator: $(psql -At -c "SELECT count(*) || ' charges; relations ' || string_agg(DISTINCT relations::regclass[]::text, ' ') FROM dperm.ledger")"
}

# The server cells run inside one throwaway cluster (this script again).
if [ -z "${SCALE_IN_CLUSTER:-}" ]; then
  for cell in ${CELLS//,/ }; do
    case $cell in
      ladder | parallel | memory | growth)
        SCALE_IN_CLUSTER=1 pg_virtualenv -t -o max_worker_processes=16 -o max_parallel_workers=8 \
          bash "$0" --cells "$cell" "$LADDER" ;;
      citus)
        echo "== citus: $(date -u '+%F %T UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
        ( cell_citus )
        echo "== end of citus: $(date -u '+%F %T UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)" ;;
      excess) cell_excess ;;
      *) echo "scale.sh: unknown cell $cell" >&2; exit 2 ;;
    esac
  done
  exit 0
fi
psql -c "CREATE EXTENSION dperm"
if [ "$CELLS" != memory ]; then
  /usr/bin/python3 bench/load_datasets.py --load bank >/dev/null 2>&1
  psql -c "VACUUM ANALYZE bank"
fi
echo "== $CELLS: $(date -u '+%F %T UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
"cell_$CELLS"
echo "== end of $CELLS: $(date -u '+%F %T UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
