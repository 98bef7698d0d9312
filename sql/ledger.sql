-- The ledger: one row per release, written by a background worker in its
-- own transaction before the model is computed.
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE small AS SELECT ARRAY[0.1 * i, 0.05 * i] AS f, i % 2 = 0 AS y, 0.1 * i AS t FROM generate_series(1, 9) i;
SELECT max(id) AS last_id FROM dperm.ledger \gset
SELECT dp_huber(f, t, dp_options(epsilon => 0.25, delta => 1e-7, l2 => 0.5, seed => 3)) IS NOT NULL AS released FROM small;
SELECT role = current_user AS role_ok, relations, relation_names, algorithm, mechanism, loss,
       neighbors, epsilon, delta, n, d, seeded, query LIKE 'SELECT dp_huber(f, t, %' AS query_ok,
       released_at <= now() + interval '1 minute' AS time_ok
  FROM dperm.ledger WHERE id > :last_id;

-- the charge survives a rollback of the caller's transaction: the client may
-- have seen the model, so its cost is never forgotten
BEGIN;
SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1)) IS NOT NULL AS released FROM small;
ROLLBACK;
SELECT count(*) AS rows_after_rollback, sum(epsilon) AS epsilon FROM dperm.ledger WHERE id > :last_id;

-- a failed statement after the release keeps the charge too
SELECT 1 / (count(m) - count(m)) FROM (SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1)) m FROM small) s;
SELECT count(*) AS rows_after_error FROM dperm.ledger WHERE id > :last_id;

-- each group of a GROUP BY is a release of its own
SELECT y, dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 1)) IS NOT NULL AS released FROM small GROUP BY y ORDER BY y;
SELECT count(*) AS rows_after_groups FROM dperm.ledger WHERE id > :last_id;

-- every role sees its own rows only (members of pg_read_all_stats see all)
CREATE ROLE regress_dperm_reader;
GRANT SELECT ON small TO regress_dperm_reader;
SET ROLE regress_dperm_reader;
SELECT count(*) AS visible_before FROM dperm.ledger;
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 1)) IS NOT NULL AS released FROM small;
SELECT count(*) AS visible_after, bool_and(role = current_user) AS own_rows_only FROM dperm.ledger;
RESET ROLE;

-- a budget changed in the releasing transaction is locked until it commits:
-- the release fails after a short wait instead of hanging
CREATE TABLE locked AS SELECT ARRAY[0.1, 0.2]::float8[] AS f, true AS y;
SELECT dperm.set_budget('locked', 1);
BEGIN;
SELECT dperm.set_budget('locked', 2);
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 1)) FROM locked;
ROLLBACK;
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 1)) IS NOT NULL AS released FROM locked;
