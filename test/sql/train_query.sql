-- dperm.train_query: a release on a query of one budgeted or protected
-- relation (filters, derived features and labels, joins to public lookups
-- on a unique key); the query's size is released noisily (a tenth of
-- epsilon), charged whole with the model before anything is read.
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
SET client_min_messages = warning;
CREATE ROLE regress_q_owner;
CREATE ROLE regress_q_analyst;
GRANT CREATE ON SCHEMA public TO regress_q_owner;
SET ROLE regress_q_owner;
-- wages: 400 rows; x = 0 on every 10th row (a division by x would fail).
CREATE TABLE wages AS
  SELECT i AS id, 1979 + i % 7 AS year, (i % 10)::float8 AS x,
         500 + (i * 37) % 1000 AS wage, i % 5 AS region_id,
         ARRAY[sin(i) / 2, cos(i) / 2] AS features
    FROM generate_series(1, 400) i;
CREATE TABLE regions (region_id int PRIMARY KEY, south boolean, code text UNIQUE, grp int);
INSERT INTO regions SELECT r, r % 2 = 0, 'r' || r, r % 2 FROM generate_series(0, 4) r;
GRANT SELECT ON regions TO PUBLIC;
SELECT dperm.set_budget('wages', 50, 1e-5);
SELECT dperm.protect('wages', ARRAY['regress_q_analyst']::regrole[]);
RESET ROLE;

-- The ledger and budget before and after each group of refusals.
CREATE FUNCTION pg_temp.spent() RETURNS text LANGUAGE sql AS
  $$SELECT (SELECT count(*) FROM dperm.ledger WHERE 'public.wages'::regclass = ANY (relations))
        || ' ledger rows, epsilon spent '
        || coalesce((SELECT round(epsilon_spent::numeric, 4)::text FROM dperm.budget_status
                      WHERE relation = 'public.wages'::regclass), 'none')$$;
SELECT pg_temp.spent() AS before;

SET ROLE regress_q_analyst;
-- The analyst has no SELECT on wages.
SELECT count(*) FROM wages;
-- A filtered release, and a derived label, by the analyst.
WITH m AS (SELECT dperm.train_query(
    $$SELECT features, wage > 1000 AS high FROM wages WHERE year >= 1981$$,
    'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 3))::jsonb j)
SELECT j->>'loss' AS loss, j->'n_noisy' AS n_noisy, j->'n_epsilon' AS n_epsilon,
       j->'epsilon' AS epsilon, j->'privacy_unit' AS unit,
       abs((j->>'n')::int - 400 * 5 / 7) < 40 AS n_near_filtered FROM m;
-- Derived features and a Huber label with dperm's total functions: x = 0
-- on 40 rows does not make the release fail (dperm.div gives NULL there).
WITH m AS (SELECT dperm.train_query(
    $$SELECT ARRAY[dperm.div(1, x), dperm.ln(x), dperm.div(dperm.sqrt(x), 3)] AS f,
             dperm.div(wage::float8, 1000) AS y FROM wages$$,
    'f', 'y', 'huber', dp_options(epsilon => 1, dimension => 3, seed => 4))::jsonb j)
SELECT j->>'loss' AS loss, j->'d' AS d, j->'n_noisy' AS n_noisy FROM m;
-- In streaming mode.
WITH m AS (SELECT dperm.train_query(
    $$SELECT features, wage > 1000 AS high FROM wages WHERE year >= 1981$$,
    'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 3),
    'streaming')::jsonb j)
SELECT j->'n_noisy' AS n_noisy, j->'plan'->>'algorithm' AS algorithm FROM m;
-- A lookup join on the primary key (INNER and LEFT), filtered on the lookup.
WITH m AS (SELECT dperm.train_query(
    $$SELECT w.features, r.south AS label FROM wages w JOIN regions r ON r.region_id = w.region_id
       WHERE r.grp = 1$$,
    'features', 'label', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 5))::jsonb j)
SELECT j->'n_noisy' AS n_noisy, abs((j->>'n')::int - 160) < 40 AS n_near_filtered FROM m;
SELECT dperm.train_query(
    $$SELECT w.features, coalesce(r.south, false) AS label
        FROM wages w LEFT JOIN regions r ON r.region_id = w.region_id AND r.grp = 1$$,
    'features', 'label', 'logistic', dp_options(epsilon => 1, dimension => 2)) IS NOT NULL AS left_join;
-- An empty query is a release like any other: a noisy size (here 0, then
-- positive: public dummy rows), charged either way; a noisy size of 0
-- releases NULL.
SELECT s AS seed, (dperm.train_query($$SELECT features, true AS l FROM wages WHERE year > 3000$$,
    'features', 'l', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => s))::jsonb->>'n')::int AS noisy_n
  FROM generate_series(3, 4) s;
