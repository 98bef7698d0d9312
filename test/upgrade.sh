#!/usr/bin/env bash
# CREATE EXTENSION dperm (the complete script of the default version) gives the same catalog as
# installing each older version and updating (the end of this file). And
# ALTER EXTENSION dperm UPDATE from 0.1.0 (to the default version) keeps budgets (as 'basic'), the
# ledger and models, and brings the functions of 0.2.0 to 0.6.0 (softmax models work after the
# upgrade; named models and their catalog exist). The current library also serves the 0.1.0 catalog until the update. Run inside
# pg_virtualenv -t.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
psql_q() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }
dropdb --if-exists dperm_upgrade >/dev/null 2>&1 || true
createdb dperm_upgrade
psql_q -d dperm_upgrade >/dev/null <<'SQL'
CREATE EXTENSION dperm VERSION '0.1.0';
CREATE TABLE t AS SELECT ARRAY[0.1 * i, 0.2]::float8[] AS f, i % 2 = 0 AS y FROM generate_series(1, 50) i;
SELECT dperm.set_budget('t', 1.0);
-- (t is budgeted: d is declared; the 0.1.0 dp_options has no dimension)
CREATE TABLE models AS SELECT dp_logreg(f, y, '{"epsilon": 0.4, "l2": 1, "dimension": 2}') AS m FROM t;
SQL
fail=0
check() {  # name, query, expected
  got=$(psql_q -d dperm_upgrade -c "$2")
  [ "$got" = "$3" ] || { echo "upgrade: $1: got '$got', expected '$3'"; fail=1; }
}
# the new library under the 0.1.0 catalog: dp_coefficients has two columns there
check old_catalog "SELECT count(*) || ' ' || count(coefficient) FROM models, dp_coefficients(m)" "3 3"
psql_q -d dperm_upgrade -c "ALTER EXTENSION dperm UPDATE" >/dev/null
check version "SELECT extversion FROM pg_extension WHERE extname = 'dperm'" "0.7.0"
# 0.5.0: budget_spent searches pg_temp last (SECURITY INVOKER since 0.7.0)
check definer_path "SELECT proconfig::text FROM pg_proc WHERE proname = 'budget_spent'" "{\"search_path=pg_catalog, pg_temp\"}"
check budget_kept "SELECT accounting || ' ' || epsilon FROM dperm.budgets" "basic 1"
check ledger_kept "SELECT count(*) || ' ' || bool_and(rdp IS NULL) FROM dperm.ledger" "1 true"
check status "SELECT epsilon_spent || ' ' || epsilon_remaining FROM dperm.budget_status" "0.4 0.6"
check model_kept "SELECT (m::jsonb->>'epsilon') FROM models" "0.4"
# a model stored by 0.1.0 (dp_model version 1 on disk) still predicts, and lists a NULL class
check model_predicts "SELECT dp_predict(m, ARRAY[0.1, 0.2]) BETWEEN 0 AND 1 AND dp_predict_class(m, ARRAY[0.1, 0.2]) IN (0, 1) FROM models" "t"
check model_coefficients "SELECT count(*) || ' ' || count(class) FROM models, dp_coefficients(m)" "3 0"
# analytic_gaussian.csv: epsilon 0.05, delta 1e-3 -> sigma 30.010328780523466
check new_function "SELECT abs(dperm.gaussian_sigma(0.05, 1e-3) / 30.010328780523466 - 1) < 1e-6" "t"
check charged_after "SELECT (dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2)) IS NOT NULL)::text FROM t" "true"
check ledger_after "SELECT count(*) || ' ' || (max(cardinality(rdp)) = 24) FROM dperm.ledger" "2 true"
# 0.4.0: softmax releases, charged like any other; dp_options takes classes
psql_q -d dperm_upgrade -c "CREATE TABLE s AS SELECT ARRAY[0.3 * cos(i), 0.3 * sin(i)] AS f, i % 3 AS c FROM generate_series(1, 60) i" >/dev/null
psql_q -d dperm_upgrade -c "CREATE TABLE softmax_models AS SELECT dp_softmax(f, c, dp_options(epsilon => 0.5, l2 => 1, classes => 3)) AS m FROM s" >/dev/null
check softmax_model "SELECT (m::jsonb->>'classes') || ' ' || jsonb_array_length(m::jsonb->'coefficients') || ' ' || (m::jsonb->>'n') FROM softmax_models" "3 3 60"
check softmax_predict "SELECT cardinality(dp_predict_proba(m, ARRAY[0.1, 0.2])) || ' ' || (dp_predict_class(m, ARRAY[0.1, 0.2]) BETWEEN 0 AND 2) FROM softmax_models" "3 true"
check softmax_coefficients "SELECT count(*) || ' ' || count(DISTINCT class) FROM softmax_models, dp_coefficients(m)" "9 3"
check softmax_ledger "SELECT loss || ' ' || n FROM dperm.ledger ORDER BY id DESC LIMIT 1" "softmax 60"
# 0.6.0: named models (catalog with row-level security, the functions), and
# a model trained after the upgrade on the relation of 0.1.0
check models_catalog "SELECT count(*) FROM pg_class WHERE oid IN ('dperm.models'::regclass, 'dperm.model_schedules'::regclass) AND relrowsecurity" "2"
check models_dumped "SELECT count(*) FROM pg_extension, unnest(extconfig) c WHERE extname = 'dperm' AND c IN ('dperm.models'::regclass, 'dperm.model_schedules'::regclass)" "2"
check model_functions "SELECT count(*) FROM pg_proc WHERE pronamespace = 'dperm'::regnamespace AND proname IN ('train_model', 'retrain', 'model', 'predict', 'drop_model', 'schedule_retraining', 'unschedule_retraining', 'retraining_forecast', 'evaluate', 'cron_next_run', 'model_owner')" "15"
# 0.7.0: labels through a feature spec, dperm.evaluate through a model's spec
check spec_label_functions "SELECT count(*) FROM pg_proc WHERE pronamespace = 'dperm'::regnamespace AND (proname = 'encode_label' OR (proname = 'evaluate' AND pronargs = 3))" "2"
check train_model "SELECT dperm.train_model('m', 't', 'f', 'y', 'logistic', dp_options(epsilon => 0.05, l2 => 1, dimension => 2))" "1"
check retrain "SELECT dperm.retrain('m') || ' ' || (dperm.predict('m', ARRAY[0.1, 0.2]) BETWEEN 0 AND 1)" "2 true"
# t's 0.1.0 budget (1, basic) is spent (0.4 + 0.5 + 2 x 0.05); doubled, 20 runs of 0.05 fit
check forecast_spent "SELECT runs || ' ' || limiting_relation FROM dperm.retraining_forecast('m')" "0 t"
psql_q -d dperm_upgrade -c "SELECT dperm.set_budget('t', 2)" >/dev/null
check forecast "SELECT runs FROM dperm.retraining_forecast('m')" "20"
# 0.6.0: dp_options takes target_bound; the Huber default huber_delta follows it
check target_bound "SELECT p->>'target_bound' || ' ' || (p->>'huber_delta') FROM dp_explain('huber', 100, 2, dp_options(epsilon => 1, target_bound => 5)) p" "5 0.5"
dropdb dperm_upgrade
[ $fail = 0 ] && echo "upgrade 0.1.0 -> $(psql -XAtc "select default_version from pg_available_extensions where name = 'dperm'"): ok"

