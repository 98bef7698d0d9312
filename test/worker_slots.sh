#!/usr/bin/env bash
# Releases keep working when parallel query holds every background worker
# slot. On a server with max_worker_processes = 8 and
# parallel query forced on the training table:
#  1. two long parallel queries take every free worker slot; a release made
#     meanwhile must still succeed (with shared_preload_libraries = dperm at
#     once, through the persistent ledger writer; without it, after waiting
#     for a slot, within dperm.ledger_wait_timeout);
#  2. SESSIONS concurrent sessions x RELEASES releases each (dp_logreg at
#     epsilon = 0.01, every one a parallel plan) against a basic budget that
#     fits FIT of them: no error other than DP001 (budget refused), exactly
#     FIT successes, one ledger row per success, the ledger's epsilons sum to
#     successes x 0.01 and never exceed the budget.
# With preload it also checks that no dynamic "dperm ledger writer" ever
# ran. Prints the figures. Run inside pg_virtualenv, in both configurations:
#   pg_virtualenv -t -o max_worker_processes=8 bash test/worker_slots.sh
#   pg_virtualenv -t -o max_worker_processes=8 -o shared_preload_libraries=dperm bash test/worker_slots.sh
set -euo pipefail
psql_q() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }
DB=dperm_worker_slots
SESSIONS=${SESSIONS:-32}
RELEASES=${RELEASES:-10}
EPS=0.01
BUDGET=2.0
FIT=200                                 # releases of EPS that fit in BUDGET
TOTAL=$((SESSIONS * RELEASES))
fail() { echo "worker slots ($mode): FAILED: $*"; exit 1; }
now_ms() { date +%s%3N; }

preload=$(psql_q -d postgres -c "SELECT 'dperm' = ANY (string_to_array(
  replace(current_setting('shared_preload_libraries'), ' ', ''), ','))")
