-- Views as inputs of dperm.train_query (issue 46): a view in FROM whose
-- definition is itself a per-row transformation of one private relation
-- (filters, expressions under the function rule, lookup joins on a unique
-- key; views of such views) is analysed as its body written inline and
-- charged to the relation under it, at its unit. Any other view is refused
-- before the charge. Rights as in PostgreSQL: the view's owner reads its
-- tables (the caller for a security_invoker view), and the caller must be
-- allowed to SELECT the view unless the relation under it is protected and
-- lists the caller.
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
SET client_min_messages = warning;
CREATE ROLE regress_qv_owner;
CREATE ROLE regress_qv_analyst;
CREATE ROLE regress_qv_other;
GRANT CREATE ON SCHEMA public TO regress_qv_owner, regress_qv_analyst;
SET ROLE regress_qv_owner;
-- qv_wages: budgeted, not protected; the analyst has no SELECT on it.
CREATE TABLE qv_wages AS
  SELECT i AS id, 1979 + i % 7 AS year, (i % 10)::float8 AS x,
         500 + (i * 37) % 1000 AS wage, i % 5 AS region_id,
         ARRAY[sin(i) / 2, cos(i) / 2] AS features
    FROM generate_series(1, 700) i;
CREATE TABLE qv_regions (region_id int PRIMARY KEY, south boolean);
INSERT INTO qv_regions SELECT r, r % 2 = 0 FROM generate_series(0, 4) r;
GRANT SELECT ON qv_regions TO PUBLIC;
SELECT dperm.set_budget('qv_wages', 50, 1e-5);
-- qv_panel: a person's rows (at most 3 per release), protected for the analyst.
CREATE TABLE qv_panel AS
  SELECT p AS person, 1979 + y AS year, ARRAY[sin(p + y) / 2, cos(p * y) / 2] AS features,
         (p * 31 + y * 7) % 100 AS wage
    FROM generate_series(1, 120) p, generate_series(0, 6) y;
SELECT dperm.set_budget('qv_panel', 30, 1e-5, privacy_unit => 'person', max_rows_per_unit => 3);
SELECT dperm.protect('qv_panel', ARRAY['regress_qv_analyst']::regrole[]);
-- The views: filtering ones (the owner's rights, or the caller's), a view of
-- a view, one with a lookup join; granted to the analyst on qv_wages only.
CREATE VIEW qv_recent AS SELECT id, year, wage, region_id, features FROM qv_wages WHERE year >= 1981;
CREATE VIEW qv_recent_inv WITH (security_invoker) AS
  SELECT id, year, wage, features FROM qv_wages WHERE year >= 1981;
CREATE VIEW qv_recent_high AS SELECT * FROM qv_recent WHERE wage > 700;
CREATE VIEW qv_recent_south AS
  SELECT w.features, w.wage, r.south FROM qv_wages w JOIN qv_regions r ON r.region_id = w.region_id
   WHERE w.year >= 1981;
GRANT SELECT ON qv_recent, qv_recent_inv, qv_recent_high, qv_recent_south TO regress_qv_analyst;
CREATE VIEW qv_panel_late AS SELECT person, year, wage, features FROM qv_panel WHERE year >= 1983;
CREATE VIEW qv_panel_late_inv WITH (security_invoker) AS
  SELECT person, year, wage, features FROM qv_panel WHERE year >= 1983;
CREATE VIEW qv_panel_late_low AS SELECT * FROM qv_panel_late WHERE wage < 50;
RESET ROLE;

-- The ledger of both relations.
CREATE FUNCTION pg_temp.spent() RETURNS text LANGUAGE sql AS
  $$SELECT (SELECT count(*) FROM dperm.ledger WHERE 'public.qv_wages'::regclass = ANY (relations))
        || ' + ' || (SELECT count(*) FROM dperm.ledger WHERE 'public.qv_panel'::regclass = ANY (relations))
        || ' ledger rows, epsilon spent '
        || (SELECT string_agg(round(epsilon_spent::numeric, 4)::text, ' + ' ORDER BY relation::text DESC)
              FROM dperm.budget_status WHERE relation IN ('public.qv_wages'::regclass, 'public.qv_panel'::regclass))$$;
SELECT pg_temp.spent() AS before;

