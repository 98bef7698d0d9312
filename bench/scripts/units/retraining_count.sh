#!/usr/bin/env bash
# How many scheduled retrainings a per-person budget pays for (issue 48
# item 4), by the real code path: on a throw-away cluster (pg_virtualenv -t)
# with this worktree's build installed, for each per-person budget
# (epsilon, delta), a 595-person x 7-row panel (synthetic features, the
# PSID panel's shape) gets dperm.set_budget(..., privacy_unit => 'person',
# max_rows_per_unit => 7) (and a second copy with units => 595 declared
# public), one dperm.train_model at dp_options(epsilon => 1, delta => 1e-5)
# (the default algorithm at unit level with delta > 0: dp_gd, charged by its
# per-unit RDP curve), then dperm.retraining_forecast's runs, and that many
# dperm.retrain calls really run (the next one is refused). "By sums" is what
# the ledger charged before the per-unit curves (a unit release carried no
# curve and composed by plain sums): min(floor(E / 1), floor(D / 1e-5)) runs.
# Holds /tmp/dperm-server.lock and /tmp/dperm-install.lock (installs the build).
# Usage: bash bench/scripts/units/retraining_count.sh > bench/results/retraining_count.md
set -euo pipefail
cd "$(dirname "$0")/../../.."
cxx=g++; command -v ccache >/dev/null && cxx="ccache g++"
budgets=${BUDGETS:-"3:1e-5 10:1e-5 10:1e-4 30:1e-5 30:1e-4"}
sql=$(mktemp /tmp/dperm_retrain_count.XXXXXX.sql)
trap 'rm -f "$sql"' EXIT
{
  echo "SET client_min_messages = warning; SET dperm.allow_seed = on;"
  echo "CREATE EXTENSION IF NOT EXISTS dperm CASCADE;"
  echo "CREATE TABLE rc_result (budget_epsilon float8, budget_delta float8, units_public boolean,"
  echo "  by_sums bigint, forecast_total bigint, really_ran bigint, next_refused boolean,"
  echo "  epsilon_spent float8, delta_spent float8);"
  i=0
  for b in $budgets; do
    e=${b%%:*}; d=${b##*:}
    for pub in false true; do
      i=$((i + 1)); t=rc_panel_$i; m=rc_m_$i
      units=""; [ $pub = true ] && units=", units => 595"
      cat <<SQL
CREATE TABLE $t (person int, year int, features float8[], label boolean);
INSERT INTO $t SELECT p, y, ARRAY[((p * 7 + y) % 11) / 11.0, ((p + 3 * y) % 5) / 5.0],
       ((p * 7 + y) % 11) > 5 FROM generate_series(1, 595) p, generate_series(1, 7) y;
SELECT dperm.set_budget('$t', $e, $d, privacy_unit => 'person', max_rows_per_unit => 7$units);
SELECT dperm.train_model('$m', '$t', 'features', 'label', 'logistic',
       dp_options(epsilon => 1, delta => 1e-5, dimension => 2, seed => $i));
SELECT runs AS fc FROM dperm.retraining_forecast('$m') \gset
SELECT count(dperm.retrain('$m')) AS ran FROM generate_series(1, :fc) \gset
DO \$\$ BEGIN PERFORM dperm.retrain('$m'); RAISE WARNING 'retrain beyond forecast fit ($t)';
  EXCEPTION WHEN OTHERS THEN NULL; END \$\$;
INSERT INTO rc_result SELECT $e, $d, $pub, least(floor($e / 1.0), floor($d / 1e-5 + 1e-9))::bigint,
       :fc + 1, :ran + 1, (SELECT releases = :ran + 1 FROM dperm.budget_status WHERE relation = '$t'::regclass),
       epsilon_spent, delta_spent FROM dperm.budget_status WHERE relation = '$t'::regclass;
SQL
    done
  done
  echo "\\pset format aligned"
  echo "SELECT budget_epsilon AS \"E\", budget_delta AS \"D\", units_public, by_sums, forecast_total, really_ran, next_refused, round(epsilon_spent::numeric, 3) AS epsilon_spent, delta_spent FROM rc_result ORDER BY 1, 2, 3;"
  echo "SELECT (dperm.model('rc_m_1')).model::jsonb->>'algorithm' AS algorithm, (dperm.model('rc_m_1')).model::jsonb->'privacy_unit' AS privacy_unit;"
} > "$sql"
make -s DPERM_FAST_BUILD=1 CXX="$cxx" >/dev/null
exec flock /tmp/dperm-install.lock sh -c "make -s DPERM_FAST_BUILD=1 CXX='$cxx' install >/dev/null && pg_virtualenv -t psql -X -q -v ON_ERROR_STOP=1 -f '$sql'"
