-- dperm.evaluate_query_groups: each group's model (dperm.train_query_groups'
-- output) evaluated on its own group's rows; the groups are disjoint, so the
-- statement is charged one evaluation's epsilon (parallel composition), in
-- one ledger row naming the groups. Every refusal comes before the charge.
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
SET client_min_messages = warning;
CREATE ROLE regress_eg_owner;
CREATE ROLE regress_eg_analyst;
GRANT CREATE ON SCHEMA public TO regress_eg_owner;
SET ROLE regress_eg_owner;
-- eg_shop: 3000 rows in regions EU, US, APAC (1000 each); the label depends on
-- the features, with label noise of width 1 in EU, 0.4 in US, 0.25 in APAC.
CREATE TABLE eg_shop AS
  SELECT i AS id, (ARRAY['EU', 'US', 'APAC'])[i % 3 + 1] AS region,
         ARRAY[sin(i) / 2, cos(i * 3) / 2] AS features,
         sin(i) + ((i * 37) % 100 - 50) / (100.0 + 150 * (i % 3)) > 0 AS high
    FROM generate_series(1, 3000) i;
SELECT dperm.set_budget('eg_shop', 50, 1e-5);
SELECT dperm.protect('eg_shop', ARRAY['regress_eg_analyst']::regrole[]);
-- eg_panel: a relation whose budget names a unit (refused: a unit spans groups)
CREATE TABLE eg_panel AS
  SELECT p AS person, (ARRAY['EU', 'US'])[p % 2 + 1] AS region, ARRAY[sin(p + y) / 2] AS features,
         sin(p + y) > 0 AS high
    FROM generate_series(1, 50) p, generate_series(1, 3) y;
SELECT dperm.set_budget('eg_panel', 10, 1e-5, privacy_unit => 'person', max_rows_per_unit => 3);
SELECT dperm.protect('eg_panel', ARRAY['regress_eg_analyst']::regrole[]);
RESET ROLE;

CREATE FUNCTION pg_temp.spent(rel regclass) RETURNS text LANGUAGE sql AS
  $$SELECT (SELECT count(*) FROM dperm.ledger WHERE rel = ANY (relations))
        || ' ledger rows, epsilon spent '
        || coalesce((SELECT round(epsilon_spent::numeric, 4)::text FROM dperm.budget_status
                      WHERE relation = rel), 'none')$$;

-- The analyst (no SELECT on eg_shop) trains one model per region, then
-- evaluates each on its region's rows.
SET ROLE regress_eg_analyst;
CREATE TEMP TABLE m AS
  SELECT group_key, model FROM dperm.train_query_groups(
    $$SELECT features, high, region FROM eg_shop$$, 'features', 'high', 'logistic',
    dp_options(epsilon => 2, dimension => 2, seed => 7), 'region', '["EU", "US", "APAC"]');
CREATE TEMP TABLE e AS
  SELECT * FROM dperm.evaluate_query_groups(
    $$SELECT features, high, region FROM eg_shop$$, 'features', 'high', 'region',
    (SELECT jsonb_object_agg(group_key, model::jsonb) FROM m), '{"epsilon": 1, "seed": 9}');
RESET ROLE;
SELECT pg_temp.spent('eg_shop') AS after_train_and_evaluate;
-- One ledger row for the evaluation, charged one evaluation's epsilon (not
-- 3), its neighbours naming the groups.
SELECT algorithm, mechanism, neighbors, epsilon FROM dperm.ledger
 WHERE 'eg_shop'::regclass = ANY (relations) ORDER BY id DESC LIMIT 1;
-- Each group's evaluation: its key, the one ledger row, a noisy n near 1000,
-- and metrics near the exact ones computed here by the owner on that
-- group's rows (each sum's noise is discrete Laplace of scale b = 3 /
-- epsilon; 20 b is far beyond any draw).
WITH x AS (
  SELECT s.region, count(*)::float8 AS n,
         avg(CASE WHEN dp_predict_class(m.model, s.features) = s.high::int THEN 1 ELSE 0 END) AS acc,
         avg(least(10, -ln(greatest(1e-300,
             (dp_predict_proba(m.model, s.features))[s.high::int + 1])))) AS ll
    FROM eg_shop s JOIN m ON m.group_key = s.region GROUP BY s.region)
