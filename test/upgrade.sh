#!/usr/bin/env bash
# ALTER EXTENSION dperm UPDATE from 0.1.0 (to the default version) keeps budgets (as 'basic'), the
# ledger and models, and brings the 0.2.0 functions. Run inside pg_virtualenv.
set -euo pipefail
psql_q() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }
dropdb --if-exists dperm_upgrade >/dev/null 2>&1 || true
createdb dperm_upgrade
psql_q -d dperm_upgrade >/dev/null <<'SQL'
CREATE EXTENSION dperm VERSION '0.1.0';
CREATE TABLE t AS SELECT ARRAY[0.1 * i, 0.2] AS f, i % 2 = 0 AS y FROM generate_series(1, 50) i;
SELECT dperm.set_budget('t', 1.0);
CREATE TABLE models AS SELECT dp_logreg(f, y, dp_options(epsilon => 0.4, l2 => 1)) AS m FROM t;
ALTER EXTENSION dperm UPDATE;
SQL
fail=0
check() {  # name, query, expected
  got=$(psql_q -d dperm_upgrade -c "$2")
  [ "$got" = "$3" ] || { echo "upgrade: $1: got '$got', expected '$3'"; fail=1; }
}
check version "SELECT extversion FROM pg_extension WHERE extname = 'dperm'" "0.3.0"
check budget_kept "SELECT accounting || ' ' || epsilon FROM dperm.budgets" "basic 1"
check ledger_kept "SELECT count(*) || ' ' || bool_and(rdp IS NULL) FROM dperm.ledger" "1 true"
check status "SELECT epsilon_spent || ' ' || epsilon_remaining FROM dperm.budget_status" "0.4 0.6"
check model_kept "SELECT (m::jsonb->>'epsilon') FROM models" "0.4"
# analytic_gaussian.csv: epsilon 0.05, delta 1e-3 -> sigma 30.010328780523466
check new_function "SELECT abs(dperm.gaussian_sigma(0.05, 1e-3) / 30.010328780523466 - 1) < 1e-6" "t"
check charged_after "SELECT (dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1)) IS NOT NULL)::text FROM t" "true"
check ledger_after "SELECT count(*) || ' ' || (max(cardinality(rdp)) = 24) FROM dperm.ledger" "2 true"
dropdb dperm_upgrade
[ $fail = 0 ] && echo "upgrade 0.1.0 -> $(psql -XAtc "select default_version from pg_available_extensions where name = 'dperm'"): ok"
exit $fail
