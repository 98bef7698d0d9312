#!/usr/bin/env bash
# No role can stall another (README, "No role can stall another"):
#  1. A login role holds the budget row of its own table in an idle
#     transaction (an uncommitted dperm.set_budget) and queues releases
#     charged to it (dataset => its OID) from many sessions.
#     Another role's releases on its own budgeted table must finish within a
#     few seconds meanwhile; the first role's releases fail with 55P03 after
#     dperm.ledger_wait_timeout (set low here) and leave no ledger row; a
#     release that is still retrying when the lock goes away is charged once.
#  2. dperm.cron_next_run with k = 10^9, with an impossible schedule and with
#     a rare one returns or errs at once, and never outlives a 1 s
#     statement_timeout (also under EXPLAIN, where it is constant-folded).
#  3. dp_softmax with classes => 99999 and dp_svrg is refused (54000) under a
#     lowered dperm.max_release_memory before it is charged, and a large but
#     allowed softmax release stops within a second or two of a cancel and
#     of statement_timeout.
# Run inside pg_virtualenv, with and without the preload:
#   pg_virtualenv -t -o max_worker_processes=40 bash test/stall.sh
#   pg_virtualenv -t -o max_worker_processes=40 -o shared_preload_libraries=dperm bash test/stall.sh
set -euo pipefail
psql_q() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }
DB=dperm_stall
fail() { echo "stall ($mode): FAILED: $*"; exit 1; }
now_ms() { date +%s%3N; }
A=regress_stall_a
B=regress_stall_b
SESSIONS=${SESSIONS:-40}      # A's concurrent releases: as many as worker slots
A_TIMEOUT_MS=3000             # A's dperm.ledger_wait_timeout
B_LIMIT_MS=${B_LIMIT_MS:-4000}  # B's releases must finish within this
pw=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')

preload=$(psql_q -d postgres -c "SELECT 'dperm' = ANY (string_to_array(
  replace(current_setting('shared_preload_libraries'), ' ', ''), ','))")
if [ "$preload" = t ]; then mode="preloaded, persistent writer"; else mode="no preload, dynamic writer"; fi

dropdb --if-exists $DB >/dev/null 2>&1 || true
psql_q -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS $A" -c "DROP ROLE IF EXISTS $B" >/dev/null
createdb $DB
out=$(mktemp -d)
chmod 777 "$out"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$out"
}
trap cleanup EXIT
psql_q -d $DB >/dev/null <<SQL
CREATE EXTENSION dperm;
CREATE ROLE $A LOGIN PASSWORD '$pw';   -- no privilege but TEMP (granted to PUBLIC) and what follows
CREATE ROLE $B LOGIN PASSWORD '$pw';
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
CREATE TABLE pub AS
  SELECT ARRAY[random(), random()] AS f, random() < 0.5 AS y FROM generate_series(1, 200) i;
GRANT SELECT ON pub TO $A;
CREATE TABLE a_t AS SELECT 1 AS x;
ALTER TABLE a_t OWNER TO $A;
SELECT dperm.set_budget('a_t', 5);
CREATE TABLE b_t AS SELECT * FROM pub;
ALTER TABLE b_t OWNER TO $B;
SELECT dperm.set_budget('b_t', 1000, 0, 'basic');
CREATE TABLE big AS
  SELECT ARRAY[random(), random(), random(), random()] AS f, (random() * 999)::int AS k
    FROM generate_series(1, 20000) i;
GRANT SELECT ON big TO $B;
SQL

# ---------------------------------- 1. a held budget row delays only its own
# A's session: the budget row of A's table locked by an idle transaction
# until $out/release appears.
cat >"$out/holder.sql" <<SQL
\o $out/oid
SELECT 'a_t'::regclass::oid;
\o
BEGIN;
SELECT dperm.set_budget('a_t', 6);
\! while [ ! -f $out/release ]; do sleep 0.05; done
COMMIT;
\! while [ ! -f $out/done ]; do sleep 0.05; done
SQL
PGAPPNAME=stall_holder PGPASSWORD=$pw psql -X -q -At -v ON_ERROR_STOP=1 -U $A -d $DB -f "$out/holder.sql" \
  >"$out/holder.out" 2>&1 &
holder=$!
pids+=($holder)
for _ in $(seq 1 200); do
  [ "$(psql_q -d $DB -c "SELECT count(*) FROM pg_stat_activity
         WHERE application_name = 'stall_holder' AND state = 'idle in transaction'")" = 1 ] && break
  sleep 0.05