SELECT e.group_key, e.evaluation->>'group_key' AS states_group,
       (e.evaluation->>'ledger_id')::bigint = (SELECT max(id) FROM dperm.ledger) AS one_ledger_row,
       e.evaluation->'n_noisy' AS n_noisy,
       abs((e.evaluation->>'n')::float8 - x.n) <= 20 * (e.evaluation->>'noise_scale')::float8 AS n_near,
       abs((e.evaluation->>'accuracy')::float8 - x.acc)
         <= 20 * (e.evaluation->>'noise_scale')::float8 * 2 / x.n AS accuracy_near,
       abs((e.evaluation->>'log_loss')::float8 - x.ll)
         <= 20 * (e.evaluation->>'noise_scale')::float8 * 20 / x.n AS log_loss_near,
       (e.evaluation->>'noise_scale')::float8 BETWEEN 3 AND 3.01 AS scale_is_3_over_epsilon
  FROM e JOIN x ON x.region = e.group_key ORDER BY e.group_key;
-- The groups differ: APAC's label is sharper than EU's, and the
-- evaluations show it (each group's own rows, not the whole relation's).
SELECT (SELECT (evaluation->>'accuracy')::float8 FROM e WHERE group_key = 'APAC')
     > (SELECT (evaluation->>'accuracy')::float8 FROM e WHERE group_key = 'EU') AS apac_sharper;

-- A null model (a group whose noisy count was 0) is not evaluated; keys
-- outside the data (LATAM) are groups like any other; APAC's rows drop out.
SET ROLE regress_eg_analyst;
SELECT group_key, evaluation IS NULL AS not_evaluated,
       (evaluation->>'n')::float8 < 60 AS latam_near_0
  FROM dperm.evaluate_query_groups(
    $$SELECT features, high, region FROM eg_shop$$, 'features', 'high', 'region',
    jsonb_build_object('EU', NULL::jsonb, 'LATAM', (SELECT model::jsonb FROM m WHERE group_key = 'US')),
    '{"epsilon": 0.5, "seed": 10}')
 ORDER BY group_key;
RESET ROLE;
SELECT pg_temp.spent('eg_shop') AS after_two_evaluations;

-- Refusals, before anything is charged: the ledger unchanged.
SET ROLE regress_eg_analyst;
\set VERBOSITY terse
-- models not an object
SELECT * FROM dperm.evaluate_query_groups($$SELECT features, high, region FROM eg_shop$$,
    'features', 'high', 'region', '[1, 2]', '{"epsilon": 1}');
-- not a model
SELECT * FROM dperm.evaluate_query_groups($$SELECT features, high, region FROM eg_shop$$,
    'features', 'high', 'region', '{"EU": {"a": 1}}', '{"epsilon": 1}');
-- models of different kinds
SELECT * FROM dperm.evaluate_query_groups($$SELECT features, high, region FROM eg_shop$$,
    'features', 'high', 'region',
    jsonb_build_object('EU', (SELECT model::jsonb FROM m WHERE group_key = 'EU'),
                       'US', (SELECT dperm.train_query($$SELECT ARRAY[features[1]] AS f, high FROM eg_shop$$,
                                'f', 'high', 'logistic', dp_options(epsilon => 0.1, dimension => 1, seed => 1)))::jsonb),
    '{"epsilon": 1}');
RESET ROLE;
SELECT pg_temp.spent('eg_shop') AS after_a_train_query;
SET ROLE regress_eg_analyst;
-- no such column, an aggregate in the query, a function that can fail
SELECT * FROM dperm.evaluate_query_groups($$SELECT features, high, region FROM eg_shop$$,
    'features', 'high', 'nope', (SELECT jsonb_object_agg(group_key, model::jsonb) FROM m), '{"epsilon": 1}');
SELECT * FROM dperm.evaluate_query_groups($$SELECT features, bool_or(high) AS high, region FROM eg_shop GROUP BY 1, 3$$,
    'features', 'high', 'region', (SELECT jsonb_object_agg(group_key, model::jsonb) FROM m), '{"epsilon": 1}');
SELECT * FROM dperm.evaluate_query_groups($$SELECT features, 1 / (id - 5) > 0 AS high, region FROM eg_shop$$,
    'features', 'high', 'region', (SELECT jsonb_object_agg(group_key, model::jsonb) FROM m), '{"epsilon": 1}');
-- over the budget
SELECT * FROM dperm.evaluate_query_groups($$SELECT features, high, region FROM eg_shop$$,
    'features', 'high', 'region', (SELECT jsonb_object_agg(group_key, model::jsonb) FROM m), '{"epsilon": 100}');
-- a relation whose budget names a unit
SELECT * FROM dperm.evaluate_query_groups($$SELECT features, high, region FROM eg_panel$$,
    'features', 'high', 'region', '{"EU": null}', '{"epsilon": 1}');
\set VERBOSITY default
RESET ROLE;
SELECT pg_temp.spent('eg_shop') AS after_refusals;
SELECT pg_temp.spent('eg_panel') AS panel_after_refusal;
