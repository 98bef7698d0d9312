-- dperm.evaluate_query: dperm.evaluate on the rows of a query
-- (dperm.train_query's rules, checked before the charge). The metric sums
-- and the number of rows are released together, one charge, discrete
-- Laplace at epsilon (at epsilon / k per sum at a unit of k rows); the
-- metrics are the noisy sums over the noisy count (at least 1).
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
SET client_min_messages = warning;
CREATE ROLE regress_eq_owner;
CREATE ROLE regress_eq_analyst;
CREATE ROLE regress_eq_other;
GRANT CREATE ON SCHEMA public TO regress_eq_owner;
SET ROLE regress_eq_owner;
-- eq_wages: 4000 rows; the label depends on the features (with noise).
CREATE TABLE eq_wages AS
  SELECT i AS id, 1979 + i % 7 AS year, ARRAY[sin(i) / 2, cos(i * 3) / 2] AS features,
         CASE WHEN sin(i) + cos(i * 3) / 2 + ((i * 37) % 100 - 50) / 100.0 > 0
              THEN 1500 ELSE 700 END AS wage
    FROM generate_series(1, 4000) i;
SELECT dperm.set_budget('eq_wages', 20, 1e-5);
SELECT dperm.protect('eq_wages', ARRAY['regress_eq_analyst']::regrole[]);
RESET ROLE;

CREATE FUNCTION pg_temp.spent() RETURNS text LANGUAGE sql AS
  $$SELECT (SELECT count(*) FROM dperm.ledger WHERE 'public.eq_wages'::regclass = ANY (relations))
        || ' ledger rows, epsilon spent '
        || coalesce((SELECT round(epsilon_spent::numeric, 4)::text FROM dperm.budget_status
                      WHERE relation = 'public.eq_wages'::regclass), 'none')$$;

-- The analyst (no SELECT on eq_wages) trains a named model on a filter.
SET ROLE regress_eq_analyst;
SELECT dperm.train_model_query('eq_m',
    $$SELECT features, wage > 1000 AS high FROM eq_wages WHERE year >= 1981$$,
    'features', 'high', 'logistic', dp_options(epsilon => 2, dimension => 2, seed => 1)) AS version;
RESET ROLE;
SELECT pg_temp.spent() AS before;

-- 1. A filtered query, evaluated by the analyst: charged once, n noisy.
SET ROLE regress_eq_analyst;
SELECT dperm.evaluate_query('eq_m',
    $$SELECT features, wage > 1000 AS high FROM eq_wages WHERE year >= 1981$$,
    'features', 'high', '{"epsilon": 1, "seed": 5}') AS e \gset
RESET ROLE;
SELECT e->'n_noisy' AS n_noisy, e->'privacy_unit' AS unit, e->'epsilon' AS epsilon,
       e->'delta' AS delta, e ? 'accuracy' AS has_accuracy, e ? 'log_loss' AS has_log_loss
  FROM (SELECT :'e'::jsonb e) s;
SELECT pg_temp.spent() AS after_one_evaluation;
SELECT neighbors, epsilon, algorithm, mechanism FROM dperm.ledger
 WHERE 'eq_wages'::regclass = ANY (relations) ORDER BY id DESC LIMIT 1;
-- Near the exact metrics (computed here by the owner): each sum's noise is
-- discrete Laplace of scale b (noise_scale, per sum in units of its bound),
-- so |error| of a mean is about (bound |Z| + mean |Z_n|) / n; 20 b is far
-- beyond any draw (P = e^-20).
WITH m AS (SELECT model FROM dperm.models WHERE name = 'eq_m' AND status = 'trained'),
     r AS (SELECT w.features AS f, CASE WHEN w.wage > 1000 THEN 1 ELSE 0 END AS y
             FROM eq_wages w WHERE year >= 1981),
     x AS (SELECT count(*)::float8 AS n,
                  avg(CASE WHEN dp_predict_class(m.model, r.f) = r.y THEN 1 ELSE 0 END) AS acc,
                  avg(least(10, -ln(greatest(1e-300, (dp_predict_proba(m.model, r.f))[r.y + 1]))))
                    AS ll
             FROM r, m),
     e AS (SELECT :'e'::jsonb e)
SELECT x.n AS exact_n, x.acc > 0.6 AS model_is_useful,
       abs((e->>'n')::float8 - x.n) <= 20 * (e->>'noise_scale')::float8 AS n_near,
       abs((e->>'accuracy')::float8 - x.acc)
         <= 20 * (e->>'noise_scale')::float8 * (1 + x.acc) / x.n AS accuracy_near,
       abs((e->>'log_loss')::float8 - x.ll)
         <= 20 * (e->>'noise_scale')::float8 * (10 + x.ll) / x.n AS log_loss_near,
       (e->>'noise_scale')::float8 BETWEEN 3 AND 3.01 AS scale_is_3_over_epsilon
  FROM x, e;
-- Stored with the version.
SELECT jsonb_array_length(evaluation) AS evaluations, evaluation->0->>'query' LIKE '%year >= 1981%' AS states_query
  FROM dperm.models WHERE name = 'eq_m' AND status = 'trained';
-- An empty query is an evaluation like any other (the metrics over
-- max(1, noisy n)).
SET ROLE regress_eq_analyst;
SELECT (e->>'accuracy')::float8 BETWEEN 0 AND 1 AS accuracy_in_range, e->'n_noisy' AS n_noisy
  FROM (SELECT dperm.evaluate_query('eq_m', $$SELECT features, wage > 1000 AS high FROM eq_wages WHERE year > 3000$$,
          'features', 'high', '{"epsilon": 0.5, "seed": 6}') e) s;
RESET ROLE;
SELECT pg_temp.spent() AS after_two_evaluations;

-- 2. Refusals: before the charge, the ledger unchanged.
SET ROLE regress_eq_analyst;
\set VERBOSITY terse
SELECT dperm.evaluate_query('eq_m', $$SELECT features, count(*) > 1 AS high FROM eq_wages GROUP BY features$$,
    'features', 'high', '{"epsilon": 1}');
SELECT dperm.evaluate_query('eq_m', $$SELECT DISTINCT features, wage > 1000 AS high FROM eq_wages$$,
    'features', 'high', '{"epsilon": 1}');
SELECT dperm.evaluate_query('eq_m', $$SELECT features, 1000 / (year - 1980) > 1 AS high FROM eq_wages$$,
    'features', 'high', '{"epsilon": 1}');
SELECT dperm.evaluate_query('eq_m', $$SELECT features, wage > 1000 AS high FROM eq_wages$$,
    'features', 'nope', '{"epsilon": 1}');
SELECT dperm.evaluate_query('eq_m', $$SELECT features, wage > 1000 AS high FROM eq_wages$$,
    'features', 'features', '{"epsilon": 1}');
SELECT dperm.evaluate_query('eq_m', $$SELECT features, wage > 1000 AS high FROM eq_wages$$,
    'features', 'high', '{"epsilon": 1, "bogus": 1}');
SELECT dperm.evaluate_query('eq_none', $$SELECT features, wage > 1000 AS high FROM eq_wages$$,
    'features', 'high', '{"epsilon": 1}');
-- over the budget (20, about 3.5 spent)
SELECT dperm.evaluate_query('eq_m', $$SELECT features, wage > 1000 AS high FROM eq_wages$$,
    'features', 'high', '{"epsilon": 50}');
RESET ROLE;
-- another role: a model is its owner's (42704 before anything is read)
SET ROLE regress_eq_other;
SELECT dperm.evaluate_query('eq_m', $$SELECT features, wage > 1000 AS high FROM eq_wages$$,
    'features', 'high', '{"epsilon": 1}');
RESET ROLE;
\set VERBOSITY default
SELECT pg_temp.spent() AS after_refusals;

-- 3. A privacy unit (a person, at most 3 rows): dperm.evaluate_query and
-- plain dperm.evaluate on the relation (the query SELECT * FROM it), each
-- unit bounded to 3 rows, n released noisily, noise for 3 rows a unit.
CREATE TABLE eq_panel AS
  SELECT p AS person, 1979 + y AS year, ARRAY[sin(p + y) / 2, cos(p * y) / 2] AS features,
         sin(p + y) + ((p * 31 + y * 7) % 100 - 50) / 100.0 > 0 AS above
    FROM generate_series(1, 400) p, generate_series(0, 6) y;
SELECT dperm.set_budget('eq_panel', 20, 1e-5, privacy_unit => 'person', max_rows_per_unit => 3);
SELECT dperm.train_model_query('eq_pm', $$SELECT features, above FROM eq_panel WHERE year >= 1981$$,
    'features', 'above', 'logistic', dp_options(epsilon => 2, dimension => 2, seed => 2)) AS version;
SELECT e->'privacy_unit' AS unit, e->'n_noisy' AS n_noisy,
       abs((e->>'n')::float8 - 1200) <= 20 * (e->>'noise_scale')::float8 AS n_near_3_per_person,
       (e->>'noise_scale')::float8 BETWEEN 9 AND 9.1 AS scale_is_3k_over_epsilon
  FROM (SELECT dperm.evaluate_query('eq_pm', $$SELECT features, above FROM eq_panel WHERE year >= 1981$$,
          'features', 'above', '{"epsilon": 1, "seed": 3}') e) s;
SELECT e->'privacy_unit' AS unit, e->>'query' AS query, e ? 'accuracy' AS has_accuracy,
       abs((e->>'n')::float8 - 1200) <= 20 * (e->>'noise_scale')::float8 AS n_near_3_per_person
  FROM (SELECT dperm.evaluate('eq_pm', 'eq_panel', 'features', 'above', '{"epsilon": 1, "seed": 4}') e) s;
SELECT neighbors, epsilon, mechanism FROM dperm.ledger
 WHERE 'eq_panel'::regclass = ANY (relations) ORDER BY id;

SELECT dperm.drop_model('eq_m');
SELECT dperm.drop_model('eq_pm');
