#!/usr/bin/env bash
# No lock one role holds delays another role's release (docs/user-guide.md,
# "No role can stall another"): role A calls each dperm function it may call
# (and the DDL dperm's event triggers follow) inside a transaction it leaves
# open; meanwhile role B's releases on its own budgeted table, as an
# aggregate and as a named model's version, must succeed well inside B's
# dperm.ledger_wait_timeout. Some of A's earlier releases were charged to
# both A's and B's tables (a join), so A's ledger rows name B's table too.
# Run inside pg_virtualenv, with and without the preload:
#   pg_virtualenv -t -o max_worker_processes=40 bash test/role_locks.sh
#   pg_virtualenv -t -o max_worker_processes=40 -o shared_preload_libraries=dperm bash test/role_locks.sh
set -euo pipefail
psql_q() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }
DB=dperm_role_locks
fail() { echo "role_locks ($mode): FAILED: $*" | tee /dev/stderr; exit 1; }
now_ms() { date +%s%3N; }
A=regress_locks_a
B=regress_locks_b
B_TIMEOUT_MS=4000   # B's dperm.ledger_wait_timeout
B_LIMIT_MS=3000     # B's releases must finish within this
pw=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')

preload=$(psql_q -d postgres -c "SELECT 'dperm' = ANY (string_to_array(
  replace(current_setting('shared_preload_libraries'), ' ', ''), ','))")
if [ "$preload" = t ]; then mode="preloaded"; else mode="no preload"; fi

dropdb --if-exists $DB >/dev/null 2>&1 || true
psql_q -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS $A" -c "DROP ROLE IF EXISTS $B" >/dev/null
createdb $DB
out=$(mktemp -d)
chmod 777 "$out"
hold_pid=
cleanup() {
  [ -n "$hold_pid" ] && kill "$hold_pid" 2>/dev/null || true
  rm -rf "$out"
}
trap cleanup EXIT
psql_q -d $DB >/dev/null <<SQL
CREATE EXTENSION dperm;
CREATE ROLE $A LOGIN PASSWORD '$pw';
CREATE ROLE $B LOGIN PASSWORD '$pw';
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
CREATE SCHEMA a AUTHORIZATION $A;
CREATE TABLE pub AS
  SELECT ARRAY[random(), random()] AS f, random() < 0.5 AS y, i % 50 AS uid FROM generate_series(1, 200) i;
CREATE TABLE b_t AS SELECT * FROM pub;
ALTER TABLE b_t OWNER TO $B;
SELECT dperm.set_budget('b_t', 1000, 0, 'basic');
GRANT SELECT ON b_t TO $A;
GRANT SELECT ON pub TO $A;
SQL
# A's tables: budgeted ones, a partitioned one, one to move, one to retire,
# one to protect; releases charged to A's and B's tables together.
PGPASSWORD=$pw psql_q -U $A -d $DB >/dev/null <<SQL
SET search_path = a, public;
CREATE TABLE a_t AS SELECT * FROM public.pub;
SELECT dperm.set_budget('a_t', 100);
CREATE TABLE a_old AS SELECT * FROM public.pub;
SELECT dperm.set_budget('a_old', 100);
CREATE TABLE a_new AS SELECT * FROM public.pub;
CREATE TABLE a_retire AS SELECT * FROM public.pub;
SELECT dperm.set_budget('a_retire', 100);
CREATE TABLE a_prot AS SELECT * FROM public.pub;
CREATE TABLE a_part (f float8[], y boolean, uid int) PARTITION BY LIST (uid);
CREATE TABLE a_part_0 PARTITION OF a_part FOR VALUES IN (0);
CREATE TABLE a_part_rest PARTITION OF a_part DEFAULT;
INSERT INTO a_part SELECT * FROM public.pub;
SELECT dperm.set_budget('a_part', 100, privacy_unit => 'uid', max_rows_per_unit => 10);
SELECT dperm.protect('a_part');
CREATE TABLE a_unit AS SELECT * FROM public.pub;
SELECT dperm.set_budget('a_unit', 100, privacy_unit => 'uid', max_rows_per_unit => 10);
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 1, dimension => 2)) IS NOT NULL
  FROM (SELECT f, y FROM a_old UNION ALL SELECT f, y FROM public.b_t) ab;
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 1, dimension => 2)) IS NOT NULL
  FROM (SELECT f, y FROM a_t UNION ALL SELECT f, y FROM public.b_t) ab;
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 1, dimension => 2)) IS NOT NULL
  FROM (SELECT f, y FROM a_retire UNION ALL SELECT f, y FROM public.b_t) ab;