# ---- 0.7.0: roles by OID. The 0.6.0 catalog named roles; the update
# resolves each name to the role of that name (quoted names too) and leaves
# NULL where no role has it (the ledger keeps the name in role_name); the
# event trigger then refuses to drop a budgeted relation.
dropdb --if-exists dperm_upgrade_roles >/dev/null 2>&1 || true
createdb dperm_upgrade_roles
psql_q -d dperm_upgrade_roles >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION dperm VERSION '0.6.0';
DROP ROLE IF EXISTS regress_upg_gone;
DROP ROLE IF EXISTS "Regress Upg Kept";
CREATE ROLE regress_upg_gone;
CREATE ROLE "Regress Upg Kept";
CREATE TABLE t AS SELECT ARRAY[0.1 * i, 0.2]::float8[] AS f, i % 2 = 0 AS y FROM generate_series(1, 50) i;
GRANT SELECT ON t TO regress_upg_gone, "Regress Upg Kept";
ALTER TABLE t OWNER TO "Regress Upg Kept";
SET ROLE "Regress Upg Kept";
SELECT dperm.set_budget('t', 5);
SELECT dperm.protect('t');
SET ROLE regress_upg_gone;
-- (the 0.6.0 dp_options has no dimension: the options as jsonb)
SELECT dperm.train('t', 'f', 'y', 'logistic', '{"epsilon": 0.1, "l2": 1, "dimension": 2}');
RESET ROLE;
SELECT dp_logreg(f, y, '{"epsilon": 0.1, "l2": 1, "dimension": 2}') FROM t;
DROP ROLE regress_upg_gone;
ALTER EXTENSION dperm UPDATE;
SQL
roles() { got=$(psql_q -d dperm_upgrade_roles -c "$2"); [ "$got" = "$3" ] || { echo "upgrade: $1: got '$got', expected '$3'"; fail=1; }; }
roles ledger_roles "SELECT string_agg(coalesce(role::text, 'NULL') || '/' || role_name, ' ' ORDER BY id) FROM dperm.ledger" \
  "NULL/regress_upg_gone $(psql_q -d dperm_upgrade_roles -c "SELECT current_user::regrole")/$(psql_q -d dperm_upgrade_roles -c "SELECT current_user")"
