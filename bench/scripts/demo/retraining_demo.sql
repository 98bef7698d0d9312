-- The session of README "Retraining on a schedule" on BANK: train a named
-- model, schedule it with pg_cron, watch a run and the forecast count down,
-- predict and evaluate by name, and see a run the budget cannot pay for
-- pause the schedule (no version, no charge). bench/scripts/demo/retraining_demo.sh runs it.
\pset pager off
\set ON_ERROR_STOP 1
SET timezone = 'UTC';
CREATE EXTENSION IF NOT EXISTS dperm;
CREATE EXTENSION IF NOT EXISTS pg_cron;
CREATE ROLE alice LOGIN;
GRANT SELECT ON bank TO alice;
GRANT USAGE ON SCHEMA cron TO alice;

\echo '== the data owner sets a budget'
SELECT dperm.set_budget('bank', epsilon => 3, delta => 1e-5);

\echo '== alice trains a named model and schedules it (every minute, for the demo)'
SET ROLE alice;
SELECT dperm.train_model('churn', 'bank', 'features', 'label', 'logistic',
                         dp_options(epsilon => 0.5, l2 => 0.01, dimension => 42)) AS version;
SELECT dperm.schedule_retraining('churn', '* * * * *') AS jobid;
SELECT runs, limiting_relation, epsilon_per_run, next_run_at, last_run_at
  FROM dperm.retraining_forecast('churn');

\echo '== waiting for pg_cron to run dperm.retrain_on_schedule(''churn'', ''alice'') ...'
DO $$ BEGIN
  WHILE NOT EXISTS (SELECT 1 FROM dperm.models WHERE name = 'churn' AND version = 2) LOOP
    PERFORM pg_sleep(1);
  END LOOP;
END $$;
SELECT version, status, trained_by, date_trunc('second', trained_at) AS trained_at,
       epsilon, ledger_id, error
  FROM dperm.models WHERE name = 'churn' ORDER BY version;
\echo '== the forecast counted down by one'
SELECT runs, last_run_at FROM dperm.retraining_forecast('churn');

\echo '== predict by name (the latest trained version, or a pinned one)'
SELECT id, label, round(dperm.predict('churn', features)::numeric, 4) AS p_latest,
       round(dperm.predict('churn', features, 1)::numeric, 4) AS p_version_1
  FROM bank ORDER BY id LIMIT 3;

\echo '== a private evaluation, charged to bank and stored with the version'
SELECT jsonb_pretty(dperm.evaluate('churn', 'bank', 'features', 'label', '{"epsilon": 0.1}')
                    - 'evaluated_at' - 'grid') AS evaluation;

\echo '== the owner lowers the budget to what is spent: no run fits any more'
RESET ROLE;
SELECT dperm.set_budget('bank', epsilon => epsilon_spent, delta => delta_budget)
  FROM dperm.budget_status WHERE relation = 'bank'::regclass;
SET ROLE alice;
SELECT runs FROM dperm.retraining_forecast('churn');
SELECT count(*) AS ledger_rows_before FROM dperm.ledger \gset
SELECT now() AS since \gset
\echo '== waiting for the next scheduled run: it pauses the schedule ...'
DO $$ BEGIN
  WHILE NOT EXISTS (SELECT 1 FROM dperm.model_schedules
                     WHERE name = 'churn' AND paused_at IS NOT NULL) LOOP
    PERFORM pg_sleep(1);
  END LOOP;
END $$;
SELECT name, date_trunc('second', paused_at) AS paused_at, paused_reason
  FROM dperm.model_schedules WHERE name = 'churn';
SELECT runs, paused_reason IS NOT NULL AS paused FROM dperm.retraining_forecast('churn');
SELECT count(*) AS versions_since FROM dperm.models
 WHERE name = 'churn' AND trained_at > :'since';
SELECT count(*) - :ledger_rows_before AS charged_for_the_pause FROM dperm.ledger;
\echo '== and a new schedule is refused up front'
\set ON_ERROR_STOP 0
SELECT dperm.schedule_retraining('churn', '30 2 * * *');
\set ON_ERROR_STOP 1
SELECT dperm.unschedule_retraining('churn');
