#!/usr/bin/env bash
# Budgets, the ledger, named models (every version, trained and failed),
# the dperm side of their schedules and retired budgets survive pg_dump and
# restore (they are extension configuration tables), and still refer to the
# restored relations and roles (roles by OID: regrole, dumped by name).
# Run inside pg_virtualenv -t (scripts/test.sh does).
set -euo pipefail
psql_q() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }
dropdb --if-exists dperm_dump_src >/dev/null 2>&1 || true
dropdb --if-exists dperm_dump_dst >/dev/null 2>&1 || true
createdb dperm_dump_src
psql_q -d dperm_dump_src >/dev/null <<'SQL'
CREATE EXTENSION dperm;
CREATE TABLE t AS SELECT ARRAY[0.1 * i, 0.2]::float8[] AS f, i % 2 = 0 AS y FROM generate_series(1, 50) i;
SELECT dperm.set_budget('t', 2, 1e-6);
SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2)) IS NOT NULL FROM t;
SELECT dp_logreg(f, y, dp_options(epsilon => 0.25, delta => 1e-7, l2 => 1, dimension => 2)) IS NOT NULL FROM t;
CREATE TABLE models AS SELECT dp_logreg(f, y, dp_options(epsilon => 0.25, l2 => 1, dimension => 2)) AS m FROM t;
CREATE TABLE s AS SELECT ARRAY[0.3 * cos(i), 0.3 * sin(i)] AS f, i % 3 AS c FROM generate_series(1, 60) i;
INSERT INTO models SELECT dp_softmax(f, c, dp_options(epsilon => 0.5, l2 => 1, classes => 3)) FROM s;
SQL
# named models: three trained versions and, below, a failed one (one
# statement per transaction: the ledger writer sees committed tables)
psql_q -d dperm_dump_src -c "SELECT dperm.train_model('m', 't', 'f', 'y', 'logistic', dp_options(epsilon => 0.05, l2 => 1, dimension => 2))" >/dev/null
psql_q -d dperm_dump_src -c "SELECT dperm.retrain('m')" >/dev/null
# a model on a query: its text and canonical text are dumped with it
psql_q -d dperm_dump_src -c "CREATE TABLE tq AS SELECT ARRAY[sin(i), 0.2] AS f, i % 3 = 0 AS y FROM generate_series(1, 1000) i" -c "SELECT dperm.set_budget('tq', 3)" >/dev/null
psql_q -d dperm_dump_src -c "SELECT dperm.train_model_query('q', 'SELECT f, y FROM tq WHERE f[1] > 0', 'f', 'y', 'logistic', dp_options(epsilon => 1, l2 => 1, dimension => 2))" >/dev/null
psql_q -d dperm_dump_src -c "CREATE TABLE gone AS SELECT * FROM t" >/dev/null
psql_q -d dperm_dump_src -c "SELECT dperm.train_model('g', 'gone', 'f', 'y', 'logistic', dp_options(epsilon => 0.05, l2 => 1))" >/dev/null
psql_q -d dperm_dump_src -c "DROP TABLE gone" >/dev/null
# a retired budget: released from, retired, dropped (the ledger keeps its row)
psql_q -d dperm_dump_src >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE TABLE old AS SELECT * FROM t;
SELECT dperm.set_budget('old', 1);
SELECT dp_logreg(f, y, dp_options(epsilon => 0.25, l2 => 1, dimension => 2)) IS NOT NULL FROM old;
SELECT dperm.retire_budget('old');
DROP TABLE old;
SQL
# a failed version: a run cancelled after its charge (a run refused before
# its charge, such as retrain('g') now, leaves none)
psql_q -d dperm_dump_src -c "SELECT dperm.retrain('g')" >/dev/null 2>&1 || true
psql_q -d dperm_dump_src -c "SET statement_timeout = '2s'" -c "SELECT dperm.train_model('slow', 't', 'f', 'y', 'logistic',
  dp_options(algorithm => 'output_gd', epsilon => 0.05, l2 => 1, iterations => 100000000, dimension => 2))" >/dev/null 2>&1 || true
# the dperm side of a schedule (pg_cron's job is pg_cron's to dump)
psql_q -d dperm_dump_src -c "INSERT INTO dperm.model_schedules (owner, name, cron_schedule, jobid, min_runs, scheduled_by, scheduled_at)
  SELECT r.oid, 'm', '0 3 * * *', 7, 1, r.oid, now() FROM pg_roles r WHERE r.rolname = current_user" >/dev/null