roles budget_set_by "SELECT set_by = '\"Regress Upg Kept\"'::regrole FROM dperm.budgets" "t"
roles protected_by "SELECT protected_by = '\"Regress Upg Kept\"'::regrole FROM dperm.protected" "t"
roles drop_refused "DO \$\$ BEGIN DROP TABLE t; EXCEPTION WHEN dependent_objects_still_exist THEN NULL; END \$\$; SELECT count(*) FROM dperm.budgets" "1"
psql_q -d dperm_upgrade_roles -c "SET client_min_messages = warning; SELECT dperm.retire_budget('t')" -c "DROP TABLE t" >/dev/null
dropdb dperm_upgrade_roles
psql_q -d postgres -c 'DROP ROLE "Regress Upg Kept"' >/dev/null
# ---- 0.6.0 -> 0.7.0: model owners become regrole (OIDs). Names of roles
# that exist become their OIDs; names of roles that no longer exist become
# 0 ('-', a superuser's to delete); schedules take their model's owner. The
# current library refuses named models on the 0.6.0 catalog until the update.
dropdb --if-exists dperm_upgrade06 >/dev/null 2>&1 || true
createdb dperm_upgrade06
psql_q -d dperm_upgrade06 >/dev/null <<'SQL'
CREATE EXTENSION dperm VERSION '0.6.0';
SET client_min_messages = warning;
DROP ROLE IF EXISTS "Regress Upgrade Owner";
CREATE ROLE "Regress Upgrade Owner";
CREATE TABLE t AS SELECT ARRAY[0.1 * i, 0.2] AS f, i % 2 = 0 AS y FROM generate_series(1, 50) i;
INSERT INTO dperm.models (name, version, status, owner, relation, relation_name, features, label, loss,
                          options, trained_by, trained_at, error)
  VALUES ('kept', 1, 'failed', 'Regress Upgrade Owner', 't', 'public.t', 'f', 'y', 'logistic', '{}',
          'Regress Upgrade Owner', now(), 'e'),
         ('orphan', 1, 'failed', 'regress_upgrade_gone', 't', 'public.t', 'f', 'y', 'logistic', '{}',
          'Regress Upgrade Owner', now(), 'e');
INSERT INTO dperm.model_schedules VALUES ('kept', '0 3 * * *', 7, 1, 'Regress Upgrade Owner', now());
SQL
check06() {  # name, query, expected
  got=$(psql_q -d dperm_upgrade06 -c "$2" 2>&1 | head -1 || true)
  [ "$got" = "$3" ] || { echo "upgrade 0.6.0: $1: got '$got', expected '$3'"; fail=1; }
}
check06 old_catalog_refused "SELECT dperm.retrain('kept')" \
  "ERROR:  dperm's model catalog is older than its library"
psql_q -d dperm_upgrade06 -c "ALTER EXTENSION dperm UPDATE" >/dev/null
check06 owners "SELECT string_agg(name || ' ' || owner::text || ' ' || trained_by::text || ' ' || pg_typeof(owner), ', ' ORDER BY name) FROM dperm.models" \
  'kept "Regress Upgrade Owner" "Regress Upgrade Owner" regrole, orphan - "Regress Upgrade Owner" regrole'
check06 schedule "SELECT owner::text || ' ' || scheduled_by::text || ' ' || name FROM dperm.model_schedules" \
  '"Regress Upgrade Owner" "Regress Upgrade Owner" kept'
check06 owner_oid "SELECT bool_and(owner = '\"Regress Upgrade Owner\"'::regrole) FROM dperm.models WHERE name = 'kept'" t
check06 train_after "SELECT dperm.train_model('kept', 't', 'f', 'y', 'logistic', dp_options(epsilon => 0.05, l2 => 1))" 1
check06 resolves_own "SELECT owner::text FROM dperm.model('kept')" "$(psql_q -d dperm_upgrade06 -c 'SELECT current_user')"
dropdb dperm_upgrade06
psql_q -d postgres -c 'DROP ROLE "Regress Upgrade Owner"' >/dev/null
[ $fail = 0 ] && echo "upgrade 0.6.0 -> 0.7.0: model owners converted: ok"

