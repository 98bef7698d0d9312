#!/usr/bin/env bash
# dperm.progress: a release's row is visible from another session
# while it runs, with its relation, algorithm, phase, pass, passes planned
# and rows read; it is gone once the release returns, errors or is cancelled
# (in the same session and transaction, not only when the backend exits);
# another role does not see it (pg_read_all_stats does); and no
# pg_stat_progress_* view lists it.
#   (a) dperm.train, forced streaming, on a 200k-row table, parallel passes
#       (the calibration run and the cancelled one in (c) are serial)
#   (b) the in-memory aggregate called directly, and dperm.train in memory:
#       the rows read (pass 1 of 1), then the iterations done of the plan's
#   (c) cancel (top level, and caught in a PL/pgSQL block), a budget
#       refusal and an error while the rows are read inside a savepoint, a cursor
#       closed before its last group is finalised
#   (d) roles: another role sees nothing; the same role and
#       pg_read_all_stats see the row
#   COPY (SELECT dp_logreg(...)) TO: COPY keeps its progress row; dperm
#   reports nothing rather than overwrite it.
# Run inside pg_virtualenv -t:  pg_virtualenv -t bash test/progress.sh
set -euo pipefail
DB=dperm_progress
N=200000
psql_q() { psql -X -q -v ON_ERROR_STOP=1 -At -d $DB "$@"; }
fail() { echo "progress: FAILED: $*"; exit 1; }
now_ms() { date +%s%3N; }
pw=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
ALICE=regress_progress_alice
BOB=regress_progress_bob
STATS=regress_progress_stats
out=$(mktemp -d)
cleanup() {
  jobs -p | xargs -r kill 2>/dev/null || true
  dropdb --if-exists $DB >/dev/null 2>&1 || true
  for r in $ALICE $BOB $STATS; do psql -X -q -d postgres -c "DROP ROLE IF EXISTS $r" >/dev/null 2>&1 || true; done
  rm -rf "$out"
}
trap cleanup EXIT

dropdb --if-exists $DB >/dev/null 2>&1 || true
createdb $DB
psql_q >/dev/null <<SQL
SET client_min_messages = warning;
CREATE EXTENSION dperm;
DROP ROLE IF EXISTS $ALICE; DROP ROLE IF EXISTS $BOB; DROP ROLE IF EXISTS $STATS;
CREATE ROLE $ALICE LOGIN PASSWORD '$pw';
CREATE ROLE $BOB LOGIN PASSWORD '$pw';
CREATE ROLE $STATS LOGIN PASSWORD '$pw' IN ROLE pg_read_all_stats;
CREATE TABLE big AS
  SELECT ARRAY[sin(i), cos(i), sin(2 * i), cos(3 * i), 0.5] AS f,
         sin(i) + cos(3 * i) > 0 AS y, i % 3 AS g
    FROM generate_series(1, $N) i;
ALTER TABLE big OWNER TO $ALICE;
ANALYZE big;
CREATE TABLE ragged AS
  SELECT CASE WHEN i = 500 THEN ARRAY[1.0]::float8[] ELSE ARRAY[sin(i), cos(i)] END AS f,
         i % 2 = 0 AS y
    FROM generate_series(1, 1000) i;