done
[ -s "$out/oid" ] || fail "A's holder did not start: $(cat "$out/holder.out")"
oid=$(cat "$out/oid")
in_ledger() {
  psql_q -d $DB -c "SELECT count(*) FROM dperm.ledger WHERE relations @> ARRAY[$1::oid::regclass]"
}
A_RELEASE="SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 1, dataset => '$oid')) IS NOT NULL FROM pub"
B_RELEASE="SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 1)) IS NOT NULL FROM b_t"

# A queues $SESSIONS releases charged to its locked budget, two each.
start_a=$(now_ms)
a_pids=()
for i in $(seq 1 "$SESSIONS"); do
  (
    for r in 1 2; do
      t0=$(now_ms)
      PGPASSWORD=$pw PGOPTIONS="-c dperm.ledger_wait_timeout=$A_TIMEOUT_MS" \
        psql -X -At -U $A -d $DB -c '\set VERBOSITY verbose' -c "$A_RELEASE" >"$out/a$i.$r" 2>&1 || true
      echo $(( $(now_ms) - t0 )) >"$out/a$i.$r.ms"
    done
  ) &
  a_pids+=($!)
done
pids+=("${a_pids[@]}")
sleep 0.5
# B releases on its own budgeted table meanwhile.
b_max=0
for r in 1 2 3; do
  t0=$(now_ms)
  got=$(PGPASSWORD=$pw psql_q -U $B -d $DB -c "$B_RELEASE" 2>&1) || fail "B's release failed while A held its budget: $got"
  ms=$(( $(now_ms) - t0 ))
  [ "$got" = t ] || fail "B's release returned '$got'"
  [ $ms -gt $b_max ] && b_max=$ms
  sleep 0.3
done
[ $b_max -lt $B_LIMIT_MS ] || fail "B's release took $b_max ms while A held its own budget row (limit $B_LIMIT_MS ms)"
b_during=$(( $(now_ms) - start_a ))
for p in "${a_pids[@]}"; do wait "$p" || true; done
a_min=999999 a_max=0
for i in $(seq 1 "$SESSIONS"); do
  for r in 1 2; do
    grep -q "ERROR:  55P03: the privacy budget of relation public.a_t is locked by an uncommitted transaction" "$out/a$i.$r" \
      || fail "A's release $i.$r did not fail with 55P03: $(cat "$out/a$i.$r")"
    grep -q "Nothing was charged" "$out/a$i.$r" || fail "A's error does not say nothing was charged"
    ms=$(cat "$out/a$i.$r.ms")
    [ $ms -lt $a_min ] && a_min=$ms
    [ $ms -gt $a_max ] && a_max=$ms
  done
done
# Each waited out its dperm.ledger_wait_timeout (not much less, not forever).
[ $a_min -ge $((A_TIMEOUT_MS - 200)) ] || fail "an A release gave up after $a_min ms, before dperm.ledger_wait_timeout"
[ $a_max -lt $((A_TIMEOUT_MS * 4)) ] || fail "an A release waited $a_max ms (dperm.ledger_wait_timeout $A_TIMEOUT_MS)"
[ "$(in_ledger "$oid")" = 0 ] || fail "A's refused releases left ledger rows"

# A release still retrying when the lock goes away is charged, once.
PGPASSWORD=$pw PGOPTIONS="-c dperm.ledger_wait_timeout=30000" psql_q -U $A -d $DB -c "$A_RELEASE" >"$out/late" 2>&1 &
late=$!
pids+=($late)
sleep 1
[ "$(in_ledger "$oid")" = 0 ] || fail "A's release was charged while its budget row was locked"
touch "$out/release"
wait $late || fail "the release retrying when the lock went away failed: $(cat "$out/late")"
[ "$(cat "$out/late")" = t ] || fail "the late release returned $(cat "$out/late")"
[ "$(in_ledger "$oid")" = 1 ] || fail "the late release was not charged exactly once"
touch "$out/done"
wait $holder || fail "A's holder failed: $(cat "$out/holder.out")"
echo "stall ($mode): 1. B's releases took at most $b_max ms while $SESSIONS sessions of A queued" \
     "releases on A's held budget row; A's failed with 55P03 after $a_min..$a_max ms" \
     "(dperm.ledger_wait_timeout = $A_TIMEOUT_MS ms), uncharged"
