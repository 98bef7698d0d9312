-- Each training aggregate is charged the relations its own input reads (the
-- plan below its Agg node), not every relation of the statement: a UNION
-- ALL's other branch is not read by it. What reaches its input in any other
-- way must still be charged: a subquery or initPlan in its arguments or
-- below it, a one-time filter, a CTE, a view, partitions, `dataset`, and an
-- outer query's row (a correlated or lateral aggregate), where the whole
-- statement is charged.
SET max_parallel_workers_per_gather = 0;
CREATE TABLE ar_a AS
  SELECT i, ARRAY[sin(i) / 2, cos(3 * i) / 2] AS f, sin(i) + cos(3 * i) > 0 AS y
    FROM generate_series(1, 300) i;
CREATE TABLE ar_b AS
  SELECT i, ARRAY[cos(i) / 2, sin(5 * i) / 2] AS f, cos(i) > 0 AS y
    FROM generate_series(1, 200) i;
CREATE TABLE ar_secret AS SELECT i AS id, (i % 7) / 7.0 AS x FROM generate_series(1, 300) i;
CREATE TABLE ar_one AS SELECT 0.25::float8 AS x;
CREATE TABLE ar_parted (i int, f float8[], y boolean) PARTITION BY RANGE (i);
CREATE TABLE ar_parted_low PARTITION OF ar_parted FOR VALUES FROM (0) TO (100);
CREATE TABLE ar_parted_high PARTITION OF ar_parted FOR VALUES FROM (100) TO (1000);
INSERT INTO ar_parted SELECT i, f, y FROM ar_a;
CREATE VIEW ar_view AS SELECT f, y FROM ar_a;
CREATE VIEW ar_values AS SELECT ARRAY[0.1, 0.2]::float8[] AS f, true AS y;
-- the sorted relation names of the ledger rows after `after`, one text per row
CREATE FUNCTION ar_charged(after bigint) RETURNS SETOF text LANGUAGE sql AS $$
  SELECT array_to_string(ARRAY(SELECT u.name FROM unnest(l.relation_names) u(name) ORDER BY 1), ', ')
    FROM dperm.ledger l WHERE l.id > after ORDER BY l.id $$;
SELECT coalesce(max(id), 0) AS before FROM dperm.ledger \gset

-- A UNION ALL of a release and another relation's rows: charged to ar_a
-- only (the statement's range table also holds ar_b).
SELECT (SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1)) FROM ar_a) IS NOT NULL AS released
UNION ALL
SELECT NULL FROM ar_b LIMIT 1;
SELECT ar_charged(:before);
SELECT coalesce(max(id), 0) AS before FROM dperm.ledger \gset
-- Two releases, each over its own table: each charged to its own.
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1)) IS NOT NULL AS released FROM ar_a
UNION ALL
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1)) IS NOT NULL FROM ar_b;
SELECT ar_charged(:before);
-- With both budgeted, the two whole-table releases are admitted (charging
-- each with the other's table refused them: "reads only some partitions").
SELECT dperm.set_budget('ar_a', 10, 1e-5), dperm.set_budget('ar_b', 10, 1e-5);
SELECT coalesce(max(id), 0) AS before FROM dperm.ledger \gset
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1, dimension => 2)) IS NOT NULL AS released FROM ar_a
UNION ALL
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1, dimension => 2)) IS NOT NULL FROM ar_b;
SELECT ar_charged(:before);
SELECT relation, releases FROM dperm.budget_status WHERE relation IN ('ar_a'::regclass, 'ar_b'::regclass) ORDER BY 1;
SELECT dperm.retire_budget('ar_a'), dperm.retire_budget('ar_b');