SELECT dperm.train_model('a_m', 'a_t', 'f', 'y', 'logistic', dp_options(epsilon => 0.1, l2 => 1, dimension => 2));
SQL
PGPASSWORD=$pw psql_q -U $B -d $DB >/dev/null <<SQL
SELECT dperm.train_model('b_m', 'b_t', 'f', 'y', 'logistic', dp_options(epsilon => 0.1, l2 => 1, dimension => 2));
SQL

B_RELEASE="SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 1, dimension => 2)) IS NOT NULL FROM b_t"
B_MODEL="SELECT dperm.retrain('b_m') > 0"

# A runs "$2" in a transaction it leaves open (BEGIN; ...; sleep); B releases
# meanwhile and must finish within B_LIMIT_MS.
check() {
  local label=$1 sql=$2
  PGPASSWORD=$pw psql -X -q -v ON_ERROR_STOP=1 -At -U $A -d $DB >"$out/hold" 2>&1 <<SQL &
SET search_path = a, public;
SET application_name = 'role_locks_hold';
BEGIN;
$sql;
SELECT pg_sleep(30);
COMMIT;
SQL
  hold_pid=$!
  # Wait for A to reach its sleep (or to fail).
  local waited=0
  until [ "$(psql_q -d $DB -c "SELECT count(*) FROM pg_stat_activity
              WHERE application_name = 'role_locks_hold' AND query LIKE 'SELECT pg_sleep%'")" = 1 ]; do
    kill -0 $hold_pid 2>/dev/null || fail "$label: A's transaction ended early: $(cat "$out/hold")"
    sleep 0.1
    waited=$((waited + 1))
    [ $waited -lt 300 ] || fail "$label: A's transaction never reached its sleep"
  done
  for release in "$B_RELEASE" "$B_MODEL"; do
    local t0 ms
    t0=$(now_ms)
    PGPASSWORD=$pw PGOPTIONS="-c dperm.ledger_wait_timeout=$B_TIMEOUT_MS" \
      psql -X -At -U $B -d $DB -c "$release" >"$out/b" 2>&1 || true
    ms=$(( $(now_ms) - t0 ))
    [ "$(cat "$out/b")" = t ] || fail "$label: B's release failed while A's transaction was open: $(cat "$out/b")"
    [ $ms -lt $B_LIMIT_MS ] || fail "$label: B's release took $ms ms while A's transaction was open"
  done
  psql_q -d $DB -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity
                     WHERE application_name = 'role_locks_hold'" >/dev/null
  wait $hold_pid 2>/dev/null || true
  hold_pid=
  echo "role_locks ($mode): $label: B not delayed"
}

check "move_budget" "SELECT dperm.move_budget('a_old', 'a_new')"
check "set_budget" "SELECT dperm.set_budget('a_t', 50)"
check "set_budget's unit" "SELECT dperm.set_budget('a_unit', 60, max_rows_per_unit => 5)"
check "retire_budget" "SELECT dperm.retire_budget('a_retire')"
check "protect" "SELECT dperm.protect('a_prot')"
check "train_model" "SELECT dperm.train_model('a_m2', 'a_t', 'f', 'y', 'logistic', dp_options(epsilon => 0.1, l2 => 1, dimension => 2))"
check "retrain" "SELECT dperm.retrain('a_m')"
check "evaluate" "SELECT dperm.evaluate('a_m', 'a_t', 'f', 'y', '{\"epsilon\": 0.1}')"
check "drop_model" "SELECT dperm.drop_model('a_m')"
check "a release" "SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 1, dimension => 2)) IS NOT NULL FROM a_t"
check "DETACH PARTITION" "ALTER TABLE a_part DETACH PARTITION a_part_0"
check "RENAME COLUMN of a unit" "ALTER TABLE a_unit RENAME COLUMN uid TO person"
check "DROP TABLE of a moved relation" "SELECT dperm.move_budget('a_old', 'a_new'); DROP TABLE a_old"
echo "role_locks ($mode): passed"
