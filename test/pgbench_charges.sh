#!/usr/bin/env bash
# Many sessions releasing at once from the same budgeted relation, driven by
# pgbench: 16 clients x 200 transactions of test/pgbench_release.sql, each
# one release of epsilon = 0.01 from a 100-row table whose budget is 10.0
# (basic accounting), so exactly 1000 of the 3200 releases fit. Checks: every
# release that fits succeeds (1000 models), every other one is refused with
# DP001 (2200), the ledger holds exactly the 1000 successful releases (matched
# one to one by a per-transaction tag in the query text: no lost row, no extra
# row), the sum of their epsilons is 1000 x 0.01 and within the budget,
# pgbench reports no failed transaction, and no deadlock or lock timeout
# happened (pg_stat_database and the server log).
#
# Run inside pg_virtualenv -t; each release briefly uses one background worker,
# so max_worker_processes must exceed the clients by a margin:
#   pg_virtualenv -t -o max_worker_processes=40 bash test/pgbench_charges.sh
# CLIENTS and TRANSACTIONS (per client) may be set in the environment.
set -euo pipefail
psql_q() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }
DB=dperm_pgbench
CLIENTS=${CLIENTS:-16}
TRANSACTIONS=${TRANSACTIONS:-200}
EPS=0.01
BUDGET=10.0
FIT=1000                            # releases of EPS that fit in BUDGET
TOTAL=$((CLIENTS * TRANSACTIONS))
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "pgbench charges: FAILED: $*"; exit 1; }
now_ms() { date +%s%3N; }

workers=$(psql_q -d postgres -c "SHOW max_worker_processes")
[ "$workers" -ge $((CLIENTS + 4)) ] \
  || fail "max_worker_processes = $workers; run with -o max_worker_processes=$((CLIENTS + 8)) or more"
[ "$TOTAL" -gt "$FIT" ] || fail "$TOTAL releases do not exhaust the budget ($FIT fit)"

# The server log, when we can find it (pg_virtualenv's clusters are listed by
# pg_lsclusters; otherwise the logging collector's file, if any).
: "${PGPORT:=5432}"
log=$(pg_lsclusters -h 2>/dev/null | awk -v p="$PGPORT" '$3 == p { print $7; exit }' || true)
if [ -z "$log" ] || [ ! -r "$log" ]; then
  log=$(psql_q -d postgres -c "SELECT current_setting('data_directory') || '/' || pg_current_logfile()" || true)
fi
[ -n "$log" ] && [ -r "$log" ] || log=""

dropdb --if-exists $DB >/dev/null 2>&1 || true
createdb $DB
psql_q -d $DB >/dev/null <<SQL
CREATE EXTENSION dperm;
CREATE TABLE tiny AS
  SELECT ARRAY[0.01 * i, 0.2]::float8[] AS f, i % 2 = 0 AS y FROM generate_series(1, 100) i;
SELECT dperm.set_budget('tiny', $BUDGET, 0, 'basic');
CREATE TABLE outcomes (tag text NOT NULL, released boolean NOT NULL, sqlstate text, took interval NOT NULL,
                       at timestamptz NOT NULL DEFAULT clock_timestamp());
