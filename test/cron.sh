#!/usr/bin/env bash
# Scheduled retraining with a real pg_cron: a job every minute
# makes a new version within ~70 s; once the budget is nearly spent the
# forecast says 0 and the next scheduled run pauses the schedule
# (dperm.model_schedules.paused_at, paused_reason; the forecast says so)
# instead of running: no version, no charge; once the budget is raised the
# next run resumes and trains; a forecast of k is followed by exactly k
# successful dperm.retrain calls, then a refusal.
# Run inside a cluster with pg_cron preloaded (scripts/test.sh does):
#   pg_virtualenv -t -o shared_preload_libraries=pg_cron \
#     -o cron.database_name=dperm_cron -o cron.use_background_workers=on bash test/cron.sh
set -euo pipefail
db=dperm_cron
psql_q() { psql -X -q -v ON_ERROR_STOP=1 -At -d "$db" "$@"; }
as_owner() { psql_q -c "SET ROLE regress_cron_owner" -c "$1"; }
fail=0
check() {  # name, got, expected
  if [ "$2" = "$3" ]; then echo "cron: $1: ok ($2)"; else echo "cron: $1: got '$2', expected '$3'"; fail=1; fi
}
# Polls `query` every 2 s until it returns 't', for up to $2 seconds; prints
# the seconds waited, or "timeout".
wait_for() {
  local start=$SECONDS
  while [ $((SECONDS - start)) -le "$2" ]; do
    [ "$(psql_q -c "$1")" = t ] && { echo $((SECONDS - start)); return 0; }
    sleep 2
  done
  echo timeout
}

dropdb --if-exists "$db" >/dev/null 2>&1 || true
createdb "$db"
# pg_cron's launcher connects to cron.database_name; it retries until the
# database exists.
psql_q >/dev/null <<'SQL'
CREATE EXTENSION pg_cron;
CREATE EXTENSION dperm;
CREATE ROLE regress_cron_owner LOGIN;
GRANT USAGE ON SCHEMA cron TO regress_cron_owner;
GRANT CREATE ON SCHEMA public TO regress_cron_owner;
SQL
# (one statement per transaction: the ledger writer sees committed tables)
as_owner "CREATE TABLE t AS SELECT ARRAY[sin(i) / 2, cos(i) / 2] AS x, sin(3 * i) > 0 AS y
            FROM generate_series(1, 300) i" >/dev/null
as_owner "SELECT dperm.set_budget('t', 100, 1e-5)" >/dev/null
as_owner "SELECT dperm.train_model('nightly', 't', 'x', 'y', 'logistic', dp_options(epsilon => 0.5, l2 => 0.1, dimension => 2))" >/dev/null

# 1 and 2 share one minute boundary (pg_cron 1.4 schedules by the minute):
# 'nightly' (on t, budget to spare) makes version 2 within ~70 s, while
# 'spent' (on t2, budget nearly spent: the forecast says 0) pauses its
# schedule: the job succeeds, trains nothing, adds no version, is not
# charged.
as_owner "CREATE TABLE t2 AS SELECT * FROM t" >/dev/null
as_owner "SELECT dperm.set_budget('t2', 100, 1e-5)" >/dev/null
as_owner "SELECT dperm.train_model('spent', 't2', 'x', 'y', 'logistic', dp_options(epsilon => 0.5, l2 => 0.1, dimension => 2))" >/dev/null
psql_q >/dev/null -c "SELECT dperm.set_budget('t2', epsilon_spent + 0.1, delta_budget) FROM dperm.budget_status WHERE relation = 't2'::regclass"
check forecast_zero "$(as_owner "SELECT runs FROM dperm.retraining_forecast('spent')")" 0
t2_charges() { psql_q -c "SELECT count(*) FROM dperm.ledger WHERE relations @> ARRAY['t2'::regclass]"; }
ledger_before=$(t2_charges)
# A query model on a protected panel whose budget counts privacy per person
# (the user guide's PSID task): its analyst (no SELECT) trains it on a
# filter, schedules it, and pg_cron retrains it (the query run again, a new
# noisy count, charged at the unit); the analyst evaluates it privately.
psql_q >/dev/null <<'SQL'
CREATE ROLE regress_cron_analyst LOGIN;
GRANT USAGE ON SCHEMA cron TO regress_cron_analyst;
SQL
as_analyst() { psql_q -c "SET ROLE regress_cron_analyst" -c "$1"; }
as_owner "CREATE TABLE panel AS SELECT p AS person, 1976 + y AS year,
            ARRAY[sin(p + y) / 2, cos(p * y) / 2] AS features,
            900 + 400 * sin(p + y) + (p * 31 + y * 7) % 100 AS wage
            FROM generate_series(1, 300) p, generate_series(0, 6) y" >/dev/null