RESET ROLE;
-- Every release is one ledger row charged to wages (never to regions), its
-- neighbours one row added or removed, epsilon as asked.
SELECT role, relation_names, neighbors, epsilon FROM dperm.ledger
 WHERE 'wages'::regclass = ANY (relations) ORDER BY id;
SELECT pg_temp.spent() AS after_releases;

-- Refusals: each before the charge, with its SQLSTATE.
SET ROLE regress_q_analyst;
-- pg_temp.try shows the SQLSTATE and the message of a refusal.
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
  PERFORM dperm.train_query(q, 'f', 'l', 'logistic', dp_options(epsilon => 1, dimension => 2));
  RETURN 'released';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $f$;
SELECT pg_temp.try($$SELECT 1 AS f$$);
SELECT pg_temp.try($$SELECT array_agg(x) AS f, true AS l FROM wages$$);
SELECT pg_temp.try($$SELECT features AS f, true AS l FROM wages GROUP BY features$$);
SELECT pg_temp.try($$SELECT features AS f, row_number() OVER () > 3 AS l FROM wages$$);
SELECT pg_temp.try($$SELECT DISTINCT features AS f, true AS l FROM wages$$);
SELECT pg_temp.try($$SELECT features AS f, true AS l FROM wages ORDER BY id$$);
SELECT pg_temp.try($$SELECT features AS f, true AS l FROM wages LIMIT 10$$);
SELECT pg_temp.try($$SELECT features AS f, true AS l FROM wages OFFSET 1$$);
SELECT pg_temp.try($$SELECT features AS f, true AS l FROM wages UNION ALL SELECT features, false FROM wages$$);
SELECT pg_temp.try($$WITH s AS (SELECT * FROM wages) SELECT features AS f, true AS l FROM s$$);
SELECT pg_temp.try($$SELECT features AS f, true AS l FROM wages WHERE x IN (SELECT 1)$$);
SELECT pg_temp.try($$SELECT features AS f, true AS l FROM (SELECT * FROM wages) s$$);
SELECT pg_temp.try($$SELECT features AS f, g > 1 AS l FROM wages, generate_series(1, 2) g$$);
SELECT pg_temp.try($$SELECT features AS f, generate_series(1, 2) > 1 AS l FROM wages$$);
SELECT pg_temp.try($$SELECT features AS f, true AS l FROM wages FOR UPDATE$$);
SELECT pg_temp.try($$SELECT features AS f, true AS l FROM wages TABLESAMPLE bernoulli (50)$$);
SELECT pg_temp.try($$SELECT features AS f, random() > 0.5 AS l FROM wages$$);
SELECT pg_temp.try($$SELECT features AS f, 1 / x > 1 AS l FROM wages$$);
SELECT pg_temp.try($$SELECT features AS f, ln(x) > 1 AS l FROM wages$$);
SELECT pg_temp.try($$SELECT features AS f, x + 1 > 1 AS l FROM wages$$);
SELECT pg_temp.try($$SELECT features AS f, wage::text::int > 1 AS l FROM wages$$);
SELECT pg_temp.try($$SELECT features AS f, now() > '2020-01-01' AS l FROM wages$$);
-- two private relations, a lookup not on a unique key, a comma join, RIGHT
SELECT pg_temp.try($$SELECT a.features AS f, b.x > 1 AS l FROM wages a JOIN wages b ON b.id = a.id$$);
SELECT pg_temp.try($$SELECT w.features AS f, r.south AS l FROM wages w JOIN regions r ON r.grp = w.region_id$$);
SELECT pg_temp.try($$SELECT w.features AS f, r.south AS l FROM wages w, regions r WHERE r.region_id = w.region_id$$);
SELECT pg_temp.try($$SELECT w.features AS f, r.south AS l FROM regions r RIGHT JOIN wages w ON r.region_id = w.region_id$$);
SELECT pg_temp.try($$SELECT ARRAY[1.0, 2.0]::float8[] AS f, south AS l FROM regions$$);
-- columns: unknown, wrong type; more than one statement
SELECT pg_temp.try($$SELECT features AS g, true AS l FROM wages$$);
SELECT pg_temp.try($$SELECT x AS f, true AS l FROM wages$$);
SELECT pg_temp.try($$SELECT features AS f, true AS l FROM wages; SELECT 1$$);
-- The detail and hint of one refusal.
SELECT dperm.train_query($$SELECT features AS f, 1 / x > 1 AS l FROM wages$$, 'f', 'l', 'logistic',
                         dp_options(epsilon => 1, dimension => 2));