-- 1. A filtering view of a budgeted relation, by an analyst who may SELECT
-- the view but not the table (the view reads it with its owner's rights).
SET ROLE regress_qv_analyst;
SELECT count(*) FROM qv_wages;
WITH m AS (SELECT dperm.train_query(
    $$SELECT features, wage > 1000 AS high FROM qv_recent$$,
    'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 3))::jsonb j)
SELECT j->'n_noisy' AS n_noisy, j->'privacy_unit' AS unit,
       abs((j->>'n')::int - 500) < 40 AS n_near_filtered FROM m;
-- The query's own filter and a lookup joined on the view's column.
WITH m AS (SELECT dperm.train_query(
    $$SELECT v.features, r.south AS label FROM qv_recent v JOIN qv_regions r ON r.region_id = v.region_id
       WHERE v.year <= 1983$$,
    'features', 'label', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 3))::jsonb j)
SELECT abs((j->>'n')::int - 300) < 40 AS n_near_filtered FROM m;
-- A view of a view, and a view with a lookup join inside.
WITH m AS (SELECT dperm.train_query(
    $$SELECT features, wage > 1000 AS high FROM qv_recent_high$$,
    'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 3))::jsonb j)
SELECT abs((j->>'n')::int - 405) < 40 AS n_near_filtered FROM m;
WITH m AS (SELECT dperm.train_query(
    $$SELECT features, south FROM qv_recent_south$$,
    'features', 'south', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 3))::jsonb j)
SELECT abs((j->>'n')::int - 500) < 40 AS n_near_filtered FROM m;
-- A view column renamed since: the query names it as the view does now.
RESET ROLE;
SET ROLE regress_qv_owner;
CREATE VIEW qv_renamed AS SELECT features, wage FROM qv_wages WHERE year >= 1981;
ALTER VIEW qv_renamed RENAME COLUMN wage TO pay;
GRANT SELECT ON qv_renamed TO regress_qv_analyst;
RESET ROLE;
SET ROLE regress_qv_analyst;
WITH m AS (SELECT dperm.train_query(
    $$SELECT features, pay > 1000 AS high FROM qv_renamed$$,
    'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 3))::jsonb j)
SELECT abs((j->>'n')::int - 500) < 40 AS n_near_filtered FROM m;
-- The analyst's own view reads qv_wages with the analyst's rights: none,
-- so refused (42501, nothing charged) -- a view never reads more than its
-- owner may.
CREATE VIEW qv_mine AS SELECT features, wage FROM qv_wages WHERE year >= 1981;
SELECT dperm.train_query($$SELECT features, wage > 1000 AS high FROM qv_mine$$,
    'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2));
-- Per-group models on a view.
SELECT group_key, abs((model::jsonb->>'n')::int - 100) < 40 AS n_near_group
  FROM dperm.train_query_groups(
    $$SELECT features, wage > 1000 AS high, region_id FROM qv_recent$$,
    'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 3),
    'region_id', '[0, 1]');
-- A security_invoker view reads the table with the caller's rights: the
-- analyst has none on qv_wages (42501, nothing charged); its owner trains.
SELECT dperm.train_query($$SELECT features, wage > 1000 AS high FROM qv_recent_inv$$,
    'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2));
RESET ROLE;
SET ROLE regress_qv_owner;
WITH m AS (SELECT dperm.train_query(
    $$SELECT features, wage > 1000 AS high FROM qv_recent_inv$$,
    'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 3))::jsonb j)
SELECT abs((j->>'n')::int - 500) < 40 AS n_near_filtered FROM m;
RESET ROLE;
-- Each release is one ledger row, charged to qv_wages, never to a view or
-- a lookup.
SELECT role, relation_names, neighbors, epsilon FROM dperm.ledger
 WHERE 'qv_wages'::regclass = ANY (relations) ORDER BY id;

-- 2. A relation whose budget names a privacy unit, protected: the listed
-- analyst trains on the owner's views (no SELECT on them needed), security
-- invoker or not, and on a view of a view; each release is charged once,
-- at the unit, and the noisy count counts the persons the view keeps.
SET ROLE regress_qv_analyst;
SELECT count(*) FROM qv_panel_late;
WITH m AS (SELECT dperm.train_query(
    $$SELECT features, wage > 50 AS above FROM qv_panel_late$$,
    'features', 'above', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 2))::jsonb j)
SELECT j->'privacy_unit'->>'column' AS unit, j->'privacy_unit'->'max_rows_per_unit' AS k,
       (j->>'n')::int = 3 * (j->'privacy_unit'->>'units')::int AS n_is_units_times_k,
       abs((j->'privacy_unit'->>'units')::int - 120) < 30 AS units_near_120 FROM m;
WITH m AS (SELECT dperm.train_query(
    $$SELECT features, wage > 50 AS above FROM qv_panel_late_inv$$,
    'features', 'above', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 2))::jsonb j)
SELECT j->'privacy_unit'->>'column' AS unit,
       abs((j->'privacy_unit'->>'units')::int - 120) < 30 AS units_near_120 FROM m;
WITH m AS (SELECT dperm.train_query(
    $$SELECT features, wage > 25 AS above FROM qv_panel_late_low$$,
    'features', 'above', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 2))::jsonb j)
SELECT j->'privacy_unit'->>'column' AS unit,
       abs((j->'privacy_unit'->>'units')::int - 77) < 30 AS units_near_77 FROM m;
-- The analyst's own view of the protected relation: its body is a query
-- the analyst could write, read as the relation's owner.
CREATE VIEW qv_panel_mine AS SELECT features, wage FROM qv_panel WHERE year >= 1983;
WITH m AS (SELECT dperm.train_query(
    $$SELECT features, wage > 50 AS above FROM qv_panel_mine$$,
    'features', 'above', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 2))::jsonb j)
SELECT j->'privacy_unit'->>'column' AS unit,
       abs((j->'privacy_unit'->>'units')::int - 120) < 30 AS units_near_120 FROM m;
RESET ROLE;
SELECT role, relation_names, neighbors, epsilon FROM dperm.ledger
 WHERE 'qv_panel'::regclass = ANY (relations) ORDER BY id;
SELECT pg_temp.spent() AS after_releases;

-- 3. Refusals, each before the charge (the ledger is unchanged below).
SET ROLE regress_qv_owner;
CREATE VIEW qv_grouped AS SELECT region_id, max(features) AS features, avg(wage) AS wage
  FROM qv_wages GROUP BY region_id;
CREATE VIEW qv_distinct AS SELECT DISTINCT features, wage FROM qv_wages;
CREATE VIEW qv_limited AS SELECT features, wage FROM qv_wages LIMIT 100;
CREATE VIEW qv_windowed AS SELECT features, rank() OVER (ORDER BY wage) AS wage FROM qv_wages;
CREATE VIEW qv_union AS SELECT features, wage FROM qv_wages UNION ALL SELECT features, wage FROM qv_wages;
CREATE VIEW qv_divided AS SELECT features, wage / x AS wage FROM qv_wages;
CREATE VIEW qv_random AS SELECT features, wage FROM qv_wages WHERE random() < 0.5;
CREATE VIEW qv_public AS SELECT region_id, south FROM qv_regions;
CREATE VIEW qv_two AS SELECT a.features, b.wage FROM qv_wages a JOIN qv_wages b ON b.id = a.id;
CREATE VIEW qv_of_grouped AS SELECT * FROM qv_grouped;
CREATE VIEW qv_panel_grouped AS SELECT person, max(features) AS features, 1 AS wage
  FROM qv_panel GROUP BY person;
GRANT SELECT ON qv_grouped, qv_distinct, qv_limited, qv_windowed, qv_union, qv_divided, qv_random,
  qv_public, qv_two, qv_of_grouped TO regress_qv_analyst;
RESET ROLE;
SET ROLE regress_qv_analyst;
-- pg_temp.try shows the SQLSTATE and the message of a refusal.
CREATE FUNCTION pg_temp.try(v text) RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
  PERFORM dperm.train_query(format('SELECT features AS f, wage > 1 AS l FROM %s', v),
                            'f', 'l', 'logistic', dp_options(epsilon => 1, dimension => 2));
  RETURN 'released';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $f$;
SELECT v, pg_temp.try(v) FROM unnest(ARRAY['qv_grouped', 'qv_distinct', 'qv_limited', 'qv_windowed',
  'qv_union', 'qv_divided', 'qv_random', 'qv_two', 'qv_of_grouped', 'qv_panel_grouped']) v;
SELECT pg_temp.try('qv_public q JOIN qv_wages w ON w.id = q.region_id');
SELECT pg_temp.try('qv_wages w JOIN qv_public q ON q.region_id = w.region_id');
-- The detail and hint of one refusal.
SELECT dperm.train_query($$SELECT features, wage > 1 AS l FROM qv_distinct$$,
                         'features', 'l', 'logistic', dp_options(epsilon => 1, dimension => 2));
RESET ROLE;
-- Without rights on the view: a role that may not SELECT it and is not
-- listed on the relation under it (42501), on both relations; and the
-- analyst once the grant is revoked.
SET ROLE regress_qv_other;
SELECT dperm.train_query($$SELECT features, wage > 1 AS l FROM qv_recent$$,
                         'features', 'l', 'logistic', dp_options(epsilon => 1, dimension => 2));
SELECT dperm.train_query($$SELECT features, wage > 1 AS l FROM qv_panel_late$$,
                         'features', 'l', 'logistic', dp_options(epsilon => 1, dimension => 2));
RESET ROLE;
SET ROLE regress_qv_owner;
REVOKE SELECT ON qv_recent_high FROM regress_qv_analyst;
RESET ROLE;
SET ROLE regress_qv_analyst;
SELECT pg_temp.try('qv_recent_high');
RESET ROLE;
SELECT pg_temp.spent() AS after_refusals;

-- 4. A named model on a view keeps the view by name in its canonical text:
-- each retrain reads the view as it is then, validated again before the
-- charge.
SET ROLE regress_qv_analyst;
SELECT dperm.train_model_query('qv_late',
    $$SELECT features, wage > 50 AS above FROM qv_panel_late$$,
    'features', 'above', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 2)) AS version;
SELECT version, status, relation, query_canonical FROM dperm.models WHERE name = 'qv_late';
SELECT dperm.retrain('qv_late') AS version;
RESET ROLE;
SELECT pg_temp.spent() AS after_model;
-- The owner makes the view combine rows: the next retrain is refused before
-- the charge and leaves no version.
SET ROLE regress_qv_owner;
CREATE OR REPLACE VIEW qv_panel_late AS
  SELECT DISTINCT person, year, wage, features FROM qv_panel WHERE year >= 1983;
RESET ROLE;
SET ROLE regress_qv_analyst;
SELECT dperm.retrain('qv_late') AS version;
RESET ROLE;
SELECT version, status FROM dperm.models WHERE name = 'qv_late' ORDER BY version;
SELECT pg_temp.spent() AS after_refused_retrain;