as_owner "SELECT dperm.set_budget('panel', 20, 1e-4, privacy_unit => 'person', max_rows_per_unit => 7)" >/dev/null
as_owner "SELECT dperm.protect('panel', ARRAY['regress_cron_analyst']::regrole[])" >/dev/null
panel_query='$$SELECT features, wage > 1000 AS high FROM panel WHERE year >= 1979$$'
as_analyst "SELECT dperm.train_model_query('panel_high', $panel_query, 'features', 'high', 'logistic',
            dp_options(epsilon => 0.5, delta => 1e-5, dimension => 2))" >/dev/null
since=$(psql_q -c "SELECT now()")
query_job=$(as_analyst "SELECT dperm.schedule_retraining('panel_high', '* * * * *')")
job=$(as_owner "SELECT dperm.schedule_retraining('nightly', '* * * * *')")
spent_job=$(as_owner "SELECT dperm.schedule_retraining('spent', '* * * * *', 0)")
check job_command "$(psql_q -c "SELECT command || ' | ' || username FROM cron.job WHERE jobid = $job")" \
  "SELECT dperm.retrain_on_schedule('nightly', 'regress_cron_owner'::pg_catalog.regrole) | regress_cron_owner"
check dperm_schedule "$(psql_q -c "SELECT cron_schedule || ' ' || (jobid = $job) || ' ' || (paused_at IS NULL) FROM dperm.model_schedules WHERE name = 'nightly'")" \
  "* * * * * true true"
# the forecast of a scheduled model: runs, and the minute of the last that fits
check forecast_schedule "$(as_owner "SELECT runs > 1 AND next_run_at = date_trunc('minute', now()) + interval '1 minute'
                                 AND last_run_at = next_run_at + (runs - 1) * interval '1 minute'
                            FROM dperm.retraining_forecast('nightly')")" t
