-- Named models on a query (dperm.train_model_query): the query is part of
-- the model's specification; dperm.retrain validates its canonical text
-- again and re-runs it (a noisy size again, charged again); a refusal at
-- retrain costs nothing and leaves no version.
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
SET client_min_messages = warning;
CREATE ROLE regress_qm_owner;
CREATE ROLE regress_qm_analyst;
GRANT CREATE ON SCHEMA public TO regress_qm_owner;
SET ROLE regress_qm_owner;
CREATE TABLE qm_wages AS
  SELECT i AS id, 1979 + i % 7 AS year, 500 + (i * 37) % 1000 AS wage,
         ARRAY[sin(i) / 2, cos(i) / 2] AS features
    FROM generate_series(1, 400) i;
SELECT dperm.set_budget('qm_wages', 6, 1e-5);
SELECT dperm.protect('qm_wages', ARRAY['regress_qm_analyst']::regrole[]);
RESET ROLE;

CREATE FUNCTION pg_temp.spent() RETURNS text LANGUAGE sql AS
  $$SELECT (SELECT count(*) FROM dperm.ledger WHERE 'public.qm_wages'::regclass = ANY (relations))
        || ' ledger rows, '
        || (SELECT count(*) FROM dperm.models WHERE name LIKE 'qm_%') || ' versions, epsilon spent '
        || coalesce((SELECT round(epsilon_spent::numeric, 4)::text FROM dperm.budget_status
                      WHERE relation = 'public.qm_wages'::regclass), 'none')$$;
SELECT pg_temp.spent() AS before;

SET ROLE regress_qm_analyst;
-- 1. A named model on a filtered query with a derived label (the analyst
-- has no SELECT on qm_wages).
SELECT dperm.train_model_query('qm_high',
    $$SELECT features, wage > 1000 AS high FROM qm_wages WHERE year >= 1981$$,
    'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 3)) AS version;
-- The version stores the query as written, its canonical text (every name
-- qualified) and the relation it read.
SELECT version, status, relation, features, label, query, query_canonical
  FROM dperm.models WHERE name = 'qm_high';
-- predict by name
SELECT dperm.predict('qm_high', ARRAY[0.1, 0.2]) BETWEEN 0 AND 1 AS predicts;
RESET ROLE;
SELECT pg_temp.spent() AS after_first;

-- 2. Retrain re-runs the query: 70 more rows the filter selects move the
-- noisy size by 70 (the same seed: the same noise), charged again.
SET ROLE regress_qm_owner;
INSERT INTO qm_wages SELECT 1000 + i, 1985, 1500, ARRAY[0.1, 0.2] FROM generate_series(1, 70) i;
RESET ROLE;
SET ROLE regress_qm_analyst;
-- a search_path change and a table of the same name in pg_temp do not
-- change what the model reads (its canonical text names public.qm_wages)
CREATE TEMP TABLE qm_wages AS SELECT * FROM (VALUES (1)) v(id);
SET search_path = pg_temp, public;
SELECT dperm.retrain('qm_high') AS version;
RESET search_path;
DROP TABLE pg_temp.qm_wages;
SELECT (v2.model::jsonb->>'n')::int - (v1.model::jsonb->>'n')::int AS n_moved,
       v2.ledger_id > v1.ledger_id AS charged_again, v2.query_canonical = v1.query_canonical AS same_query
  FROM dperm.models v1, dperm.models v2
 WHERE v1.name = 'qm_high' AND v1.version = 1 AND v2.name = 'qm_high' AND v2.version = 2;
-- the forecast counts the count's share with the model (the ledger row's epsilon)
SELECT epsilon_per_run, version FROM dperm.retraining_forecast('qm_high');
RESET ROLE;
SELECT pg_temp.spent() AS after_retrain;

