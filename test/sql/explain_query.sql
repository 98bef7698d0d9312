-- dperm.explain_query: dp_explain for a query. It runs dperm.train_query's
-- checks before the charge and refuses what they refuse, then shows the
-- query's public shape and the release's plan at the analyst's stated n;
-- it reads no row and charges nothing.
SET max_parallel_workers_per_gather = 0;
SET client_min_messages = warning;
CREATE ROLE regress_xq_owner;
CREATE ROLE regress_xq_analyst;
CREATE ROLE regress_xq_other;
GRANT CREATE ON SCHEMA public TO regress_xq_owner;
-- An allowed function (IMMUTABLE, LEAKPROOF: only a superuser marks one)
-- that raises on one value: a read of the rows would evaluate it.
CREATE FUNCTION xq_boom(x int) RETURNS float8 LANGUAGE plpgsql IMMUTABLE LEAKPROOF AS
  $$BEGIN IF x = 13 THEN RAISE EXCEPTION 'row 13 was evaluated'; END IF; RETURN x; END$$;
SET ROLE regress_xq_owner;
CREATE TABLE xq_wages AS
  SELECT i AS id, i % 3 AS region, 500 + (i * 37) % 1000 AS wage,
         ARRAY[sin(i) / 2, cos(i) / 2] AS features
    FROM generate_series(1, 300) i;
CREATE TABLE xq_regions (region int PRIMARY KEY, name text);
INSERT INTO xq_regions VALUES (0, 'north'), (1, 'south'), (2, 'west');
GRANT SELECT ON xq_regions TO regress_xq_analyst, regress_xq_other;
SELECT dperm.set_budget('xq_wages', 5, 1e-5);
SELECT dperm.protect('xq_wages', ARRAY['regress_xq_analyst']::regrole[]);
-- a relation whose budget counts privacy per person, at most 5 rows each
CREATE TABLE xq_visits AS
  SELECT i AS id, i % 40 AS person, ARRAY[sin(i) / 2, cos(i) / 2] AS features, i % 2 = 0 AS back
    FROM generate_series(1, 200) i;
SELECT dperm.set_budget('xq_visits', 5, 1e-5, privacy_unit => 'person', max_rows_per_unit => 5);
SELECT dperm.protect('xq_visits', ARRAY['regress_xq_analyst']::regrole[]);
RESET ROLE;
-- the function fails on one of the rows
SELECT count(*) FROM xq_wages WHERE xq_boom(id) > 0;
SELECT count(*) AS ledger_rows FROM dperm.ledger \gset

-- A refusal's SQLSTATE and message, caught as the caller.
CREATE FUNCTION pg_temp.refusal(sql text) RETURNS text LANGUAGE plpgsql AS
  $$BEGIN EXECUTE sql; RETURN 'accepted';
  EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE || ': ' || SQLERRM; END$$;

