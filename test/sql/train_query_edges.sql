-- dperm.train_query at the edges of its input: a partitioned private
-- relation (the parent, or one partition: both charged to the parent's
-- budget, the partition a filter of it), and lookups that the role reading
-- the private relation cannot read (refused before the charge).
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
SET client_min_messages = warning;
CREATE ROLE regress_qe_owner;
CREATE ROLE regress_qe_analyst;
GRANT CREATE ON SCHEMA public TO regress_qe_owner, regress_qe_analyst;
SET ROLE regress_qe_owner;
-- qe_sales: partitioned by year, 700 rows, 100 a year.
CREATE TABLE qe_sales (id int, year int, region_id int, amount int, features float8[])
  PARTITION BY RANGE (year);
CREATE TABLE qe_sales_old PARTITION OF qe_sales FOR VALUES FROM (1976) TO (1979);
CREATE TABLE qe_sales_new PARTITION OF qe_sales FOR VALUES FROM (1979) TO (1983);
INSERT INTO qe_sales
  SELECT i, 1976 + i % 7, i % 5, 500 + (i * 37) % 1000, ARRAY[sin(i) / 2, cos(i) / 2]
    FROM generate_series(1, 700) i;
SELECT dperm.set_budget('qe_sales', 20, 1e-5);
SELECT dperm.protect('qe_sales', ARRAY['regress_qe_analyst']::regrole[]);
RESET ROLE;

CREATE FUNCTION pg_temp.spent() RETURNS text LANGUAGE sql AS
  $$SELECT (SELECT count(*) FROM dperm.ledger l
             WHERE l.relations && ARRAY['qe_sales'::regclass, 'qe_sales_old'::regclass,
                                        'qe_sales_new'::regclass])
        || ' ledger rows, epsilon spent '
        || coalesce((SELECT round(epsilon_spent::numeric, 4)::text FROM dperm.budget_status
                      WHERE relation = 'public.qe_sales'::regclass), 'none')$$;
SELECT pg_temp.spent() AS before;

-- 1. The parent with a filter that prunes a partition: charged to the
-- parent, n noisy near 400.
SET ROLE regress_qe_analyst;
SELECT abs((m::jsonb->>'n')::int - 400) < 60 AS n_near_400, m::jsonb->'n_noisy' AS n_noisy
  FROM dperm.train_query($$SELECT features, amount > 1000 AS high FROM qe_sales WHERE year >= 1979$$,
         'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 1)) m;
RESET ROLE;
SELECT relation_names, neighbors, epsilon FROM dperm.ledger ORDER BY id DESC LIMIT 1;
SELECT pg_temp.spent() AS after_parent;

-- 2. One partition named in FROM: a filter of the parent.
SET ROLE regress_qe_analyst;
\set VERBOSITY terse
SELECT dperm.train_query($$SELECT features, amount > 1000 AS high FROM qe_sales_new$$,
         'features', 'high', 'logistic', dp_options(epsilon => 1, dimension => 2, seed => 2)) IS NOT NULL AS trained;
\set VERBOSITY default
RESET ROLE;
SELECT pg_temp.spent() AS after_partition;

-- 3. A lookup the analyst owns and the owner (who reads qe_sales for the
-- analyst) may not read: refused before the charge, as is a lookup the
-- analyst may not read.
SET ROLE regress_qe_analyst;
CREATE TABLE qe_mine (region_id int PRIMARY KEY, south boolean);
INSERT INTO qe_mine SELECT r, r % 2 = 0 FROM generate_series(0, 4) r;
\set VERBOSITY terse
SELECT dperm.train_query(
    $$SELECT s.features, m.south AS label FROM qe_sales s JOIN qe_mine m ON m.region_id = s.region_id$$,
    'features', 'label', 'logistic', dp_options(epsilon => 1, dimension => 2));
RESET ROLE;
SET ROLE regress_qe_owner;
CREATE TABLE qe_theirs (region_id int PRIMARY KEY, south boolean);
RESET ROLE;
SET ROLE regress_qe_analyst;
SELECT dperm.train_query(
    $$SELECT s.features, t.south AS label FROM qe_sales s JOIN qe_theirs t ON t.region_id = s.region_id$$,
    'features', 'label', 'logistic', dp_options(epsilon => 1, dimension => 2));
\set VERBOSITY default
RESET ROLE;
SELECT pg_temp.spent() AS after_refusals;
DROP TABLE qe_mine;
