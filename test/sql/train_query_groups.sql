-- dperm.train_query_groups: one model per key of a declared public domain
-- of a query's output column; the groups are disjoint, so the statement is
-- charged one release's epsilon (parallel composition), in one ledger row.
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
SET client_min_messages = warning;
CREATE ROLE regress_g_owner;
CREATE ROLE regress_g_analyst;
GRANT CREATE ON SCHEMA public TO regress_g_owner;
SET ROLE regress_g_owner;
-- sales: 600 rows; region EU, US, APAC, ZZ or NULL (120 rows each).
CREATE TABLE sales AS
  SELECT i AS id, (ARRAY['EU', 'US', 'APAC', 'ZZ'])[i % 5 + 1] AS region, i % 5 AS region_id,
         500 + (i * 37) % 1000 AS amount, ARRAY[sin(i) / 2, cos(i) / 2] AS features
    FROM generate_series(1, 600) i;
SELECT dperm.set_budget('sales', 50, 1e-5);
SELECT dperm.protect('sales', ARRAY['regress_g_analyst']::regrole[]);
RESET ROLE;

-- The ledger and budget before and after each step.
CREATE FUNCTION pg_temp.spent() RETURNS text LANGUAGE sql AS
  $$SELECT (SELECT count(*) FROM dperm.ledger WHERE 'public.sales'::regclass = ANY (relations))
        || ' ledger rows, epsilon spent '
        || coalesce((SELECT round(epsilon_spent::numeric, 4)::text FROM dperm.budget_status
                      WHERE relation = 'public.sales'::regclass), 'none')$$;
SELECT pg_temp.spent() AS before;

-- Three groups: EU and US (120 rows each) and LATAM (no row). APAC, ZZ and
-- NULL are outside the domain and drop out. One row per declared key, in
-- the declared order; each model states its group and its noisy n.
SET ROLE regress_g_analyst;
SELECT group_key, m::jsonb->'group' AS "group", m::jsonb->'n_noisy' AS n_noisy,
       m::jsonb->'epsilon' AS epsilon,
       CASE WHEN group_key = 'LATAM' THEN m IS NULL OR (m::jsonb->>'n')::int < 60
            ELSE abs((m::jsonb->>'n')::int - 120) < 40 END AS n_as_expected
  FROM dperm.train_query_groups(
    $$SELECT features, amount > 1000 AS high, region FROM sales$$,
    'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 3),
    'region', '["EU", "US", "LATAM"]') AS g(group_key, m);
RESET ROLE;
-- One ledger row for the statement, charged one release's epsilon (not 3),
-- its neighbours naming the groups; the budget spent exactly 1.
SELECT role, relation_names, neighbors, epsilon FROM dperm.ledger
 WHERE 'sales'::regclass = ANY (relations) ORDER BY id;
SELECT pg_temp.spent() AS after_groups;

-- An empty group still returns its row: a NULL model when its noisy size is
-- 0, else a model on public dummy rows; either way the same one charge.
SET ROLE regress_g_analyst;
SELECT s AS seed, group_key, m IS NULL AS null_model, (m::jsonb->>'n')::int AS noisy_n
  FROM generate_series(3, 5) s,
       dperm.train_query_groups(
         $$SELECT features, amount > 1000 AS high, region FROM sales WHERE region = 'none'$$,
         'features', 'high', 'logistic', dp_options(epsilon => 0.5, dimension => 2, seed => s),
         'region', '["EU"]') AS g(group_key, m)
 ORDER BY s;
-- Integer keys cast once to the column's type: 0 and '1' (120 rows each),
-- in streaming mode.
SELECT group_key, m::jsonb->'group' AS "group", abs((m::jsonb->>'n')::int - 120) < 40 AS n_near_120,
       m::jsonb->'plan'->>'algorithm' AS algorithm
  FROM dperm.train_query_groups(
    $$SELECT features, amount > 1000 AS high, region_id FROM sales$$,
    'features', 'high', 'logistic', dp_options(epsilon => 2, dimension => 2, seed => 4),
    'region_id', '[0, "1"]', 'streaming') AS g(group_key, m);
RESET ROLE;
SELECT epsilon, neighbors FROM dperm.ledger WHERE 'sales'::regclass = ANY (relations)
 ORDER BY id DESC LIMIT 4;
SELECT pg_temp.spent() AS after_releases;

-- Refusals: each before the charge, with its SQLSTATE; the ledger unchanged.
SET ROLE regress_g_analyst;
CREATE FUNCTION pg_temp.try(group_by text, groups jsonb,
    q text DEFAULT $$SELECT features, amount > 1000 AS high, region, region_id FROM sales$$)
  RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
  PERFORM dperm.train_query_groups(q, 'features', 'high', 'logistic',
                                   dp_options(epsilon => 1, dimension => 2), group_by, groups);
  RETURN 'released';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $f$;
-- too many groups (1001)
SELECT pg_temp.try('region', (SELECT jsonb_agg('k' || i) FROM generate_series(1, 1001) i));
-- duplicate keys: as text, and equal as integers
SELECT pg_temp.try('region', '["EU", "US", "EU"]');
SELECT pg_temp.try('region_id', '[1, "01"]');
-- a key that does not cast to the column's type
SELECT pg_temp.try('region_id', '[1, "EU"]');
-- group_by not an output column of the query; the unit column is reserved
SELECT pg_temp.try('amount', '["EU"]');
SELECT pg_temp.try('dperm_unit', '["EU"]');
-- a NULL key, no key, not an array, a nested key
SELECT pg_temp.try('region', '["EU", null]');
SELECT pg_temp.try('region', '[]');
SELECT pg_temp.try('region', '{"EU": 1}');
SELECT pg_temp.try('region', '[["EU"]]');
-- a column type without a leakproof equality (an array)
SELECT pg_temp.try('features', '["{1,2}"]');
-- the query's own refusals still come first
SELECT pg_temp.try('region', '["EU"]', $$SELECT DISTINCT features, true AS high, region FROM sales$$);
-- The detail and hint of one refusal.
SELECT * FROM dperm.train_query_groups(
    $$SELECT features, amount > 1000 AS high, region_id FROM sales$$,
    'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2),
    'region_id', '[1, "EU"]');
RESET ROLE;
SELECT pg_temp.spent() AS after_refusals;

-- The unit rule: a relation whose budget declares a privacy unit is
-- refused (a person's rows may span groups), before any charge.
CREATE TABLE panel_g AS
  SELECT p AS person, 1979 + y AS year, ARRAY[sin(p + y) / 2, cos(p * y) / 2] AS features,
         (p * 31 + y * 7) % 100 AS wage
    FROM generate_series(1, 60) p, generate_series(0, 6) y;
SELECT dperm.set_budget('panel_g', 20, 1e-5, privacy_unit => 'person', max_rows_per_unit => 3);
SELECT * FROM dperm.train_query_groups(
    $$SELECT features, wage > 50 AS above, year FROM panel_g$$,
    'features', 'above', 'logistic', dp_options(epsilon => 1, dimension => 2),
    'year', '[1979, 1980]');
SELECT count(*) AS panel_g_ledger_rows FROM dperm.ledger WHERE 'panel_g'::regclass = ANY (relations);

-- The aggregate under GROUP BY on a budgeted relation is refused before any
-- charge (train_query_groups is the way to per-group models).
SELECT region, dp_logreg(features, amount > 1000, dp_options(epsilon => 1, dimension => 2))
  FROM sales GROUP BY region;
SELECT pg_temp.spent() AS after_group_by;