# both jobs were scheduled a moment apart: at most one minute boundary
# between them, so 135 s covers the later one
waited=$(wait_for "SELECT EXISTS (SELECT 1 FROM dperm.models WHERE name = 'nightly' AND version = 2 AND status = 'trained')
                   AND EXISTS (SELECT 1 FROM dperm.models WHERE name = 'panel_high' AND version = 2 AND status = 'trained')
                   AND EXISTS (SELECT 1 FROM dperm.model_schedules WHERE name = 'spent' AND paused_at IS NOT NULL)" 135)
echo "cron: scheduled version and paused schedule after ${waited} s"
[ "$waited" != timeout ] || { echo "cron: no scheduled version and paused schedule within 135 s"; fail=1; }
check run_succeeded "$(psql_q -c "SELECT count(*) > 0 FROM cron.job_run_details WHERE jobid = $job AND status = 'succeeded'")" t
check trained_by "$(psql_q -c "SELECT trained_by || ' ' || (ledger_id IS NOT NULL) FROM dperm.models WHERE name = 'nightly' AND version = 2")" \
  "regress_cron_owner true"
# the query model's scheduled run: the analyst's job, the query run again,
# charged at the person (one ledger row naming the unit)
check query_job "$(psql_q -c "SELECT username FROM cron.job WHERE jobid = $query_job")" regress_cron_analyst
check query_run "$(psql_q -c "SELECT m.trained_by || ' | ' || l.role::regrole || ' | ' || l.neighbors FROM dperm.models m
                               JOIN dperm.ledger l ON l.id = m.ledger_id WHERE m.name = 'panel_high' AND m.version = 2")" \
  "regress_cron_analyst | regress_cron_analyst | one unit (person, at most 7 rows) added, removed or replaced"
check query_evaluation "$(as_analyst "SELECT (e->>'n_noisy') || ' ' || (e->'privacy_unit'->>'column') || ' ' || ((e->>'accuracy')::float8 BETWEEN 0 AND 1)
                           FROM dperm.evaluate_query('panel_high', $panel_query, 'features', 'high', '{\"epsilon\": 0.3}') e")" \
  "true person true"
as_analyst "SELECT dperm.unschedule_retraining('panel_high')" >/dev/null
# the paused run: a succeeded job, the schedule paused with its reason, no
# version (failed or not), no charge
# (pg_cron marks the run succeeded a moment after its transaction commits)
r=$(wait_for "SELECT EXISTS (SELECT 1 FROM cron.job_run_details WHERE jobid = $spent_job AND start_time > '$since' AND status = 'succeeded')" 20)
check paused_run "$([ "$r" != timeout ] && echo succeeded || echo "no succeeded run")" succeeded
check paused_run_not_failed "$(psql_q -c "SELECT count(*) FROM cron.job_run_details WHERE jobid = $spent_job AND status = 'failed'")" 0
check paused_schedule "$(psql_q -c "SELECT (paused_at > '$since') || ' ' || paused_reason FROM dperm.model_schedules WHERE name = 'spent'")" \
  "true the next run (epsilon = 0.5, delta = 0, the latest trained version's charge at this budget's unit) does not fit in the privacy budget of relation public.t2"
check no_version "$(psql_q -c "SELECT count(*) FROM dperm.models WHERE name = 'spent' AND trained_at > '$since'")" 0
check no_charge "$(( $(t2_charges) - ledger_before ))" 0
check forecast_paused "$(as_owner "SELECT runs || ' ' || (paused_at IS NOT NULL) || ' ' || (paused_reason LIKE '%relation public.t2') FROM dperm.retraining_forecast('spent')")" \
  "0 true true"
# schedule_retraining refuses a schedule under which fewer than min_runs fit
refusal=$(as_owner "SELECT dperm.schedule_retraining('spent', '0 3 * * *')" 2>&1 || true)
check min_runs_refusal "$(echo "$refusal" | head -1)" \
  "ERROR:  model \"spent\": 0 more retrainings fit in the privacy budget of relation public.t2, fewer than min_runs = 1"
# the budget is raised: the next scheduled run checks again, resumes and trains
paused_at=$(psql_q -c "SELECT paused_at FROM dperm.model_schedules WHERE name = 'spent'")
# another paused run (the job's command, by hand): NULL, paused_at kept, no version
check paused_again "$(as_owner "SELECT dperm.retrain_on_schedule('spent', 'regress_cron_owner') IS NULL" 2>/dev/null)" t
check paused_at_kept "$(psql_q -c "SELECT paused_at = '$paused_at' AND (SELECT max(version) FROM dperm.models WHERE name = 'spent') = 1 FROM dperm.model_schedules WHERE name = 'spent'")" t
psql_q >/dev/null -c "SELECT dperm.set_budget('t2', 100, 1e-5)"
waited=$(wait_for "SELECT EXISTS (SELECT 1 FROM dperm.models WHERE name = 'spent' AND version = 2 AND status = 'trained')" 75)
echo "cron: resumed after ${waited} s"
[ "$waited" != timeout ] || { echo "cron: the paused schedule did not resume within 75 s"; fail=1; }
check resumed "$(psql_q -c "SELECT (paused_at IS NULL) || ' ' || (paused_reason IS NULL) FROM dperm.model_schedules WHERE name = 'spent'")" \
  "true true"
check resumed_charge "$(psql_q -c "SELECT count(*) FROM dperm.ledger l JOIN dperm.models m ON m.ledger_id = l.id WHERE m.name = 'spent' AND m.version = 2")" 1
check paused_before "$(psql_q -c "SELECT '$paused_at' < (SELECT trained_at FROM dperm.models WHERE name = 'spent' AND version = 2)")" t
as_owner "SELECT dperm.unschedule_retraining('nightly')" >/dev/null
as_owner "SELECT dperm.unschedule_retraining('spent')" >/dev/null
check unscheduled "$(psql_q -c "SELECT count(*) FROM cron.job") $(psql_q -c "SELECT count(*) FROM dperm.model_schedules")" "0 0"

# 3. A forecast of k runs is followed by exactly k successful retrainings.
psql_q >/dev/null -c "SELECT dperm.set_budget('t', epsilon_spent + 1.6, delta_budget) FROM dperm.budget_status WHERE relation = 't'::regclass"
k=$(as_owner "SELECT runs FROM dperm.retraining_forecast('nightly')")
echo "cron: forecast k = $k runs"
[ "$k" -ge 1 ] || { echo "cron: expected a forecast of at least one run"; fail=1; }
ledger_before=$(psql_q -c "SELECT count(*) FROM dperm.ledger")
ok=0
for _ in $(seq 1 "$k"); do
  as_owner "SELECT dperm.retrain('nightly')" >/dev/null 2>&1 && ok=$((ok + 1))
done
check k_runs_succeed "$ok" "$k"
check forecast_after_k "$(as_owner "SELECT runs FROM dperm.retraining_forecast('nightly')")" 0
refused=$(as_owner "SELECT dperm.retrain('nightly')" 2>&1 || true)
check run_k_plus_one "$(echo "$refused" | head -1)" "ERROR:  the release does not fit in the privacy budget of relation public.t"
check charges "$(psql_q -c "SELECT count(*) - $ledger_before FROM dperm.ledger")" "$k"

# 4. drop_model removes the model's job; a name with a quote is quoted.
psql_q >/dev/null -c "SELECT dperm.set_budget('t', 1000, 1e-5)"
as_owner "SELECT dperm.train_model('it''s', 't', 'x', 'y', 'logistic', dp_options(epsilon => 0.01, l2 => 0.1, dimension => 2))" >/dev/null
as_owner "SELECT dperm.schedule_retraining('it''s', '0 3 * * *')" >/dev/null
check quoted_command "$(psql_q -c "SELECT command FROM cron.job")" "SELECT dperm.retrain_on_schedule('it''s', 'regress_cron_owner'::pg_catalog.regrole)"
as_owner "SELECT dperm.drop_model('it''s')" >/dev/null
check dropped_job "$(psql_q -c "SELECT count(*) FROM cron.job") $(psql_q -c "SELECT count(*) FROM dperm.models WHERE name = 'it''s'")" "0 0"

# two long names with a common 100-byte prefix keep two jobs
long=$(printf 'm%.0s' $(seq 1 100))
as_owner "SELECT dperm.train_model('${long}_a', 't', 'x', 'y', 'logistic', dp_options(epsilon => 0.01, l2 => 0.1, dimension => 2))" >/dev/null
as_owner "SELECT dperm.train_model('${long}_b', 't', 'x', 'y', 'logistic', dp_options(epsilon => 0.01, l2 => 0.1, dimension => 2))" >/dev/null
as_owner "SELECT dperm.schedule_retraining('${long}_a', '0 3 * * *')" >/dev/null
as_owner "SELECT dperm.schedule_retraining('${long}_b', '0 4 * * *')" >/dev/null
check long_names "$(psql_q -c "SELECT string_agg(schedule, ',' ORDER BY schedule) FROM cron.job")" "0 3 * * *,0 4 * * *"

# 5. Model names are per owner: another role's own 'nightly' has its own
# schedule and job, whose command names its owner (checked by OID when it
# runs); retrain(name, owner) refuses a role that does not act for the owner.
psql_q >/dev/null <<'SQL'
CREATE ROLE "Regress Cron Other" LOGIN;
GRANT USAGE ON SCHEMA cron TO "Regress Cron Other";
GRANT SELECT ON t TO "Regress Cron Other";
SQL
as_other() { psql_q -c 'SET ROLE "Regress Cron Other"' -c "$1"; }
as_other "SELECT dperm.train_model('nightly', 't', 'x', 'y', 'logistic', dp_options(epsilon => 0.01, l2 => 0.1, dimension => 2))" >/dev/null
as_other "SELECT dperm.schedule_retraining('nightly', '0 5 * * *')" >/dev/null
as_owner "SELECT dperm.schedule_retraining('nightly', '0 6 * * *')" >/dev/null
check other_schedule "$(psql_q -c "SELECT string_agg(owner::text || ' ' || cron_schedule, ',' ORDER BY cron_schedule) FROM dperm.model_schedules WHERE name = 'nightly'")" \
  '"Regress Cron Other" 0 5 * * *,regress_cron_owner 0 6 * * *'
check other_command "$(psql_q -c "SELECT command || ' | ' || username FROM cron.job WHERE schedule = '0 5 * * *'")" \
  "SELECT dperm.retrain_on_schedule('nightly', '\"Regress Cron Other\"'::pg_catalog.regrole) | Regress Cron Other"
check other_job_runs "$(as_other "$(psql_q -c "SELECT command FROM cron.job WHERE schedule = '0 5 * * *'")")" 2
check owner_own_model "$(as_owner "SELECT (dperm.model('nightly')).owner")" regress_cron_owner
refused=$(as_owner "SELECT dperm.retrain('nightly', '\"Regress Cron Other\"')" 2>&1 || true)
check retrain_other "$(echo "$refused" | head -1)" 'ERROR:  must be owner of model "nightly" to retrain it'

psql -X -q -d postgres -c "DROP DATABASE $db WITH (FORCE)" >/dev/null 2>&1 || true
[ $fail = 0 ] && echo "cron: ok"
exit $fail