-- The attacks: a relation whose values reach the aggregate's input other
-- than through a scan below it is still charged.
SELECT coalesce(max(id), 0) AS before FROM dperm.ledger \gset
-- an uncorrelated subquery in the arguments (an initPlan attached above the Agg)
SELECT dp_logreg(ARRAY[f[1], (SELECT max(x) FROM ar_secret)], y, dp_options(epsilon => 0.1, l2 => 0.1)) IS NOT NULL AS released FROM ar_a
UNION ALL SELECT NULL FROM ar_b LIMIT 1;
-- a correlated subquery in the arguments
SELECT dp_logreg(ARRAY[f[1], (SELECT s.x FROM ar_secret s WHERE s.id = ar_a.i)], y, dp_options(epsilon => 0.1, l2 => 0.1)) IS NOT NULL AS released FROM ar_a
UNION ALL SELECT NULL FROM ar_b LIMIT 1;
-- a one-time filter: whether any row is read depends on ar_secret
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1)) IS NOT NULL AS released FROM ar_a
 WHERE (SELECT count(*) FROM ar_secret WHERE x > 0.5) > 0
UNION ALL SELECT NULL FROM ar_b LIMIT 1;
-- a subquery in a WHERE clause below the aggregate
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1)) IS NOT NULL AS released FROM ar_a
 WHERE i IN (SELECT id FROM ar_secret WHERE x > 0.3)
UNION ALL SELECT NULL FROM ar_b LIMIT 1;
-- a CTE read by the aggregate
WITH c AS MATERIALIZED (SELECT ARRAY[x, x] AS f, x > 0.4 AS y FROM ar_secret)
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1)) IS NOT NULL AS released FROM c
UNION ALL SELECT NULL FROM ar_b LIMIT 1;
-- an outer query's row (ar_one) inside the aggregate's input
SELECT (SELECT dp_logreg(ARRAY[o.x, f[2]], y, dp_options(epsilon => 0.1, l2 => 0.1)) FROM ar_a) IS NOT NULL AS released
  FROM ar_one o;
-- a lateral parameter
SELECT s.m IS NOT NULL AS released
  FROM ar_one o, LATERAL (SELECT dp_logreg(ARRAY[o.x, f[2]], y, dp_options(epsilon => 0.1, l2 => 0.1)) AS m FROM ar_a) s;
-- a UNION ALL inside the aggregate's input: both of its tables
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1)) IS NOT NULL AS released
  FROM (SELECT f, y FROM ar_a UNION ALL SELECT f, y FROM ar_b) u;
-- a scalar subquery in HAVING (the release is shown or not by its value)
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1)) IS NOT NULL AS released FROM ar_a
HAVING (SELECT count(*) FROM ar_secret) > 0
UNION ALL SELECT NULL FROM ar_b LIMIT 1;
SELECT ar_charged(:before);

-- Views, partitions and `dataset` as before: through a view, the view and
-- its table; a partitioned table, the parent and every partition; a view
-- without tables counts as read; `dataset` adds its relation.
SELECT coalesce(max(id), 0) AS before FROM dperm.ledger \gset
SELECT (SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1)) FROM ar_view) IS NOT NULL AS released
UNION ALL SELECT NULL FROM ar_b LIMIT 1;
SELECT (SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1)) FROM ar_parted) IS NOT NULL AS released
UNION ALL SELECT NULL FROM ar_b LIMIT 1;
SELECT (SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1)) FROM ar_values) IS NOT NULL AS released
UNION ALL SELECT NULL FROM ar_b LIMIT 1;
SELECT (SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1, dataset => 'ar_secret')) FROM ar_a) IS NOT NULL AS released
UNION ALL SELECT NULL FROM ar_b LIMIT 1;
SELECT ar_charged(:before);

-- A budgeted relation read through a subquery of the arguments is charged
-- and so refused (its rows would decide the input), not skipped.
SELECT dperm.set_budget('ar_secret', 10, 1e-5);
SELECT coalesce(max(id), 0) AS before FROM dperm.ledger \gset
SELECT dp_logreg(ARRAY[f[1], (SELECT max(x) FROM ar_secret)], y, dp_options(epsilon => 0.1, l2 => 0.1, dimension => 2)) FROM ar_a
UNION ALL SELECT NULL FROM ar_b LIMIT 1;
WITH c AS MATERIALIZED (SELECT ARRAY[x, x] AS f, x > 0.4 AS y FROM ar_secret WHERE id < 5)
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1, dimension => 2)) FROM c
UNION ALL SELECT NULL FROM ar_b LIMIT 1;
SELECT count(*) AS charged FROM dperm.ledger WHERE id > :before;
SELECT dperm.retire_budget('ar_secret');
