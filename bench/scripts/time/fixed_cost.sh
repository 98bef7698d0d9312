#!/usr/bin/env bash
# Fixed cost of a release: pgbench latency of a one-row-ish
# release (dp_logreg over a 10-row table), without a budget and with one
# whose ledger holds LEDGER_ROWS earlier charges of the relation, each against
# a bare aggregate over the same table (the query's own cost). Run inside a
# throwaway cluster, once without and once with the preloaded ledger writer:
#   pg_virtualenv -t -o max_worker_processes=16 bash bench/scripts/time/fixed_cost.sh
#   pg_virtualenv -t -o max_worker_processes=16 -o shared_preload_libraries=dperm bash bench/scripts/time/fixed_cost.sh
# Prints one line per case: median and mean latency (ms) over SECONDS s.
set -euo pipefail
psql_q() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }
SECONDS_PER_CASE=${SECONDS_PER_CASE:-10}
LEDGER_ROWS=${LEDGER_ROWS:-100000}
DB=dperm_fixed_cost
tmp=$(mktemp -d); trap 'rm -rf "$tmp"; dropdb --if-exists $DB >/dev/null 2>&1 || true' EXIT
dropdb --if-exists $DB >/dev/null 2>&1 || true
createdb $DB
psql_q -d $DB >/dev/null <<'SQL'
CREATE EXTENSION dperm;
CREATE TABLE small AS SELECT ARRAY[0.1 * i, 0.2] AS f, i % 2 = 0 AS y FROM generate_series(1, 10) i;
CREATE TABLE budgeted AS SELECT * FROM small;
ANALYZE small; ANALYZE budgeted;
SQL
preload=$(psql_q -d $DB -c "SHOW shared_preload_libraries")
run() {  # name, sql
  echo "$2" > "$tmp/q.sql"
  pgbench -n -d $DB -f "$tmp/q.sql" -T "$SECONDS_PER_CASE" -c 1 -l --log-prefix="$tmp/log" >/dev/null 2>&1
  # per-transaction log: 3rd field is the latency in microseconds
  cat "$tmp"/log.* | awk '{print $3}' | sort -n | awk -v name="$1" -v pre="${preload:-none}" '
    { v[NR] = $1; s += $1 } END {
      printf "%-34s preload=%-6s n=%6d  median %7.2f ms  mean %7.2f ms\n", name, pre, NR, v[int((NR + 1) / 2)] / 1000, s / NR / 1000 }'
  rm -f "$tmp"/log.*
}
run "bare aggregate (count)" "SELECT count(f) FROM small;"
run "release, no budget" "SELECT dp_logreg(f, y, dp_options(epsilon => 0.01, l2 => 1)) IS NOT NULL FROM small;"
# A budget, and LEDGER_ROWS earlier charges of the relation (written directly:
# their curves are the one a release of epsilon 0.01 records).
psql_q -d $DB >/dev/null <<SQL
SELECT dperm.set_budget('budgeted', 1e9, 0.5);
SELECT dp_logreg(f, y, dp_options(epsilon => 0.01, l2 => 1, dimension => 2)) IS NOT NULL FROM budgeted;
INSERT INTO dperm.ledger (released_at, role, relations, relation_names, algorithm, mechanism, loss,
                          neighbors, epsilon, delta, n, d, seeded, query, rdp)
SELECT released_at, role, relations, relation_names, algorithm, mechanism, loss, neighbors,
       epsilon, delta, n, d, seeded, query, rdp
  FROM dperm.ledger, generate_series(2, $LEDGER_ROWS)
 WHERE relations = ARRAY['budgeted'::regclass];
ANALYZE dperm.ledger;
SQL
echo "ledger rows of the budgeted relation: $(psql_q -d $DB -c "SELECT count(*) FROM dperm.ledger WHERE relations @> ARRAY['budgeted'::regclass]")"
run "release, budget, ${LEDGER_ROWS} ledger rows" "SELECT dp_logreg(f, y, dp_options(epsilon => 0.01, l2 => 1, dimension => 2)) IS NOT NULL FROM budgeted;"
run "budget check alone (budget_spent)" "SELECT epsilon FROM dperm.budget_spent('budgeted', 'rdp', 0.5);"