# ---- one source of truth: the complete install script (sql/dperm.sql, installed
# as dperm--X.sql for the default version) and every upgrade path give the same catalog. Each
# database's extension objects are dumped with pg_dump --binary-upgrade (the
# only mode that dumps an extension's members: definitions, comments, ACLs,
# policies, ownership), without the OIDs it pins, and cut into one block per
# object ("-- Name: ...; Type: ...") so that dump order does not matter; the
# extension's configuration tables (pg_dump's data list) are compared too.
catalog_of() {  # database -> the sorted object blocks on stdout
  { pg_dump --binary-upgrade --schema-only --no-owner -d "$1" \
      | grep -v -e 'binary_upgrade_set_next_' -e 'binary_upgrade_create_empty_extension' \
                -e 'binary_upgrade_set_missing_value' -e '^-- set missing value.$' -e "^WHERE oid = '[0-9]*';" \
                -e '^SET ' -e '^SELECT pg_catalog.set_config' -e '^-- Dumped ' -e '^\\\(un\)\?restrict '
    psql_q -d "$1" -c "SELECT '-- Name: extconfig; Type: EXTENSION CONFIG', c::regclass::text, extcondition[i]
                         FROM pg_extension, unnest(extconfig) WITH ORDINALITY u(c, i)
                        WHERE extname = 'dperm' ORDER BY 2"
  } | python3 -c '
import sys
blocks, cur = {}, []
name = "(preamble)"
for line in sys.stdin.read().splitlines():
    if line.startswith("-- Name: "):
        blocks.setdefault(name, []).append("\n".join(cur).strip())
        name, cur = line, []
    elif line.strip() and line.strip() != "--":
        cur.append(line)
blocks.setdefault(name, []).append("\n".join(cur).strip())
for name in sorted(blocks):
    for body in sorted(blocks[name]):
        print(name); print(body); print()
'
}
compared=""
default_version=$(psql_q -d postgres -c "SELECT default_version FROM pg_available_extensions WHERE name = 'dperm'")
dropdb --if-exists dperm_fresh >/dev/null 2>&1 || true
createdb dperm_fresh
psql_q -d dperm_fresh -c "CREATE EXTENSION dperm" >/dev/null
got=$(psql_q -d dperm_fresh -c "SELECT extversion FROM pg_extension WHERE extname = 'dperm'")
[ "$got" = "$default_version" ] || { echo "upgrade: CREATE EXTENSION dperm installed $got, not $default_version"; fail=1; }
catalog_of dperm_fresh > "$tmp/fresh.catalog"
grep -q 'Name: budgets; Type: TABLE' "$tmp/fresh.catalog" || { echo "upgrade: the catalog dump lists no dperm.budgets"; fail=1; }
for from in $(ls sql/dperm--*.sql | sed -n 's/^sql\/dperm--\([0-9.]*\)--[0-9.]*\.sql$/\1/p' | sort -uV); do
  [ "$from" = "$default_version" ] && continue
  db=dperm_from_${from//./_}
  dropdb --if-exists "$db" >/dev/null 2>&1 || true
  createdb "$db"
  psql_q -d "$db" -c "CREATE EXTENSION dperm VERSION '$from'" -c "ALTER EXTENSION dperm UPDATE" >/dev/null
  catalog_of "$db" > "$tmp/$db.catalog"
  if ! diff -u "$tmp/fresh.catalog" "$tmp/$db.catalog" > "$tmp/$db.diff"; then
    echo "upgrade: CREATE EXTENSION dperm ($default_version) and $from -> ALTER EXTENSION UPDATE differ in:"
    # the objects whose blocks differ (the block header above each change)
    python3 - "$tmp/fresh.catalog" "$tmp/$db.catalog" <<'PY'
import sys
def blocks(path):
    out, name = {}, None
    for line in open(path).read().split("\n"):
        if line.startswith("-- Name: "): name = line; out.setdefault(name, [])
        elif name: out[name].append(line)
    return out
a, b = blocks(sys.argv[1]), blocks(sys.argv[2])
for name in sorted(set(a) | set(b)):
    if a.get(name) != b.get(name):
        where = "only in the fresh install" if name not in b else "only after the upgrade" if name not in a else "different"
        print("  " + name[3:] + " (" + where + ")")
PY
    head -80 "$tmp/$db.diff"
    fail=1
  fi
  dropdb "$db"
  compared="$compared $from"
done
dropdb dperm_fresh
[ -n "$compared" ] || { echo "upgrade: no older version to compare with"; fail=1; }
[ $fail = 0 ] && echo "upgrade: CREATE EXTENSION dperm ($default_version) gives the catalog of the upgrade from each of:$compared"
exit $fail