CREATE TABLE small AS SELECT ARRAY[sin(i), cos(i)] AS f, i % 2 = 0 AS y FROM generate_series(1, 1000) i;
SELECT dperm.set_budget('small', 1.0);
-- an unbudgeted copy, for a grouped (HAVING) release: one on small itself
-- would be refused before it read a row (it must read every row of small)
CREATE TABLE small_free AS SELECT * FROM small;
-- The first dperm.progress row of backend \`victim\` that satisfies \`cond\`
-- (polled every 10 ms for up to \`seconds\`), as jsonb; NULL if none came.
CREATE FUNCTION wait_for_progress(victim int, cond text, seconds float8 DEFAULT 60)
  RETURNS jsonb LANGUAGE plpgsql AS \$\$
DECLARE
  t0 timestamptz := clock_timestamp();
  r jsonb;
BEGIN
  LOOP
    PERFORM pg_stat_clear_snapshot();
    EXECUTE format('SELECT to_jsonb(p) FROM dperm.progress p WHERE p.pid = \$1 AND (%s)', cond)
      INTO r USING victim;
    IF r IS NOT NULL OR clock_timestamp() - t0 > seconds * interval '1 s' THEN RETURN r; END IF;
    PERFORM pg_sleep(0.01);
  END LOOP;
END \$\$;
-- This backend's dperm.progress rows, read afresh (the statistics snapshot
-- otherwise lasts until the end of the transaction).
CREATE FUNCTION own_progress_rows() RETURNS bigint LANGUAGE plpgsql AS \$\$
BEGIN
  PERFORM pg_stat_clear_snapshot();
  RETURN (SELECT count(*) FROM dperm.progress WHERE pid = pg_backend_pid());
END \$\$;
-- How many rows backend \`victim\` has in the six pg_stat_progress_* views.
CREATE FUNCTION system_progress_rows(victim int) RETURNS bigint LANGUAGE sql AS \$\$
  SELECT (SELECT count(*) FROM pg_stat_progress_vacuum WHERE pid = victim)
       + (SELECT count(*) FROM pg_stat_progress_analyze WHERE pid = victim)
       + (SELECT count(*) FROM pg_stat_progress_cluster WHERE pid = victim)
       + (SELECT count(*) FROM pg_stat_progress_create_index WHERE pid = victim)
       + (SELECT count(*) FROM pg_stat_progress_basebackup WHERE pid = victim)
       + (SELECT count(*) FROM pg_stat_progress_copy WHERE pid = victim) \$\$;
SQL

# A background session as role $2 ("" = the superuser) running the psql
# script $3; its backend pid is written to $out/$1.pid first, its output
# goes to $out/$1.out. Sets bg_pid (the backend) and bg_job (psql).
start_bg() {
  local name=$1 role=$2 script=$3
  {
    printf '\\o %s\nSELECT pg_backend_pid();\n\\o\n' "$out/$name.pid"
    printf '%s\n' "$script"
  } > "$out/$name.sql"
  if [ -n "$role" ]; then
    PGPASSWORD=$pw psql -X -At -U "$role" -d $DB -f "$out/$name.sql" > "$out/$name.out" 2>&1 &
  else
    psql -X -At -d $DB -f "$out/$name.sql" > "$out/$name.out" 2>&1 &
  fi
  bg_job=$!
  for _ in $(seq 1 500); do
    [ -s "$out/$name.pid" ] && break
    sleep 0.02
  done
  bg_pid=$(tr -d ' \n' < "$out/$name.pid")
  [ -n "$bg_pid" ] || fail "$name: the background session did not start"
}
# Rows the backend's own slot shows, printed by the background script.
OWN_ROWS="SELECT 'own rows: ' || own_progress_rows();"
# Whether this backend reports a release again (after a failed one): max()
# reads the backend's own row on each row while dp_logreg reads the rows.
REPORTS_AGAIN="SELECT 'reports again: ' || max(own_progress_rows()) FROM small_free HAVING dp_logreg(f, y, dp_options(epsilon => 0.01)) IS NOT NULL;"

# ------------------------------------------------------------ calibration
# Streaming passes and in-memory iterations per second here, so that the
# releases the other session watches last a few seconds.
t0=$(now_ms)
psql_q -c "SELECT dperm.train('big', 'f', 'y', 'logistic', dp_options(epsilon => 1, l2 => 0.05, algorithm => 'output_gd', iterations => 10), mode => 'streaming') IS NOT NULL" >/dev/null
pass_ms=$(( ($(now_ms) - t0) / 10 + 1 ))
PASSES=$(( 4000 / pass_ms > 20 ? 4000 / pass_ms : 20 ))
t0=$(now_ms)
psql_q -c "SELECT dp_logreg(f, y, dp_options(epsilon => 1, l2 => 0.05, algorithm => 'output_gd', iterations => 400)) IS NOT NULL FROM big" >/dev/null
iter_us=$(( ($(now_ms) - t0) * 1000 / 400 + 1 ))
ITERS=$(( 4000000 / iter_us > 1000 ? 4000000 / iter_us : 1000 ))

# ------------------------------------------------------------ (a) streaming
# Parallel passes: the workers read most rows, and the leader reports
# their rows at the end of each pass.
PARALLEL="SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;"
gathers=$(psql_q -c "$PARALLEL" -c "EXPLAIN (COSTS OFF) SELECT dperm.pass_logreg(f, y, '{0,0,0,0,0,0}', '{0,5,1,1,1,0}') FROM big" | grep -c Gather || true)
[ "$gathers" -gt 0 ] || fail "(a) streaming: the pass's plan is not parallel"
start_bg a "" "$PARALLEL
BEGIN;
SELECT 'model: ' || (dperm.train('big', 'f', 'y', 'logistic', dp_options(epsilon => 1, l2 => 0.05, algorithm => 'output_gd', iterations => $PASSES), mode => 'streaming') IS NOT NULL);
$OWN_ROWS
COMMIT;"
row=$(psql_q -c "SELECT wait_for_progress($bg_pid, \$\$phase = 'training' AND pass >= 2 AND rows_read > 0\$\$)")
[ -n "$row" ] || fail "(a) streaming: no row in training with pass >= 2 and rows read"
ok=$(psql_q -c "SELECT r->>'relation' = 'big' AND r->>'datname' = '$DB' AND r->>'loss' = 'logistic'
                  AND r->>'mode' = 'streaming' AND r->>'algorithm' = 'output_gd'
                  AND (r->>'passes_planned')::int = $PASSES AND (r->>'pass')::int <= $PASSES
                  AND (r->>'rows_read')::bigint BETWEEN ((r->>'pass')::int - 1) * $N::bigint AND (r->>'pass')::int * $N::bigint
                  AND (r->>'started_at')::timestamptz <= now()
                  AND system_progress_rows($bg_pid) = 0
                  FROM (SELECT '$row'::jsonb AS r) s")
[ "$ok" = t ] || fail "(a) streaming: unexpected row $row (or a pg_stat_progress_* view lists it)"
a_row=$row
wait $bg_job || true
grep -q '^model: true$' "$out/a.out" || fail "(a) streaming: no model: $(cat "$out/a.out")"
grep -q '^own rows: 0$' "$out/a.out" || fail "(a) streaming: the row outlived the release: $(cat "$out/a.out")"

# ------------------------------------------------------------ (b) in memory
start_bg b "" "BEGIN;
SELECT 'model: ' || (dp_logreg(f, y, dp_options(epsilon => 1, l2 => 0.05, algorithm => 'output_gd', iterations => $ITERS)) IS NOT NULL) FROM big;
$OWN_ROWS
COMMIT;"
row=$(psql_q -c "SELECT wait_for_progress($bg_pid, 'rows_read > 0')")
[ -n "$row" ] || fail "(b) in memory: no row with rows read"
# the rows are read once (pass 1 of 1); in training, pass of passes_planned
# counts the iterations
ok=$(psql_q -c "SELECT r->>'relation' = 'big' AND r->>'mode' = 'in_memory'
                  AND CASE WHEN r->>'phase' = 'training' THEN (r->>'passes_planned') IS NULL OR (r->>'passes_planned')::int = $ITERS
                           ELSE (r->>'pass')::int = 1 AND (r->>'passes_planned')::int = 1
                                AND r->>'phase' IN ('reading rows', 'charging the ledger') END
                  AND (r->>'rows_read')::bigint <= $N FROM (SELECT '$row'::jsonb AS r) s")
[ "$ok" = t ] || fail "(b) in memory: unexpected row $row"
# training: iterations done of the plan's, while the release goes on
row=$(psql_q -c "SELECT wait_for_progress($bg_pid, \$\$phase = 'training' AND pass > 0\$\$)")
ok=$(psql_q -c "SELECT r->>'algorithm' = 'output_gd' AND (r->>'rows_read')::bigint = $N
                  AND (r->>'passes_planned')::int = $ITERS AND (r->>'pass')::int BETWEEN 1 AND $ITERS
                  AND system_progress_rows($bg_pid) = 0 FROM (SELECT '$row'::jsonb AS r) s")
[ "$ok" = t ] || fail "(b) in memory: training row $row should show all $N rows read and iterations done of $ITERS"
# and it moves on
seen=$(psql_q -c "SELECT '$row'::jsonb->>'pass'")
row2=$(psql_q -c "SELECT wait_for_progress($bg_pid, \$\$phase = 'training' AND pass > $seen\$\$)")
[ -n "$row2" ] || fail "(b) in memory: the iterations did not move on from $row"
b_row=$row
wait $bg_job || true
grep -q '^model: true$' "$out/b.out" || fail "(b) in memory: no model: $(cat "$out/b.out")"
grep -q '^own rows: 0$' "$out/b.out" || fail "(b) in memory: the row outlived the release: $(cat "$out/b.out")"

# dperm.train in memory: dperm.train's row, the aggregate's rows counted in it
start_bg b2 "" "BEGIN;
SELECT 'model: ' || (dperm.train('big', 'f', 'y', 'logistic', dp_options(epsilon => 1, l2 => 0.05, algorithm => 'output_gd', iterations => $ITERS), mode => 'in_memory') IS NOT NULL);
$OWN_ROWS
COMMIT;"
row=$(psql_q -c "SELECT wait_for_progress($bg_pid, \$\$phase = 'training' AND pass > 0\$\$)")
ok=$(psql_q -c "SELECT r->>'relation' = 'big' AND r->>'mode' = 'in_memory' AND r->>'algorithm' = 'output_gd'
                  AND (r->>'passes_planned')::int = $ITERS AND (r->>'pass')::int BETWEEN 1 AND $ITERS
                  AND (r->>'rows_read')::bigint = $N FROM (SELECT '$row'::jsonb AS r) s")
[ "$ok" = t ] || fail "(b) dperm.train in memory: unexpected row $row"
wait $bg_job || true
grep -q '^own rows: 0$' "$out/b2.out" || fail "(b) dperm.train in memory: the row outlived the release: $(cat "$out/b2.out")"

# ------------------------------------------------------------ (c) failures
LONG_STREAM="dperm.train('big', 'f', 'y', 'logistic', dp_options(epsilon => 1, l2 => 0.05, algorithm => 'output_gd', iterations => 1000000), mode => 'streaming')"
LONG_MEMORY="dp_options(epsilon => 1, l2 => 0.05, algorithm => 'output_gd', iterations => 5000000)"
# a top-level cancel of a streaming release
start_bg c1 "" "SELECT $LONG_STREAM IS NOT NULL;
$OWN_ROWS
$REPORTS_AGAIN"
row=$(psql_q -c "SELECT wait_for_progress($bg_pid, 'pass >= 1')")
[ -n "$row" ] || fail "(c) cancel: the streaming release never showed a pass"
psql_q -c "SELECT pg_cancel_backend($bg_pid)" >/dev/null
wait $bg_job || true
grep -q 'canceling statement due to user request' "$out/c1.out" || fail "(c) cancel: not cancelled: $(cat "$out/c1.out")"
grep -q '^own rows: 0$' "$out/c1.out" || fail "(c) cancel: a stale row after the cancel: $(cat "$out/c1.out")"
grep -q '^reports again: 1$' "$out/c1.out" || fail "(c) cancel: the backend no longer reports: $(cat "$out/c1.out")"
# a cancel caught by a PL/pgSQL exception block: the subtransaction's abort
# ends the row while the transaction goes on
start_bg c2 "" "DO \$\$ BEGIN
  BEGIN
    PERFORM dp_logreg(f, y, $LONG_MEMORY) FROM big;
  EXCEPTION WHEN query_canceled THEN
    RAISE NOTICE 'caught the cancel';
  END;
  RAISE NOTICE 'own rows after the catch: %', own_progress_rows();
END \$\$;"
row=$(psql_q -c "SELECT wait_for_progress($bg_pid, \$\$phase = 'training'\$\$)")
[ -n "$row" ] || fail "(c) caught cancel: the in-memory release never reached training"
psql_q -c "SELECT pg_cancel_backend($bg_pid)" >/dev/null
wait $bg_job || true
grep -q 'caught the cancel' "$out/c2.out" || fail "(c) caught cancel: $(cat "$out/c2.out")"
grep -q 'own rows after the catch: 0' "$out/c2.out" || fail "(c) caught cancel: a stale row: $(cat "$out/c2.out")"
# errors inside savepoints: a budget refusal (streaming, after the row
# began) and an error while the rows are read (in memory: row 500's
# features expression divides by zero; dperm itself raises no row-dependent
# error, a ragged row is padded); a cursor closed before its groups were all
# finalised
out_c3=$(psql -X -At -d $DB 2>&1 <<SQL || true
BEGIN;
SAVEPOINT s;
SELECT dperm.train('small', 'f', 'y', 'logistic', dp_options(epsilon => 2, dimension => 2), mode => 'streaming');
ROLLBACK TO s;
SELECT 'after refusal: ' || own_progress_rows();
$REPORTS_AGAIN
SAVEPOINT s;
SELECT dp_logreg(ARRAY[f[1], 1.0 / (cardinality(f) - 1)], y, dp_options(epsilon => 0.1)) FROM ragged;
ROLLBACK TO s;
SELECT 'after row error: ' || own_progress_rows();
SET LOCAL enable_sort = off;
DECLARE c CURSOR FOR SELECT g, dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1)) IS NOT NULL FROM big GROUP BY g;
FETCH 1 FROM c;
CLOSE c;
SELECT 'after close: ' || own_progress_rows();
COMMIT;
SQL
)
grep -q 'does not fit in the privacy budget of relation public.small' <<<"$out_c3" || fail "(c) the budget refusal did not happen: $out_c3"
grep -q 'division by zero' <<<"$out_c3" || fail "(c) the row error did not happen: $out_c3"
for what in 'after refusal: 0' 'reports again: 1' 'after row error: 0' 'after close: 0'; do
  grep -q "^$what\$" <<<"$out_c3" || fail "(c) stale row ($what expected): $out_c3"
done

# ------------------------------------------------------------ (d) roles
start_bg d "$ALICE" "SELECT dp_logreg(f, y, $LONG_MEMORY) IS NOT NULL FROM big;"
row=$(psql_q -c "SELECT wait_for_progress($bg_pid, 'rows_read > 0')")
[ -n "$row" ] || fail "(d) roles: no row for $ALICE's release"
as() { PGPASSWORD=$pw psql -X -q -v ON_ERROR_STOP=1 -At -U "$1" -d $DB -c "$2"; }
seen_bob=$(as $BOB "SELECT count(*) FROM dperm.progress WHERE pid = $bg_pid")
seen_bob_all=$(as $BOB "SELECT count(*) FROM dperm.progress_info()")
seen_alice=$(as $ALICE "SELECT count(*) FROM dperm.progress WHERE pid = $bg_pid AND relation = 'big'::regclass")
seen_stats=$(as $STATS "SELECT count(*) FROM dperm.progress WHERE pid = $bg_pid AND rows_read > 0")
psql_q -c "SELECT pg_cancel_backend($bg_pid)" >/dev/null
wait $bg_job || true
[ "$seen_bob" = 0 ] && [ "$seen_bob_all" = 0 ] || fail "(d) roles: $BOB sees $ALICE's release ($seen_bob, $seen_bob_all)"
[ "$seen_alice" = 1 ] || fail "(d) roles: $ALICE does not see her own release from another session"
[ "$seen_stats" = 1 ] || fail "(d) roles: a pg_read_all_stats member does not see the release"

# ------------------------------------------------------------ COPY
start_bg copy "" "COPY (SELECT dp_logreg(f, y, $LONG_MEMORY) IS NOT NULL FROM big) TO STDOUT;"
copy_seen=""
for _ in $(seq 1 500); do
  copy_seen=$(psql_q -c "SELECT count(*) FROM pg_stat_progress_copy WHERE pid = $bg_pid")
  [ "$copy_seen" = 1 ] && break
  sleep 0.02
done
sleep 1  # the aggregate is reading or training by now
copy_after=$(psql_q -c "SELECT count(*) FROM pg_stat_progress_copy WHERE pid = $bg_pid AND command = 'COPY TO'")
dperm_rows=$(psql_q -c "SELECT count(*) FROM dperm.progress WHERE pid = $bg_pid")
psql_q -c "SELECT pg_cancel_backend($bg_pid)" >/dev/null
wait $bg_job || true
[ "$copy_seen" = 1 ] && [ "$copy_after" = 1 ] && [ "$dperm_rows" = 0 ] ||
  fail "COPY: pg_stat_progress_copy rows $copy_seen then $copy_after, dperm.progress rows $dperm_rows"

echo "progress: ok (streaming: $PASSES passes of ~${pass_ms} ms (parallel), seen $a_row;" \
     "in memory: $ITERS iterations, seen $b_row; rows end on success, cancel, caught cancel," \
     "refusal, row error, cursor close; other roles see nothing; no pg_stat_progress_* row)"
