#!/usr/bin/env bash
# Check-and-charge is atomic across sessions: 8 concurrent releases of
# epsilon = 0.3 against a budget of 1.0 — exactly 3 may succeed, and the
# ledger must never exceed the budget. Run inside pg_virtualenv -t.
set -euo pipefail
psql_q() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }
dropdb --if-exists dperm_concurrency >/dev/null 2>&1 || true
createdb dperm_concurrency
psql_q -d dperm_concurrency >/dev/null <<'SQL'
CREATE EXTENSION dperm;
CREATE TABLE t AS SELECT ARRAY[0.01 * i, 0.2]::float8[] AS f, i % 2 = 0 AS y FROM generate_series(1, 20000) i;
SELECT dperm.set_budget('t', 1.0);
SQL
outdir=$(mktemp -d)
for k in $(seq 1 8); do
  psql -X -At -d dperm_concurrency \
    -c "SELECT dp_logreg(f, y, dp_options(epsilon => 0.3, l2 => 1, dimension => 2)) IS NOT NULL FROM t" \
    > "$outdir/$k.out" 2>&1 &
done
wait
ok=$(cat "$outdir"/*.out | grep -c '^t$' || true)
refused=$(cat "$outdir"/*.out | grep -c 'does not fit in the privacy budget' || true)
spent=$(psql_q -d dperm_concurrency -c "SELECT epsilon_spent FROM dperm.budget_status")
releases=$(psql_q -d dperm_concurrency -c "SELECT count(*) FROM dperm.ledger")
dropdb dperm_concurrency
rm -rf "$outdir"
if [ "$ok" = 3 ] && [ "$refused" = 5 ] && [ "$releases" = 3 ]; then
  echo "concurrent charges: ok (3 released, 5 refused, epsilon spent $spent of 1.0)"
else
  echo "concurrent charges: FAILED (released $ok, refused $refused, ledger rows $releases, spent $spent)"
  exit 1
fi
