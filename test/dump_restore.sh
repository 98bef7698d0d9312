#!/usr/bin/env bash
# Budgets and the ledger survive pg_dump and restore (they are extension
# configuration tables), and still refer to the restored relations.
# Run inside pg_virtualenv (scripts/test.sh does).
set -euo pipefail
psql_q() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }
dropdb --if-exists dperm_dump_src >/dev/null 2>&1 || true
dropdb --if-exists dperm_dump_dst >/dev/null 2>&1 || true
createdb dperm_dump_src
psql_q -d dperm_dump_src >/dev/null <<'SQL'
CREATE EXTENSION dperm;
CREATE TABLE t AS SELECT ARRAY[0.1 * i, 0.2] AS f, i % 2 = 0 AS y FROM generate_series(1, 50) i;
SELECT dperm.set_budget('t', 2, 1e-6);
SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1)) IS NOT NULL FROM t;
SELECT dp_logreg(f, y, dp_options(epsilon => 0.25, delta => 1e-7, l2 => 1)) IS NOT NULL FROM t;
CREATE TABLE models AS SELECT dp_logreg(f, y, dp_options(epsilon => 0.25, l2 => 1)) AS m FROM t;
CREATE TABLE s AS SELECT ARRAY[0.3 * cos(i), 0.3 * sin(i)] AS f, i % 3 AS c FROM generate_series(1, 60) i;
INSERT INTO models SELECT dp_softmax(f, c, dp_options(epsilon => 0.5, l2 => 1, classes => 3)) FROM s;
SQL
status="SELECT relation, epsilon_budget, delta_budget, epsilon_spent, delta_spent, releases FROM dperm.budget_status"
before=$(psql_q -d dperm_dump_src -c "$status")
model_before=$(psql_q -d dperm_dump_src -c "SELECT m::text, dp_predict_proba(m, ARRAY[0.1, 0.2]) FROM models")
createdb dperm_dump_dst
pg_dump -d dperm_dump_src | psql_q -d dperm_dump_dst >/dev/null
after=$(psql_q -d dperm_dump_dst -c "$status")
model_after=$(psql_q -d dperm_dump_dst -c "SELECT m::text, dp_predict_proba(m, ARRAY[0.1, 0.2]) FROM models")
ledger_after=$(psql_q -d dperm_dump_dst -c "SELECT count(*) FROM dperm.ledger")
fail=0
[ "$before" = "$after" ] || { echo "dump/restore: budget status differs"; echo "before: $before"; echo "after:  $after"; fail=1; }
[ "$model_before" = "$model_after" ] || { echo "dump/restore: model differs"; fail=1; }
[ "$ledger_after" = 4 ] || { echo "dump/restore: expected 4 ledger rows, got $ledger_after"; fail=1; }
# a release in the restored database is charged against the restored budget
psql_q -d dperm_dump_dst -c "SELECT dp_logreg(f, y, dp_options(epsilon => 2, l2 => 1)) FROM t" >/dev/null 2>&1 \
  && { echo "dump/restore: an overspending release was not refused"; fail=1; }
dropdb dperm_dump_src; dropdb dperm_dump_dst
[ $fail = 0 ] && echo "dump/restore: ok (budget status: $after)"
exit $fail