# a partition detached from a budgeted parent keeps it (dperm.lineage, by name)
psql_q -d dperm_dump_src >/dev/null <<'SQL'
CREATE TABLE pt (f float8[], y boolean, k int) PARTITION BY LIST (k);
CREATE TABLE pt_a PARTITION OF pt FOR VALUES IN (0);
SELECT dperm.set_budget('pt', 1);
ALTER TABLE pt DETACH PARTITION pt_a;
SQL
lineage="SELECT relation, ancestor FROM dperm.lineage ORDER BY 1, 2"
# roles are OIDs (regrole), dumped and restored by name
versions="SELECT owner, trained_by, name, version, status, relation, features, label, query, query_canonical, options, model::text, ledger_id, epsilon, rdp, relations, sqlstate, error FROM dperm.models ORDER BY name, version"
versions_before=$(psql_q -d dperm_dump_src -c "$versions")
retired="SELECT relation_name, epsilon, delta, accounting, epsilon_spent, releases, set_by, retired_by FROM dperm.retired_budgets"
retired_before=$(psql_q -d dperm_dump_src -c "$retired")
roles="SELECT role, role_name FROM dperm.ledger ORDER BY released_at, id; SELECT set_by FROM dperm.budgets"
roles_before=$(psql_q -d dperm_dump_src -c "$roles")
schedules="SELECT name, cron_schedule, jobid, owner = scheduled_by AND owner::text = current_user FROM dperm.model_schedules"
status="SELECT relation, epsilon_budget, delta_budget, epsilon_spent, delta_spent, releases FROM dperm.budget_status"
before=$(psql_q -d dperm_dump_src -c "$status")
model_before=$(psql_q -d dperm_dump_src -c "SELECT m::text, dp_predict_proba(m, ARRAY[0.1, 0.2]) FROM models")
createdb dperm_dump_dst
pg_dump -d dperm_dump_src | psql_q -d dperm_dump_dst >/dev/null
after=$(psql_q -d dperm_dump_dst -c "$status")
model_after=$(psql_q -d dperm_dump_dst -c "SELECT m::text, dp_predict_proba(m, ARRAY[0.1, 0.2]) FROM models")
ledger_after=$(psql_q -d dperm_dump_dst -c "SELECT count(*) FROM dperm.ledger")
versions_after=$(psql_q -d dperm_dump_dst -c "$versions")
retired_after=$(psql_q -d dperm_dump_dst -c "$retired")
roles_after=$(psql_q -d dperm_dump_dst -c "$roles")
fail=0
[ "$retired_before" = "$retired_after" ] && [ -n "$retired_after" ] || { echo "dump/restore: retired budgets differ"; echo "before: $retired_before"; echo "after:  $retired_after"; fail=1; }
[ "$roles_before" = "$roles_after" ] || { echo "dump/restore: ledger and budget roles differ"; echo "before: $roles_before"; echo "after:  $roles_after"; fail=1; }
[ "$(psql_q -d dperm_dump_dst -c "SELECT count(*) FROM dperm.ledger WHERE role = current_user::regrole")" = 10 ] \
  || { echo "dump/restore: the restored ledger rows are not the restoring role's"; fail=1; }
[ "$versions_before" = "$versions_after" ] || { echo "dump/restore: model versions differ"; echo "before: $versions_before"; echo "after:  $versions_after"; fail=1; }
[ "$(psql_q -d dperm_dump_dst -c "SELECT count(*) || ' ' || count(*) FILTER (WHERE status = 'failed' AND ledger_id IS NOT NULL) FROM dperm.models")" = "5 1" ] \
  || { echo "dump/restore: expected 5 model versions, 1 failed after its charge"; fail=1; }
[ "$(psql_q -d dperm_dump_dst -c "$schedules")" = "m|0 3 * * *|7|t" ] || { echo "dump/restore: schedule lost"; fail=1; }
[ "$(psql_q -d dperm_dump_dst -c "SELECT dperm.predict('m', ARRAY[0.1, 0.2]) = dperm.predict('m', ARRAY[0.1, 0.2], 2)")" = t ] \
  || { echo "dump/restore: restored model does not predict"; fail=1; }