SQL
deadlocks_before=$(psql_q -d $DB -c "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
log_offset=0
[ -z "$log" ] || log_offset=$(stat -c %s "$log")

out=$(mktemp)
trap 'rm -f "$out"' EXIT
t0=$(now_ms)
rc=0
pgbench -n -c "$CLIENTS" -j 4 -t "$TRANSACTIONS" -D n=0 -f "$here/pgbench_release.sql" $DB >"$out" 2>&1 || rc=$?
runtime_ms=$(( $(now_ms) - t0 ))
[ $rc = 0 ] || { cat "$out"; fail "pgbench exited with $rc"; }
processed=$(sed -n 's/^number of transactions actually processed: \([0-9]*\)\/.*/\1/p' "$out")
failed=$(sed -n 's/^number of failed transactions: \([0-9]*\) .*/\1/p' "$out")
tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$out")
latency=$(sed -n 's/^latency average = \(.*\)$/\1/p' "$out")
[ "$processed" = "$TOTAL" ] || { cat "$out"; fail "pgbench processed $processed of $TOTAL transactions"; }
[ "$failed" = 0 ] || { cat "$out"; fail "pgbench reports $failed failed transactions"; }

q() { psql_q -d $DB -c "$1"; }
released=$(q "SELECT count(*) FROM outcomes WHERE released")
refused=$(q "SELECT count(*) FROM outcomes WHERE NOT released AND sqlstate = 'DP001'")
outcomes=$(q "SELECT count(*) FROM outcomes")
ledger_rows=$(q "SELECT count(*) FROM dperm.ledger WHERE 'tiny'::regclass = ANY (relations)")
all_rows=$(q "SELECT count(*) FROM dperm.ledger")
ledger_eps=$(q "SELECT sum(epsilon) FROM dperm.ledger WHERE 'tiny'::regclass = ANY (relations)")
sums_ok=$(q "SELECT sum(epsilon) <= $BUDGET AND abs(sum(epsilon) - $FIT * $EPS) < 1e-9
               FROM dperm.ledger WHERE 'tiny'::regclass = ANY (relations)")
status=$(q "SELECT epsilon_spent <= epsilon_budget AND abs(epsilon_spent - $FIT * $EPS) < 1e-9
                   AND releases = $FIT AND epsilon_budget = $BUDGET
              FROM dperm.budget_status WHERE relation = 'tiny'::regclass")
spent=$(q "SELECT epsilon_spent FROM dperm.budget_status WHERE relation = 'tiny'::regclass")
# Each success has its ledger row and each ledger row its success (tags unique).
unmatched=$(q "WITH l AS (SELECT substring(query FROM 'tag text := ''([0-9]+-[0-9]+)''') AS tag FROM dperm.ledger),
                    o AS (SELECT tag FROM outcomes WHERE released)
               SELECT (SELECT count(*) FROM l FULL JOIN o USING (tag) WHERE l.tag IS NULL OR o.tag IS NULL)
                    + (SELECT count(*) - count(DISTINCT tag) FROM l)
                    + (SELECT count(*) - count(DISTINCT tag) FROM outcomes)")
# How long the charged releases took (ms): median, 99th percentile, longest.
# Releases on one budget are charged first come, first served, so the
# longest is near the median times the clients, not a starved one's.
read -r median p99 longest < <(q "SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)) || ' ' ||
                                      round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)) || ' ' || round(max(ms))
              FROM (SELECT extract(epoch FROM took) * 1000 AS ms FROM outcomes WHERE released) t")
spread="$median / $p99 / $longest ms"
deadlocks=$(( $(q "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()") - deadlocks_before ))
log_note="server log not found"
if [ -n "$log" ]; then
  bad=$(tail -c +$((log_offset + 1)) "$log" | grep -E 'deadlock detected|lock timeout|dperm ledger writer|PANIC' || true)
  [ -z "$bad" ] || fail "the server log reports: $bad"
  log_note="server log clean"
fi

[ "$outcomes" = "$TOTAL" ] || fail "$outcomes outcomes recorded for $TOTAL transactions"
[ "$released" = "$FIT" ] || fail "$released releases succeeded, expected $FIT (refused $refused)"
[ "$refused" = $((TOTAL - FIT)) ] || fail "$refused releases refused with DP001, expected $((TOTAL - FIT))"
[ "$ledger_rows" = "$FIT" ] && [ "$all_rows" = "$FIT" ] || fail "$ledger_rows ledger rows ($all_rows in all), expected $FIT"
[ "$sums_ok" = t ] || fail "the ledger's epsilons sum to $ledger_eps, expected $FIT x $EPS <= $BUDGET"
[ "$status" = t ] || fail "dperm.budget_status disagrees: $(q "SELECT * FROM dperm.budget_status")"
[ "$unmatched" = 0 ] || fail "$unmatched ledger rows and successful releases do not match one to one"
[ "$deadlocks" = 0 ] || fail "$deadlocks deadlocks in pg_stat_database"
# Taking turns (src/pg/ledger/ledger_writer.cpp) keeps p99 near the median even
# beside CPU hogs; without turns a newcomer's first try kept winning the
# budget row and p99 was 7x the median (docs/scale.md, "Many charges to one
# budget").
[ "$p99" -le $((5 * median)) ] || fail "release times $spread (median / p99 / max): some releases were starved"

dropdb $DB
echo "pgbench charges: ok ($CLIENTS clients x $TRANSACTIONS transactions, 0 failed; $released released," \
  "$refused refused (DP001); ledger $ledger_rows rows, sum epsilon $ledger_eps of $BUDGET (budget_status $spent);" \
  "release time median / p99 / max $spread; tps $tps, latency $latency, pgbench run $((runtime_ms / 1000)).$(( (runtime_ms % 1000) / 100 )) s; 0 deadlocks, $log_note)"
