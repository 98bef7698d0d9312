-- Named, versioned models: train_model, retrain, model, predict,
-- drop_model, the forecast, every error, one specification per name,
-- failed versions only for charged runs (and they outlive a rollback),
-- row-level security, and the attacks of an unprivileged role.
-- Scheduling with a real pg_cron is test/cron.sh.
SET max_parallel_workers_per_gather = 0;
SET dperm.allow_seed = on;
SET timezone = 'UTC';
CREATE ROLE regress_models_owner;
CREATE ROLE regress_models_alice;
CREATE ROLE regress_models_mallory;
GRANT CREATE ON SCHEMA public TO regress_models_owner, regress_models_mallory;
-- How many ledger rows exist (the ledger shows each role its own).
CREATE FUNCTION models_ledger_rows() RETURNS bigint LANGUAGE sql SECURITY DEFINER
  AS $$ SELECT count(*) FROM dperm.ledger $$;
GRANT EXECUTE ON FUNCTION models_ledger_rows() TO PUBLIC;
-- The SQLSTATE a statement raises (NULL: none).
CREATE FUNCTION models_sqlstate(statement text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE statement;
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;

SET ROLE regress_models_owner;
CREATE TABLE mdl_t AS
  SELECT i, ARRAY[sin(i) / 2, cos(i) / 2] AS x, sin(3 * i) > 0 AS y,
         sin(i) + cos(2 * i) AS t, i % 3 AS k
    FROM generate_series(1, 200) i;
SELECT dperm.set_budget('mdl_t', 10, 1e-5);

-- 1. Train, retrain, read back. Each run is a version with its ledger row.
SELECT dperm.train_model('churn', 'mdl_t', 'x', 'y', 'logistic',
                         dp_options(epsilon => 1, dimension => 2, l2 => 0.1, seed => 1)) AS version;
SELECT dperm.retrain('churn') AS version;
SELECT name, version, status, owner, relation, relation_name, features, label, loss,
       options, epsilon, delta, cardinality(rdp) AS orders, relations, trained_by, error,
       model IS NOT NULL AS has_model
  FROM dperm.models ORDER BY name, version;
-- the ledger rows are the runs' own charges
SELECT m.version, l.epsilon, l.role, l.relation_names
  FROM dperm.models m JOIN dperm.ledger l ON l.id = m.ledger_id ORDER BY m.version;
SELECT count(DISTINCT ledger_id) AS distinct_charges FROM dperm.models;
-- the same seed, the same model: retrain reran the stored specification
-- (coefficients compared: the model text also holds created_at, to the second)
SELECT (SELECT array_agg(c.coefficient ORDER BY c.term) FROM dp_coefficients((dperm.model('churn', 1)).model) c)
     = (SELECT array_agg(c.coefficient ORDER BY c.term) FROM dp_coefficients((dperm.model('churn', 2)).model) c)
       AS same_spec;
SELECT (dperm.model('churn')).version AS latest;
SELECT abs(dperm.predict('churn', ARRAY[0.1, 0.2])
           - dp_predict((dperm.model('churn')).model, ARRAY[0.1, 0.2])) < 1e-12 AS predict_latest;
SELECT dperm.predict('churn', ARRAY[0.1, 0.2], 1) BETWEEN 0 AND 1 AS predict_pinned;
SELECT round(avg(dperm.predict('churn', x))::numeric, 3) BETWEEN 0 AND 1 AS predict_rows FROM mdl_t;

-- Huber and softmax models; predict gives the prediction and the class.
SELECT dperm.train_model('temp', 'mdl_t', 'x', 't', 'huber', dp_options(epsilon => 1, dimension => 2, l2 => 0.1));
SELECT dperm.train_model('kind', 'mdl_t', 'x', 'k', 'softmax',
                         dp_options(epsilon => 1, dimension => 2, l2 => 0.1, classes => 3));
SELECT dperm.predict('kind', ARRAY[0.1, 0.2]) IN (0, 1, 2) AS softmax_class,
       dperm.predict('temp', ARRAY[0.1, 0.2]) = dp_predict((dperm.model('temp')).model, ARRAY[0.1, 0.2]) AS huber;

-- 2. The forecast composes the model's RDP curve k times with the ledger.
SELECT runs, limiting_relation, epsilon_per_run, delta_per_run, version, cron_schedule,
       next_run_at, last_run_at
  FROM dperm.retraining_forecast('churn');
-- k runs fit and k + 1 do not, by the writer's own test (budget_spent)
SELECT k, s.epsilon <= 10 AS fits FROM dperm.retraining_forecast('churn') f,
       LATERAL (VALUES (f.runs), (f.runs + 1)) AS r(k),
       LATERAL dperm.budget_spent('mdl_t', 'rdp', 1e-5,
         (SELECT array_agg(x * r.k) FROM unnest((dperm.model('churn')).rdp) x),
         f.epsilon_per_run * r.k, f.delta_per_run * r.k) s
 ORDER BY k;
-- a forecast of k is followed by exactly k successful retrainings, then DP001
CREATE TABLE mdl_small AS SELECT * FROM mdl_t;
SELECT dperm.set_budget('mdl_small', 1.5, 1e-6);
SELECT dperm.train_model('small_m', 'mdl_small', 'x', 'y', 'logistic',
                         dp_options(epsilon => 0.5, dimension => 2, l2 => 0.1));
SELECT runs AS forecast FROM dperm.retraining_forecast('small_m') \gset
SELECT :forecast AS forecast;
SELECT count(dperm.retrain('small_m')) AS successful FROM generate_series(1, :forecast);
SELECT runs AS forecast_now FROM dperm.retraining_forecast('small_m');
SELECT models_ledger_rows() AS ledger_before \gset
SELECT dperm.retrain('small_m');
SELECT models_ledger_rows() - :ledger_before AS charged_for_refusal;
-- a refusal charges nothing and is no version
SELECT count(*) AS refused_versions FROM dperm.models WHERE name = 'small_m' AND status = 'failed';
-- basic accounting: the sum rule (budget 3.2, three runs of 0.5 spent: 3 more fit)
SELECT dperm.set_budget('mdl_small', 3.2, 0, 'basic');
SELECT runs FROM dperm.retraining_forecast('small_m');
-- no budget: nothing limits the runs
CREATE TABLE mdl_free AS SELECT * FROM mdl_t;
SELECT dperm.train_model('free_m', 'mdl_free', 'x', 'y', 'logistic', dp_options(epsilon => 1, l2 => 0.1));
SELECT runs IS NULL AS unlimited, limiting_relation FROM dperm.retraining_forecast('free_m');

-- Cron schedules, forecast in UTC as pg_cron 1.4 runs them.
SELECT dperm.cron_next_run('30 2 * * *', '2026-01-01 03:00+00', 2) AS nightly,
       dperm.cron_next_run('*/15 * * * *', '2026-01-01 03:00+00', 5) AS quarter_hours,
       dperm.cron_next_run('@monthly', '2026-01-15 00:00+00', 2) AS monthly,
       dperm.cron_next_run('@reboot', '2026-01-01 00:00+00') AS reboot,
       dperm.cron_next_run('0 0 31 2 *', '2026-01-01 00:00+00') AS never;

-- 3. Runs refused before their charge (a dropped relation or column, a
-- changed type, no privilege, the budget: public inputs) are errors and no
-- version; a run that fails after its charge is a failed version, with its
-- ledger row, and outlives a rollback.
CREATE TABLE mdl_gone AS SELECT * FROM mdl_t;
SELECT dperm.train_model('gone_m', 'mdl_gone', 'x', 'y', 'logistic', dp_options(epsilon => 0.1, l2 => 0.1));
DROP TABLE mdl_gone;
SELECT dperm.retrain('gone_m');
BEGIN;
SELECT dperm.retrain('gone_m');
ROLLBACK;
-- a success inside a rolled-back transaction keeps its version and its charge
BEGIN;
SELECT dperm.retrain('temp');
ROLLBACK;
SELECT name, version, status, sqlstate, error, ledger_id IS NOT NULL AS charged
  FROM dperm.models WHERE name IN ('gone_m', 'temp') ORDER BY name, version;
-- a changed column type
CREATE TABLE mdl_changing AS SELECT * FROM mdl_t;
SELECT dperm.train_model('changing_m', 'mdl_changing', 'x', 'y', 'logistic', dp_options(epsilon => 0.1, l2 => 0.1));
ALTER TABLE mdl_changing ALTER COLUMN y TYPE text;
SELECT dperm.retrain('changing_m');
ALTER TABLE mdl_changing DROP COLUMN x;
SELECT dperm.retrain('changing_m');
SELECT version, status, sqlstate, error FROM dperm.models WHERE name = 'changing_m' ORDER BY version;
-- a first run refused: no model of that name at all
SELECT dperm.train_model('bad_start', 'mdl_changing', 'i', 'y', 'logistic', dp_options(epsilon => 0.1));
SELECT dperm.model('bad_start');
SELECT dperm.predict('changing_m', ARRAY[1.0, 2.0], 3);
-- a run cancelled after its charge (statement_timeout, training for minutes)
-- is a failed version with its charge; and then the name has no trained
-- version to predict with
CREATE TABLE mdl_slow AS SELECT * FROM mdl_t;
SELECT models_ledger_rows() AS ledger_before \gset
SET statement_timeout = '3s';
SELECT dperm.train_model('slow_m', 'mdl_slow', 'x', 'y', 'logistic',
  dp_options(algorithm => 'output_gd', epsilon => 0.1, l2 => 0.1, iterations => 100000000, dimension => 2));
RESET statement_timeout;
SELECT version, status, sqlstate, ledger_id IS NOT NULL AS charged FROM dperm.models WHERE name = 'slow_m';
SELECT models_ledger_rows() - :ledger_before AS charged;
SELECT dperm.model('slow_m');
SELECT dperm.predict('slow_m', ARRAY[1.0, 2.0]);
SELECT dperm.retraining_forecast('slow_m');
SELECT dperm.drop_model('slow_m');
-- no version failed but the charged one: every refusal above left none
SELECT count(*) AS failed_versions FROM dperm.models WHERE status = 'failed';

-- 4. Errors in the arguments leave no version.
SELECT dperm.retrain('nope');
SELECT dperm.model('nope');
SELECT dperm.model('churn', 99);
SELECT dperm.predict('nope', ARRAY[0.1]);
SELECT dperm.drop_model('nope');
SELECT dperm.retraining_forecast('nope');
SELECT dperm.schedule_retraining('nope', '0 3 * * *');
SELECT dperm.unschedule_retraining('churn');
SELECT dperm.train_model('', 'mdl_t', 'x', 'y', 'logistic', dp_options(epsilon => 1));
SELECT dperm.train_model('e1', 'mdl_t', 'x', 'y', 'poisson', dp_options(epsilon => 1));
SELECT dperm.train_model('e2', 'mdl_t', 'nope', 'y', 'logistic', dp_options(epsilon => 1));
SELECT dperm.train_model('e3', 'mdl_t', 'x', 'y', 'logistic', '{"epsilon": 1, "colour": 2}');
SELECT dperm.train_model('e4', 'mdl_t', 'x', 'y', 'huber', dp_options(epsilon => 1, classes => 3));
SELECT dperm.train_model('e5', 'no_such_table', 'x', 'y', 'logistic', dp_options(epsilon => 1));
SELECT dperm.train_model('e6', 'mdl_t', 'x) FROM mdl_t; DROP TABLE mdl_t; --', 'y', 'logistic', dp_options(epsilon => 1));
SELECT dperm.train_model('e7', 'mdl_t', 'x', 'y"', 'logistic', dp_options(epsilon => 1));
SELECT dperm.train_model(repeat('e', 201), 'mdl_t', 'x', 'y', 'logistic', dp_options(epsilon => 1));
SELECT dperm.train_model('e8', 'mdl_t', 'x', 'y', 'logistic', NULL) IS NULL AS strict;
SELECT dperm.cron_next_run('* * * * *', now(), 0);
SELECT dperm.train_model('e9', 'mdl_t', 'x', 'y', 'softmax', dp_options(epsilon => 1, dimension => 2, classes => 3));
SELECT dperm.train_model('e0', 'mdl_t', 't', 'y', 'logistic', dp_options(epsilon => 1));
SELECT count(*) AS no_versions FROM dperm.models WHERE name LIKE 'e_' OR name = '';

-- 4b. One specification per name: another loss, relation, feature or label
-- column is refused (42710) before anything runs, and adds no version; other
-- options are a new version. dperm.drop_model frees the name.
SELECT dperm.train_model('churn', 'mdl_t', 'x', 't', 'huber', dp_options(epsilon => 1, dimension => 2, l2 => 0.1));
SELECT models_sqlstate($$SELECT dperm.train_model('churn', 'mdl_t', 'x', 't', 'huber', dp_options(epsilon => 1, dimension => 2, l2 => 0.1))$$) AS other_loss,
       models_sqlstate($$SELECT dperm.train_model('churn', 'mdl_small', 'x', 'y', 'logistic', dp_options(epsilon => 1, dimension => 2, l2 => 0.1))$$) AS other_relation,
       models_sqlstate($$SELECT dperm.train_model('churn', 'mdl_t', 'x', 'k', 'logistic', dp_options(epsilon => 1, dimension => 2, l2 => 0.1))$$) AS other_label;
SELECT models_ledger_rows() AS ledger_before \gset
SELECT max(version) AS churn_versions FROM dperm.models WHERE name = 'churn';
SELECT dperm.train_model('kind', 'mdl_t', 'x', 'k', 'softmax', dp_options(epsilon => 0.5, dimension => 2, l2 => 0.1, classes => 3)) AS new_options;
SELECT models_ledger_rows() - :ledger_before AS charged_once;
CREATE TABLE mdl_respec AS SELECT * FROM mdl_t;
SELECT dperm.train_model('respec', 'mdl_respec', 'x', 'y', 'logistic', dp_options(epsilon => 0.1, dimension => 2, l2 => 0.1));
ALTER TABLE mdl_respec RENAME COLUMN x TO x2;
SELECT dperm.train_model('respec', 'mdl_respec', 'x2', 'y', 'logistic', dp_options(epsilon => 0.1, dimension => 2, l2 => 0.1));
SELECT dperm.drop_model('respec');
SELECT dperm.train_model('respec', 'mdl_respec', 'x2', 't', 'huber', dp_options(epsilon => 0.1, dimension => 2, l2 => 0.1)) AS after_drop;
-- any name is data: quotes and all
SELECT dperm.train_model('it''s "odd"; --', 'mdl_t', 'x', 'y', 'logistic', dp_options(epsilon => 0.1, dimension => 2, l2 => 0.1));
SELECT dperm.retrain('it''s "odd"; --');
-- the scheduled job's function on a model without a schedule: a plain retrain
SELECT dperm.retrain_on_schedule('it''s "odd"; --', 'regress_models_owner') AS unscheduled_run;
SELECT dperm.retrain_on_schedule('it''s "odd"; --', 'regress_models_alice');
SELECT dperm.predict('it''s "odd"; --', ARRAY[0.1, 0.2]) BETWEEN 0 AND 1 AS predicts;
SELECT dperm.drop_model('it''s "odd"; --');
-- scheduling needs pg_cron (this cluster has none)
SELECT dperm.schedule_retraining('churn', '0 3 * * *');
RESET ROLE;

-- 5. Row-level security and ownership. Alice reads mdl_t; mallory reads nothing.
SET ROLE regress_models_owner;
GRANT SELECT ON mdl_t TO regress_models_alice;
RESET ROLE;
SET ROLE regress_models_alice;
SELECT DISTINCT name FROM dperm.models WHERE relation = 'mdl_t'::regclass ORDER BY name;
SELECT dperm.retrain('churn');
SELECT dperm.drop_model('churn');
-- names belong to their owner: alice's own 'churn', which her lookups find first
SELECT dperm.train_model('churn', 'mdl_t', 'x', 'y', 'logistic', dp_options(epsilon => 1, dimension => 2));
SELECT dperm.predict('churn', ARRAY[0.1, 0.2]) BETWEEN 0 AND 1 AS alice_predicts;
SELECT owner, version FROM dperm.model('churn');
RESET ROLE;
SET ROLE regress_models_mallory;
SELECT count(*) AS mallory_sees FROM dperm.models;
SELECT dperm.retrain('churn');
SELECT dperm.model('churn');
SELECT dperm.predict('churn', ARRAY[0.1, 0.2]);
-- her own 'churn' on a relation she may not read: refused, no version
SELECT dperm.train_model('churn', 'mdl_t', 'x', 'y', 'logistic', dp_options(epsilon => 1, dimension => 2));
SELECT owner, version, status, sqlstate FROM dperm.models WHERE name = 'churn';
-- only dperm writes the catalog
INSERT INTO dperm.models (name, version, status, owner, relation, relation_name, features,
  label, loss, options, trained_by, trained_at)
  VALUES ('forged', 1, 'failed', 'regress_models_owner', 'mdl_t', 'mdl_t', 'x', 'y', 'logistic', '{}',
          'regress_models_owner', now());
UPDATE dperm.models SET status = 'failed';
DELETE FROM dperm.models;
DELETE FROM dperm.model_schedules;
RESET ROLE;

-- Protected relations: training goes through dperm.train, as the analyst;
-- the owner sees the analyst's model, mallory does not.
SET ROLE regress_models_owner;
CREATE TABLE mdl_pt AS SELECT * FROM mdl_t;
SELECT dperm.protect('mdl_pt', ARRAY['regress_models_alice']::regrole[]);
SELECT dperm.set_budget('mdl_pt', 5, 1e-6);
RESET ROLE;
SET ROLE regress_models_alice;
SELECT dperm.train_model('alice_pt', 'mdl_pt', 'x', 'y', 'logistic', dp_options(epsilon => 1, dimension => 2, l2 => 0.1));
SELECT dperm.retrain('alice_pt');
SELECT l.role, l.relation_names, l.n FROM dperm.models m JOIN dperm.ledger l ON l.id = m.ledger_id
 WHERE m.name = 'alice_pt' ORDER BY m.version;
SELECT runs > 0 AS runs_left, limiting_relation FROM dperm.retraining_forecast('alice_pt');
RESET ROLE;
SET ROLE regress_models_owner;
SELECT name, version, owner, trained_by FROM dperm.models WHERE name = 'alice_pt' ORDER BY version;
RESET ROLE;
SET ROLE regress_models_mallory;
SELECT count(*) AS mallory_sees_pt FROM dperm.models WHERE name = 'alice_pt';
-- not an analyst: refused, uncharged, no version
SELECT dperm.train_model('mallory_pt', 'mdl_pt', 'x', 'y', 'logistic', dp_options(epsilon => 1, dimension => 2));
SELECT count(*) AS mallory_pt_versions FROM dperm.models WHERE name = 'mallory_pt';
RESET ROLE;

-- 6. Attacks through names: mallory defines types, functions and a
-- relation where she may (pg_temp, public), with pg_temp searched first,
-- and uses every function. dperm's internal statements resolve none of
-- them: evil() would say so with a NOTICE.
SET ROLE regress_models_mallory;
CREATE FUNCTION pg_temp.evil() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE 'evil ran as %', current_user;
  BEGIN EXECUTE 'ALTER ROLE regress_models_mallory SUPERUSER'; EXCEPTION WHEN OTHERS THEN NULL; END;
  RETURN true;
END $$;
CREATE TABLE own AS
  SELECT ARRAY[sin(i) / 2, cos(i) / 2]::float8[] AS x, sin(3 * i) > 0 AS y FROM generate_series(1, 50) i;
SELECT dperm.set_budget('own', 100, 1e-5);
CREATE TABLE pg_temp.models (name text, version int, owner name);
CREATE FUNCTION public.dp_predict(dp_model, numeric[]) RETURNS float8 LANGUAGE sql
  AS $$ SELECT CASE WHEN pg_temp.evil() THEN 0.5 END $$;
CREATE FUNCTION public.jsonb_build_object(VARIADIC text[]) RETURNS jsonb LANGUAGE sql
  AS $$ SELECT CASE WHEN pg_temp.evil() THEN '{}'::pg_catalog.jsonb END $$;
CREATE FUNCTION public.unnest(float8[]) RETURNS SETOF float8 LANGUAGE sql
  AS $$ SELECT 1.0::pg_catalog.float8 WHERE pg_temp.evil() $$;
CREATE FUNCTION public.budget_spent(regclass, text, float8, float8[], float8, float8,
    OUT epsilon float8, OUT delta float8, OUT releases bigint)
  LANGUAGE sql AS $$ SELECT 0::pg_catalog.float8, 0::pg_catalog.float8, 0::pg_catalog.int8 WHERE pg_temp.evil() $$;
CREATE DOMAIN pg_temp.text AS pg_catalog.text CHECK (pg_temp.evil());
CREATE DOMAIN pg_temp.int4 AS pg_catalog.int4 CHECK (pg_temp.evil());
CREATE DOMAIN pg_temp.int8 AS pg_catalog.int8 CHECK (pg_temp.evil());
CREATE DOMAIN pg_temp.jsonb AS pg_catalog.jsonb CHECK (pg_temp.evil());
CREATE DOMAIN pg_temp.regclass AS pg_catalog.oid CHECK (pg_temp.evil());
CREATE DOMAIN pg_temp.name AS pg_catalog.text CHECK (pg_temp.evil());
CREATE DOMAIN pg_temp.float8 AS pg_catalog.float8 CHECK (pg_temp.evil());
CREATE DOMAIN pg_temp.timestamptz AS pg_catalog.timestamptz CHECK (pg_temp.evil());
-- the trap is armed: mallory's own unqualified type names hit pg_temp
-- (searched first when the path does not list it)
SET search_path = public, dperm;
SELECT 'control'::text AS control;
SELECT dperm.train_model('mallory_own', 'own', 'x', 'y', 'logistic', dp_options(epsilon => 1, dimension => 2, l2 => 0.1));
SELECT dperm.retrain('mallory_own');
SELECT dperm.predict('mallory_own', ARRAY[0.1, 0.2]) BETWEEN 0 AND 1 AS predicted;
SELECT (dperm.model('mallory_own')).version;
SELECT runs > 0 AS runs_left, limiting_relation FROM dperm.retraining_forecast('mallory_own');
SELECT dperm.drop_model('mallory_own');
RESET search_path;
DROP TABLE pg_temp.models;
DROP FUNCTION public.dp_predict(public.dp_model, pg_catalog.numeric[]), public.jsonb_build_object(pg_catalog.text[]),
  public.unnest(pg_catalog.float8[]), public.budget_spent(pg_catalog.regclass, pg_catalog.text,
  pg_catalog.float8, pg_catalog.float8[], pg_catalog.float8, pg_catalog.float8);
DROP DOMAIN pg_temp.text, pg_temp.int4, pg_temp.int8, pg_temp.jsonb, pg_temp.regclass,
  pg_temp.name, pg_temp.float8, pg_temp.timestamptz;
RESET ROLE;
SELECT rolsuper AS mallory_is_superuser FROM pg_roles WHERE rolname = 'regress_models_mallory';

-- 7. drop_model: every version goes, the ledger keeps the charges.
SET ROLE regress_models_owner;
SELECT count(*) AS temp_versions FROM dperm.models WHERE name = 'temp';
SELECT dperm.drop_model('temp');
SELECT count(*) AS temp_versions FROM dperm.models WHERE name = 'temp';
SELECT count(*) > 0 AS charges_kept FROM dperm.ledger WHERE loss = 'huber';
-- the name is free again, from version 1
SELECT dperm.train_model('temp', 'mdl_t', 'x', 't', 'huber', dp_options(epsilon => 0.1, dimension => 2, l2 => 0.1));

-- 8. Private evaluation: noisy clipped sums, charged to the relation read,
-- stored with the version (durably, like a charge).
CREATE TABLE mdl_holdout AS
  SELECT i, ARRAY[sin(i) / 2, cos(i) / 2] AS x, sin(3 * i) > 0 AS y,
         sin(i) + cos(2 * i) AS t, i % 3 AS k
    FROM generate_series(201, 600) i;
SELECT dperm.set_budget('mdl_holdout', 20, 1e-6);
SELECT models_ledger_rows() AS ledger_before \gset
SELECT e - 'evaluated_at' - 'ledger_id' - 'noise_scale' - 'grid' - 'accuracy' - 'log_loss'
         - 'accuracy_interval' - 'log_loss_interval' AS evaluation,
       (e->>'accuracy')::float8 BETWEEN 0 AND 1 AS accuracy, (e->>'log_loss')::float8 >= 0 AS log_loss,
       -- (+ the exact sums' slack, 2^-40 + n 2^-50: src/pg/models/model_evaluate.cpp)
       abs((e->>'noise_scale')::float8 - 2 * (1 + (e->>'grid')::float8) / 5) < 1e-9 AS scale_is_m_1_plus_g_over_epsilon
  FROM dperm.evaluate('churn', 'mdl_holdout', 'x', 'y', '{"epsilon": 5, "seed": 3}') e;
SELECT models_ledger_rows() - :ledger_before AS charged;
SELECT algorithm, mechanism, loss, epsilon, delta, n, d, relation_names, cardinality(rdp) AS orders
  FROM dperm.ledger ORDER BY id DESC LIMIT 1;
-- the estimate is near the exact metrics (which the owner, who reads
-- mdl_holdout, can compute directly: they are not private)
WITH exact AS (
  SELECT avg(((dp_predict(m.model, x) > 0.5) = y)::int) AS accuracy,
         avg(least(-ln(CASE WHEN y THEN dp_predict(m.model, x) ELSE 1 - dp_predict(m.model, x) END), 10)) AS log_loss
    FROM mdl_holdout, dperm.model('churn') m),
  private AS (SELECT evaluation->0 AS e FROM dperm.models WHERE name = 'churn' AND version = 2)
SELECT abs((e->>'accuracy')::float8 - accuracy) < 0.05 AS accuracy_close,
       abs((e->>'log_loss')::float8 - log_loss) < 0.1 AS log_loss_close
  FROM exact, private;
-- stored with the version, newest first; a rollback keeps it (and its charge)
BEGIN;
SELECT (dperm.evaluate('churn', 'mdl_holdout', 'x', 'y', '{"epsilon": 1, "version": 1}'))->>'version' AS version;
ROLLBACK;
SELECT version, jsonb_array_length(evaluation) AS evaluations,
       (evaluation->0->>'ledger_id')::bigint IN (SELECT id FROM dperm.ledger WHERE algorithm = 'evaluate') AS linked
  FROM dperm.models WHERE name = 'churn' AND owner = 'regress_models_owner'::regrole ORDER BY version;
SELECT models_ledger_rows() - :ledger_before AS charged;
-- The intervals (95 % of the noise, post-processing): half-width
-- (b ln 21 + g) / n around the accuracy (clipped to [0, 1]), and over 40
-- seeded evaluations at epsilon 0.2 (noise of about +-0.08) they contain
-- the exact accuracy at least 34 times (95 % nominal: 38 expected).
CREATE TABLE mdl_cover AS SELECT * FROM mdl_holdout;
WITH exact AS (
  SELECT avg(((dp_predict(m.model, x) > 0.5) = y)::int) AS accuracy
    FROM mdl_cover, dperm.model('churn') m),
  runs AS (
  SELECT dperm.evaluate('churn', 'mdl_cover', 'x', 'y',
                        jsonb_build_object('epsilon', 0.2, 'seed', s)) AS e
    FROM generate_series(1, 40) s)
SELECT count(*) FILTER (WHERE (e->'accuracy_interval'->>0)::float8 <= accuracy
                          AND accuracy <= (e->'accuracy_interval'->>1)::float8) >= 34 AS covers,
       bool_and(abs(((e->'accuracy_interval'->>1)::float8 - (e->>'accuracy')::float8)
                    - least(1 - (e->>'accuracy')::float8,
                            ((e->>'noise_scale')::float8 * ln(21) + (e->>'grid')::float8) / 400)) < 1e-12)
         AS half_width_is_the_formula,
       bool_and((e->'log_loss_interval'->>0)::float8 <= (e->>'log_loss')::float8
                AND (e->>'log_loss')::float8 <= (e->'log_loss_interval'->>1)::float8) AS log_loss_inside
  FROM runs, exact;
-- Huber: the RMSE; softmax: accuracy and log-loss
SELECT e ? 'rmse' AS rmse, e->>'residual_bound' AS bound, (e->>'rmse')::float8 >= 0 AS nonnegative,
       (e->'rmse_interval'->>0)::float8 <= (e->>'rmse')::float8
         AND (e->>'rmse')::float8 <= (e->'rmse_interval'->>1)::float8 AS rmse_inside
  FROM dperm.evaluate('temp', 'mdl_holdout', 'x', 't', '{"epsilon": 1, "residual_bound": 2}') e;
SELECT (e->>'accuracy')::float8 BETWEEN 0 AND 1 AS accuracy, (e->>'log_loss')::float8 >= 0 AS log_loss
  FROM dperm.evaluate('kind', 'mdl_holdout', 'x', 'k', '{"epsilon": 1}') e;
-- rows of another shape count as wrong, never raise (an error would depend on the rows)
CREATE TABLE mdl_ragged AS SELECT * FROM mdl_holdout;
UPDATE mdl_ragged SET x = ARRAY[1, 2, 3]::float8[] WHERE i % 2 = 0;
UPDATE mdl_ragged SET x = NULL WHERE i % 5 = 0;
SELECT (e->>'n')::int AS n, (e->>'accuracy')::float8 < 0.75 AS half_wrong
  FROM dperm.evaluate('churn', 'mdl_ragged', 'x', 'y', '{"epsilon": 5}') e;
-- refused like any release: DP001, no charge, nothing stored
SELECT models_ledger_rows() AS ledger_before \gset
SELECT dperm.evaluate('churn', 'mdl_holdout', 'x', 'y', '{"epsilon": 50}');
SELECT models_ledger_rows() - :ledger_before AS charged_for_refusal;
SELECT jsonb_array_length(evaluation) AS evaluations FROM dperm.models WHERE name = 'churn' AND version = 2;
-- errors, free of charge
SELECT dperm.evaluate('churn', 'mdl_holdout', 'x', 'y', '{"epsilon": 1, "colour": 1}');
SELECT dperm.evaluate('churn', 'mdl_holdout', 'x', 'y', '{"delta": 1}');
SELECT dperm.evaluate('churn', 'mdl_holdout', 'x', 'y', '{"epsilon": "1"}');
SELECT dperm.evaluate('churn', 'mdl_holdout', 'x', 'y', '{"epsilon": 1, "loss_bound": 0}');
SELECT dperm.evaluate('churn', 'mdl_holdout', 'x', 'k', '{"epsilon": 1}');
SELECT dperm.evaluate('churn', 'mdl_holdout', 'i', 'y', '{"epsilon": 1}');
SELECT dperm.evaluate('churn', 'mdl_holdout', 'x', 'y', '{"epsilon": 1, "version": 9}');
SELECT dperm.evaluate('nope', 'mdl_holdout', 'x', 'y', '{"epsilon": 1}');
SELECT models_ledger_rows() - :ledger_before AS charged_for_errors;
RESET ROLE;
-- analysts: alice evaluates her model on the protected mdl_pt (read as its
-- owner, charged to mdl_pt under her name); not on what she may not read
SET ROLE regress_models_alice;
SELECT (e->>'n')::int AS n FROM dperm.evaluate('alice_pt', 'mdl_pt', 'x', 'y', '{"epsilon": 0.5}') e;
SELECT role, algorithm, relation_names FROM dperm.ledger ORDER BY id DESC LIMIT 1;
SELECT dperm.evaluate('alice_pt', 'mdl_holdout', 'x', 'y', '{"epsilon": 0.5}');
-- nor with a model of another role she may see
SELECT dperm.evaluate('kind', 'mdl_t', 'x', 'k', '{"epsilon": 0.5}');
RESET ROLE;
SET ROLE regress_models_mallory;
SELECT dperm.evaluate('alice_pt', 'mdl_pt', 'x', 'y', '{"epsilon": 0.5}');
RESET ROLE;

DELETE FROM dperm.models WHERE owner::text LIKE 'regress_models_%';
-- budgeted tables are dropped once their budgets are retired
SET client_min_messages = warning;
SELECT count(dperm.retire_budget(b.relation)) > 0 AS retired
  FROM dperm.budgets b JOIN pg_class c ON c.oid = b.relation
 WHERE pg_get_userbyid(c.relowner) LIKE 'regress_models_%';
RESET client_min_messages;
DROP OWNED BY regress_models_owner, regress_models_alice, regress_models_mallory CASCADE;
DROP ROLE regress_models_owner, regress_models_alice, regress_models_mallory;
DROP FUNCTION models_ledger_rows(), models_sqlstate(text);