SET ROLE regress_xq_analyst;
-- 1. The shape, for a listed analyst without SELECT on the relation: a
-- filter, a derived label, a public lookup; n is the stated estimate.
SELECT has_table_privilege('xq_wages', 'SELECT') AS analyst_may_select;
SELECT jsonb_pretty(dperm.explain_query(
    $$SELECT w.features, w.wage > 1000 AS high, r.name FROM xq_wages w
        JOIN xq_regions r ON r.region = w.region WHERE w.id > 10$$,
    'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2), 5000) - 'plan');
-- The plan is dp_explain's at the stated n with the model's share of
-- epsilon (0.9), per row (max_rows_per_unit = 1).
WITH e AS (SELECT dperm.explain_query($$SELECT features, wage > 1000 AS high FROM xq_wages$$,
             'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2), 5000) j),
     x AS (SELECT dp_explain('logistic', 5000, 2,
             dp_options(epsilon => 0.9, dimension => 2, max_rows_per_unit => 1)) p)
SELECT j->'plan'->>'algorithm' AS algorithm, (j->'plan'->>'n')::int AS plan_n,
       (j->'plan') - 'options' - 'options_given' = p - 'options' - 'options_given' AS same_plan,
       (j->'plan'->'options'->>'epsilon')::float8 AS model_epsilon
  FROM e, x;
-- Nothing is evaluated on a row: xq_boom raises on row 13, yet the
-- explanation is given.
SELECT j->'n' AS n, j->>'note' AS note
  FROM dperm.explain_query($$SELECT features, xq_boom(id) > 100 AS high FROM xq_wages$$,
         'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2), 300) j;
-- abs of a numeric, a float8 or a float4 is on the reviewed list as abs(x)
-- as well as @x (the same C functions).
SELECT j->'n'->>'value' AS explained
  FROM dperm.explain_query($$SELECT features, abs(wage::numeric) > abs(-1000.5)
                                AND abs(features[1]) < @ features[2] AS high FROM xq_wages$$,
         'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2), 300) j;
-- 2. A relation with a privacy unit: n counts units of up to 5 rows.
SELECT j->'privacy_unit' AS unit, j->'n' AS n, j->'count' AS count
  FROM dperm.explain_query($$SELECT features, back FROM xq_visits WHERE id > 5$$,
         'features', 'back', 'logistic', dp_options(epsilon => 2, dimension => 2), 30) j;
-- 3. Per group: the groups' checks too, n per group.
SELECT j->'groups' AS groups, j->'n'->>'source' AS source
  FROM dperm.explain_query($$SELECT features, wage > 1000 AS high, region FROM xq_wages$$,
         'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2), 100,
         'region', '[0, 1, 2]') j;
RESET ROLE;
-- Nothing was charged.
SELECT count(*) - :ledger_rows AS new_ledger_rows FROM dperm.ledger;

-- 4. Refused exactly as dperm.train_query refuses, before any charge.
SET ROLE regress_xq_analyst;
-- a query that is not a per-row map (0A000)
SELECT pg_temp.refusal($$SELECT dperm.train_query('SELECT features, count(*) > 1 AS l FROM xq_wages GROUP BY features',
  'features', 'l', 'logistic', dp_options(epsilon => 1, dimension => 2))$$) AS train_query;
SELECT pg_temp.refusal($$SELECT dperm.explain_query('SELECT features, count(*) > 1 AS l FROM xq_wages GROUP BY features',
  'features', 'l', 'logistic', dp_options(epsilon => 1, dimension => 2), 100)$$) AS explain_query;
-- d not declared (22023 or as dperm.train_query says)
SELECT pg_temp.refusal($$SELECT dperm.train_query('SELECT features, wage > 1000 AS l FROM xq_wages',
  'features', 'l', 'logistic', dp_options(epsilon => 1))$$) AS train_query;
SELECT pg_temp.refusal($$SELECT dperm.explain_query('SELECT features, wage > 1000 AS l FROM xq_wages',
  'features', 'l', 'logistic', dp_options(epsilon => 1), 100)$$) AS explain_query;
-- groups on a relation with a privacy unit (0A000)
SELECT pg_temp.refusal($$SELECT * FROM dperm.train_query_groups('SELECT features, back, person FROM xq_visits',
  'features', 'back', 'logistic', dp_options(epsilon => 1, dimension => 2), 'person', '[1, 2]')$$) AS train_query_groups;
SELECT pg_temp.refusal($$SELECT dperm.explain_query('SELECT features, back, person FROM xq_visits',
  'features', 'back', 'logistic', dp_options(epsilon => 1, dimension => 2), 100, 'person', '[1, 2]')$$) AS explain_query;
-- a stated n below 1
SELECT pg_temp.refusal($$SELECT dperm.explain_query('SELECT features, wage > 1000 AS l FROM xq_wages',
  'features', 'l', 'logistic', dp_options(epsilon => 1, dimension => 2), 0)$$) AS explain_query;
RESET ROLE;
-- a role the owner did not list (42501)
SET ROLE regress_xq_other;
SELECT pg_temp.refusal($$SELECT dperm.train_query('SELECT features, wage > 1000 AS l FROM xq_wages',
  'features', 'l', 'logistic', dp_options(epsilon => 1, dimension => 2))$$) AS train_query;
SELECT pg_temp.refusal($$SELECT dperm.explain_query('SELECT features, wage > 1000 AS l FROM xq_wages',
  'features', 'l', 'logistic', dp_options(epsilon => 1, dimension => 2), 100)$$) AS explain_query;
RESET ROLE;
SELECT count(*) - :ledger_rows AS new_ledger_rows FROM dperm.ledger;