[ "$(psql_q -d dperm_dump_dst -c "$lineage")" = "pt_a|pt" ] || { echo "dump/restore: the lineage of a detached partition was lost"; fail=1; }
[ "$before" = "$after" ] || { echo "dump/restore: budget status differs"; echo "before: $before"; echo "after:  $after"; fail=1; }
[ "$model_before" = "$model_after" ] || { echo "dump/restore: model differs"; fail=1; }
[ "$ledger_after" = 10 ] || { echo "dump/restore: expected 10 ledger rows, got $ledger_after"; fail=1; }
# the restored budget still refuses to drop its relation
psql_q -d dperm_dump_dst -c "DROP TABLE t CASCADE" >/dev/null 2>&1 && { echo "dump/restore: a budgeted relation was dropped"; fail=1; }
# a release in the restored database is charged against the restored budget
overspend=$(psql_q -d dperm_dump_dst -c "SELECT dp_logreg(f, y, dp_options(epsilon => 2, l2 => 1, dimension => 2)) FROM t" 2>&1) \
  && { echo "dump/restore: an overspending release was not refused"; fail=1; }
case $overspend in
  *"does not fit in the privacy budget of relation public.t"*) ;;
  *) echo "dump/restore: the overspending release was refused for another reason: $overspend"; fail=1 ;;
esac
# the restored model retrains on the restored relation, as version 3
[ "$(psql_q -d dperm_dump_dst -c "SELECT dperm.retrain('m')")" = 3 ] || { echo "dump/restore: retrain after restore failed"; fail=1; }
# the query model re-validates its canonical text on the restored relation (a new OID)
[ "$(psql_q -d dperm_dump_dst -c "SELECT dperm.retrain('q')")" = 2 ] || { echo "dump/restore: retrain of the query model after restore failed"; fail=1; }
# Schema first, then the data with the triggers disabled (pg_restore
# --schema-only, then --data-only --disable-triggers): the ledger comes back
# without its insert trigger, so dperm.budget_totals has no row; the spend is
# still the ledger's, and the exhausted budget still refuses.
dumpfile=$(mktemp)
pg_dump -Fc -d dperm_dump_src -f "$dumpfile"
dropdb --if-exists dperm_dump_dst2 >/dev/null 2>&1 || true
createdb dperm_dump_dst2
pg_restore --schema-only -d dperm_dump_dst2 "$dumpfile"
pg_restore --data-only --disable-triggers -d dperm_dump_dst2 "$dumpfile"
rm -f "$dumpfile"
after2=$(psql_q -d dperm_dump_dst2 -c "$status")
[ "$before" = "$after2" ] || { echo "data-only restore (--disable-triggers): budget status differs"; echo "before: $before"; echo "after:  $after2"; fail=1; }
overspend=$(psql_q -d dperm_dump_dst2 -c "SELECT dp_logreg(f, y, dp_options(epsilon => 1.5, l2 => 1, dimension => 2)) IS NOT NULL FROM t" 2>&1) \
  && { echo "data-only restore (--disable-triggers): an overspending release was not refused"; fail=1; }
case $overspend in
  *"does not fit in the privacy budget of relation public.t"*) ;;
  *) echo "data-only restore (--disable-triggers): the overspending release was refused for another reason: $overspend"; fail=1 ;;
esac
[ "$(psql_q -d dperm_dump_dst2 -c "$lineage")" = "pt_a|pt" ] || { echo "data-only restore: the lineage of a detached partition was lost"; fail=1; }
# the writer recounted the totals before its check: they match the ledger
[ "$(psql_q -d dperm_dump_dst2 -c "SELECT NOT dperm.budget_totals_stale() AND (SELECT releases FROM dperm.budget_totals WHERE relation = 't'::regclass) = 6")" = t ] \
  || { echo "data-only restore (--disable-triggers): the totals were not recounted"; fail=1; }
[ "$(psql_q -d dperm_dump_dst2 -c "$status")" = "$before" ] || { echo "data-only restore: budget status changed after the recount"; fail=1; }
dropdb dperm_dump_src; dropdb dperm_dump_dst; dropdb dperm_dump_dst2
[ $fail = 0 ] && echo "dump/restore: ok (budget status: $after)"
exit $fail