RESET ROLE;
-- Views: test/sql/train_query_views.sql.
SELECT pg_temp.spent() AS after_refusals;

-- A budget with a privacy unit (a person, at most 3 rows) and a filter:
-- the noisy count counts the persons the filter keeps.
CREATE TABLE panel AS
  SELECT p AS person, 1979 + y AS year, ARRAY[sin(p + y) / 2, cos(p * y) / 2] AS features,
         (p * 31 + y * 7) % 100 AS wage
    FROM generate_series(1, 120) p, generate_series(0, 6) y;
SELECT dperm.set_budget('panel', 20, 1e-5, privacy_unit => 'person', max_rows_per_unit => 3);
WITH m AS (SELECT dperm.train_query(
    $$SELECT features, wage > 50 AS above FROM panel WHERE year >= 1983$$,
    'features', 'above', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 2))::jsonb j)
SELECT j->'privacy_unit'->>'column' AS unit, j->'privacy_unit'->'max_rows_per_unit' AS k,
       (j->>'n')::int = 3 * (j->'privacy_unit'->>'units')::int AS n_is_units_times_k,
       abs((j->'privacy_unit'->>'units')::int - 120) < 30 AS units_near_120, j->'n_noisy' AS n_noisy
  FROM m;
SELECT neighbors, epsilon FROM dperm.ledger WHERE 'panel'::regclass = ANY (relations) ORDER BY id;

-- search_path: the analyst's pg_temp table and operator never stand in for
-- the names the query meant. The query names public.wages; the canonical
-- text is qualified, so dperm's internal SQL (search_path pg_catalog,
-- pg_temp) reads public.wages, not pg_temp.wages (10000 rows).
SET ROLE regress_q_analyst;
CREATE TEMP TABLE wages AS
  SELECT ARRAY[1.0, 1.0]::float8[] AS features, 5000 AS wage, 0 AS year FROM generate_series(1, 10000);
SET search_path = public, pg_temp;
WITH m AS (SELECT dperm.train_query(
    $$SELECT features, wage > 1000 AS high FROM wages$$,
    'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 3))::jsonb j)
SELECT abs((j->>'n')::int - 400) < 40 AS read_public_wages FROM m;
-- With pg_temp first, the analyst's own table is what the query names: a
-- relation without a budget, refused.
SET search_path = pg_temp, public;
SELECT pg_temp.try($$SELECT features AS f, wage > 1000 AS l FROM wages$$);
-- An operator of the analyst's own schema is the analyst's function: refused.
RESET search_path;
RESET ROLE;
CREATE SCHEMA regress_q AUTHORIZATION regress_q_analyst;
SET ROLE regress_q_analyst;
CREATE FUNCTION regress_q.gt(float8, float8) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT $1 > $2';
CREATE OPERATOR regress_q.> (LEFTARG = float8, RIGHTARG = float8, FUNCTION = regress_q.gt);
SET search_path = regress_q, pg_catalog, public;
SELECT pg_temp.try($$SELECT features AS f, x > 1.5::float8 AS l FROM public.wages$$);
RESET search_path;
RESET ROLE;
SELECT relation_names FROM dperm.ledger ORDER BY id DESC LIMIT 1;

-- The total functions: NULL exactly where the built-in raises.
SELECT dperm.div(1, 0) AS div0, dperm.div(1, 4) AS quarter, dperm.div(1e300, 1e-300) AS overflow,
       dperm.div(1e-300, 1e300) AS underflow, dperm.ln(0) AS ln0, dperm.ln(-1) AS ln_neg,
       dperm.ln(1) AS ln1, dperm.log10(1000) AS log1000, dperm.sqrt(-4) AS sqrt_neg,
       dperm.sqrt(9) AS three, dperm.plus(1e308, 1e308) AS plus_inf, dperm.minus(3, 1) AS two,
       dperm.times(1e200, 1e200) AS times_inf, dperm.times('Infinity', 2) AS inf;
SELECT proname, provolatile, proleakproof, proisstrict FROM pg_proc
 WHERE pronamespace = 'dperm'::regnamespace AND proname IN ('div', 'ln', 'log10', 'sqrt', 'plus', 'minus', 'times')
 ORDER BY proname;