-- 3. The 42710 rule: a version with another query, or the same name on the
-- relation itself, is refused before anything runs.
SET ROLE regress_qm_analyst;
\set VERBOSITY default
SELECT dperm.train_model_query('qm_high',
    $$SELECT features, wage > 900 AS high FROM qm_wages WHERE year >= 1981$$,
    'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2));
SELECT dperm.train_model('qm_high', 'qm_wages', 'features', 'id', 'huber',
    dp_options(epsilon => 1, dimension => 2));
-- the same query spelled otherwise is the same specification (a third version)
SELECT dperm.train_model_query('qm_high',
    $$select FEATURES, (wage > 1000) as high from public.qm_wages where (year >= 1981)$$,
    'features', 'high', 'logistic', dp_options(epsilon => 0.5, dimension => 2, seed => 3)) AS version;
\set VERBOSITY terse
-- refusals of the query itself, before anything runs: no version
SELECT dperm.train_model_query('qm_bad', $$SELECT features, count(*) > 1 AS l FROM qm_wages GROUP BY features$$,
    'features', 'l', 'logistic', dp_options(epsilon => 1, dimension => 2));
SELECT dperm.train_model_query('qm_bad', $$SELECT features, wage > 1000 AS l FROM qm_wages$$,
    'features', 'nope', 'logistic', dp_options(epsilon => 1, dimension => 2));
RESET ROLE;
SELECT pg_temp.spent() AS after_conflicts;

-- 4. Refusals at retrain cost nothing and leave no version: the budget
-- cannot pay for the run (6 - 1 - 1 - 0.5 - 3 = 0.5 left; a run of 3) ...
SET ROLE regress_qm_analyst;
SELECT dperm.train_model_query('qm_big',
    $$SELECT features, wage > 1000 AS high FROM qm_wages WHERE year >= 1981$$,
    'features', 'high', 'logistic', dp_options(epsilon => 3, dimension => 2, seed => 3)) AS version;
SELECT dperm.retrain('qm_big');
RESET ROLE;
SELECT pg_temp.spent() AS after_budget_refusal;
-- ... and the relation lost its protection for the analyst.
SET ROLE regress_qm_owner;
SELECT dperm.protect('qm_wages', ARRAY[]::regrole[]);
RESET ROLE;
SET ROLE regress_qm_analyst;
SELECT dperm.retrain('qm_high');
RESET ROLE;
SELECT pg_temp.spent() AS after_protection_refusal;
SELECT name, max(version) AS versions, count(*) FILTER (WHERE status = 'failed') AS failed
  FROM dperm.models WHERE name LIKE 'qm_%' GROUP BY name ORDER BY name;


-- 5. The budget moved to the relation that replaces the model's (an ETL
-- reload, dperm.move_budget): the model moved with it, but its stored query
-- still reads the old relation. The retrain says so and what to do, and
-- charges nothing; once the new relation takes the old one's name, the
-- stored query reads it and the retrain runs.
SET ROLE regress_qm_owner;
CREATE TABLE qm_reload AS
  SELECT i AS id, ARRAY[sin(i) / 2, cos(i) / 2] AS features, i % 3 = 0 AS label
    FROM generate_series(1, 200) i;
SELECT dperm.set_budget('qm_reload', 4, 1e-5);
SELECT dperm.train_model_query('qm_reloaded', $$SELECT features, label FROM qm_reload$$,
    'features', 'label', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 5)) AS version;
CREATE TABLE qm_reload_new AS SELECT * FROM qm_reload;
SELECT dperm.move_budget('qm_reload', 'qm_reload_new');
SELECT relation FROM dperm.models WHERE name = 'qm_reloaded';
\set VERBOSITY default
SELECT dperm.retrain('qm_reloaded');
\set VERBOSITY terse
SELECT count(*) AS ledger_rows FROM dperm.ledger
 WHERE 'public.qm_reload_new'::regclass = ANY (relations);
DROP TABLE qm_reload;
ALTER TABLE qm_reload_new RENAME TO qm_reload;
SELECT dperm.retrain('qm_reloaded') AS version;
SELECT count(*) AS ledger_rows FROM dperm.ledger
 WHERE 'public.qm_reload'::regclass = ANY (relations);
RESET ROLE;