if [ "$preload" = t ]; then mode="preloaded, persistent writer"; else mode="no preload, dynamic writer"; fi
workers=$(psql_q -d postgres -c "SHOW max_worker_processes")
[ "$workers" = 8 ] || fail "run with -o max_worker_processes=8 (it is $workers)"
[ "$TOTAL" -gt "$FIT" ] || fail "$TOTAL releases do not exhaust the budget ($FIT fit)"
# Worker slots parallel query can take (max_parallel_workers stays at its
# default of 8): all but those of the static workers, the logical
# replication launcher's and the persistent writer's.
launchers=$(psql_q -d postgres -c "SELECT count(*) FROM pg_stat_activity
                                   WHERE backend_type = 'logical replication launcher'")
free_slots=$((workers - launchers))
[ "$preload" = t ] && free_slots=$((free_slots - 1))

dropdb --if-exists $DB >/dev/null 2>&1 || true
createdb $DB
psql_q -d $DB >/dev/null <<SQL
CREATE EXTENSION dperm;
CREATE TABLE t AS
  SELECT ARRAY[random(), random()] AS f, random() < 0.5 AS y FROM generate_series(1, 5000) i;
CREATE TABLE probe AS SELECT * FROM t;
CREATE TABLE filler AS SELECT i FROM generate_series(1, 8000) i;
ALTER TABLE t SET (parallel_workers = 4);
ALTER TABLE probe SET (parallel_workers = 4);
ALTER TABLE filler SET (parallel_workers = 4);
ANALYZE t, probe, filler;
SELECT dperm.set_budget('t', $BUDGET, 0, 'basic');
ALTER DATABASE $DB SET max_parallel_workers_per_gather = 4;
ALTER DATABASE $DB SET parallel_setup_cost = 0;
ALTER DATABASE $DB SET parallel_tuple_cost = 0;
ALTER DATABASE $DB SET min_parallel_table_scan_size = 0;
SQL
RELEASE="SELECT dp_logreg(f, y, dp_options(epsilon => $EPS, l2 => 1, dimension => 2)) IS NOT NULL AS ok FROM t"
plan=$(psql_q -d $DB -c "EXPLAIN (COSTS OFF) $RELEASE")
# The aggregate runs above the Gather (PARALLEL RESTRICTED since 0.6.0), so
# its final function charges while the leader is in parallel mode.
echo "$plan" | grep -q 'Gather' && echo "$plan" | grep -q 'Workers Planned: 4' \
  || fail "the release does not plan 4 parallel workers: $plan"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
activity() {  # parallel workers, dynamic writers, persistent writers running now
  psql_q -d postgres -F ' ' -c "SELECT count(*) FILTER (WHERE backend_type = 'parallel worker'),
      count(*) FILTER (WHERE backend_type = 'dperm ledger writer'),
      count(*) FILTER (WHERE backend_type = 'dperm persistent ledger writer')
    FROM pg_stat_activity"
}

# ------------------------------------ 1. a release while every slot is taken
# Each holder scans filler with 4 workers, sleeping a while on each row.
# Without the preload the release must wait for a slot, so the holders end
# by themselves after ~3 s (2 ms a row). With it the release needs no slot,
# and the holders sleep ~30 s (20 ms a row) so that they still hold every
# slot however slowly a loaded machine runs the release; they are cancelled
# once it has returned.
if [ "$preload" = t ]; then nap=0.02; else nap=0.002; fi
HOLD="SELECT count(*) FROM filler WHERE pg_sleep($nap) IS NOT NULL"
psql_q -d $DB -c "EXPLAIN (COSTS OFF) $HOLD" | grep -q 'Workers Planned: 4' \
  || fail "the slot holders do not plan parallel workers"
hold() { PGAPPNAME=dperm_slot_holder psql -X -q -At -d $DB -c "$HOLD" >/dev/null 2>&1; }
hold & h1=$!
hold & h2=$!
held=0
for _ in $(seq 1 100); do
  held=$(activity | cut -d' ' -f1)
  [ "$held" -ge "$free_slots" ] && break
  sleep 0.02
done
[ "$held" -ge "$free_slots" ] || fail "the holders took $held of $free_slots worker slots"
t0=$(now_ms)
probe=$(psql -X -At -d $DB -c "SELECT dp_logreg(f, y, dp_options(epsilon => $EPS, l2 => 1)) IS NOT NULL FROM probe" 2>&1 || true)
probe_ms=$(( $(now_ms) - t0 ))
still_held=$(activity | cut -d' ' -f1)
psql_q -d postgres -c "SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity
                       WHERE application_name = 'dperm_slot_holder'" >/dev/null
wait $h1 $h2 || true
[ "$probe" = t ] || fail "a release while all $free_slots slots were taken failed: $probe"
if [ "$preload" = t ]; then
  # The holders still had every slot when the release returned: it needed none.
  [ "$still_held" -ge "$free_slots" ] \
    || fail "the holders released their slots before the release returned ($still_held left)"
fi

# ------------------------------------------ 2. SESSIONS x RELEASES, parallel
echo "0 0 0" >"$out/samples"
( max_par=0; max_dyn=0; max_pers=0
  while [ ! -e "$out/stop" ]; do
    read -r par dyn pers < <(activity) || break
    [ "$par" -gt "$max_par" ] && max_par=$par
    [ "$dyn" -gt "$max_dyn" ] && max_dyn=$dyn
    [ "$pers" -gt "$max_pers" ] && max_pers=$pers
    echo "$max_par $max_dyn $max_pers" >"$out/samples"
    sleep 0.02
  done ) &
sampler=$!
t0=$(now_ms)
for s in $(seq 1 "$SESSIONS"); do
  { echo '\set VERBOSITY sqlstate'
    for _ in $(seq 1 "$RELEASES"); do echo "$RELEASE;"; done
  } | psql -X -At -d $DB >"$out/$s.out" 2>&1 &
done
wait_ok=0
for job in $(jobs -p); do
  [ "$job" = "$sampler" ] && continue
  wait "$job" || wait_ok=$?
done
wall_ms=$(( $(now_ms) - t0 ))
touch "$out/stop"; wait $sampler || true
read -r max_par max_dyn max_pers <"$out/samples"
[ "$wait_ok" = 0 ] || fail "a session's psql exited with $wait_ok"

ok=$(cat "$out"/[0-9]*.out | grep -c '^t$' || true)
refused=$(cat "$out"/[0-9]*.out | grep -c 'ERROR:  DP001$' || true)
others=$(cat "$out"/[0-9]*.out | grep -E 'ERROR|FATAL|PANIC|WARNING|server closed' | grep -vc 'ERROR:  DP001$' || true)
q() { psql_q -d $DB -c "$1"; }
rows=$(q "SELECT count(*) FROM dperm.ledger WHERE 't'::regclass = ANY (relations)")
eps_sum=$(q "SELECT coalesce(sum(epsilon), 0) FROM dperm.ledger WHERE 't'::regclass = ANY (relations)")
# "Within the budget" allows the ledger check's own relative slack of 1e-12
# for rounding in the sums (200 x 0.01 adds up to 2.0000000000000013).
sums_exact=$(q "SELECT abs(coalesce(sum(epsilon), 0) - $ok * $EPS) < 1e-9
                       AND coalesce(sum(epsilon), 0) <= $BUDGET * (1 + 1e-12)
                  FROM dperm.ledger WHERE 't'::regclass = ANY (relations)")
spent=$(q "SELECT epsilon_spent FROM dperm.budget_status WHERE relation = 't'::regclass")
within=$(q "SELECT epsilon_spent <= epsilon_budget * (1 + 1e-12) FROM dperm.budget_status WHERE relation = 't'::regclass")

if [ "$others" != 0 ]; then
  cat "$out"/[0-9]*.out | grep -E 'ERROR|FATAL|PANIC|WARNING|server closed' | grep -v 'ERROR:  DP001$' | sort | uniq -c | head
  fail "$others errors other than DP001"
fi
[ $((ok + refused)) = "$TOTAL" ] || fail "$ok released + $refused refused is not $TOTAL"
[ "$ok" = "$FIT" ] || fail "$ok releases succeeded, expected $FIT (refused $refused)"
[ "$rows" = "$ok" ] || fail "$rows ledger rows for $ok successful releases"
[ "$sums_exact" = t ] || fail "the ledger's epsilons sum to $eps_sum, expected $ok x $EPS <= $BUDGET"
[ "$within" = t ] || fail "spent $spent exceeds the budget $BUDGET"
if [ "$preload" = t ]; then
  [ "$max_dyn" = 0 ] || fail "$max_dyn dynamic ledger writers ran although dperm is preloaded"
  [ "$max_pers" -ge 1 ] || fail "the persistent ledger writer was never seen running"
fi

dropdb $DB
echo "worker slots ($mode): ok (release with all $free_slots worker slots taken by parallel queries:" \
  "ok after $probe_ms ms; $SESSIONS sessions x $RELEASES parallel releases: $ok released," \
  "$refused refused (DP001), $others other errors; ledger $rows rows, sum epsilon $eps_sum" \
  "(budget $BUDGET, spent $spent); wall time $((wall_ms / 1000)).$(( (wall_ms % 1000) / 100 )) s;" \
  "at most $max_par parallel workers, $max_dyn dynamic and $max_pers persistent ledger writers seen at once)"
