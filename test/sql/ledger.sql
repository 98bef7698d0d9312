-- The ledger: one row per release, written by a background worker in its
-- own transaction before the model is computed.
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE small AS SELECT ARRAY[0.1 * i, 0.05 * i] AS f, i % 2 = 0 AS y, 0.1 * i AS t FROM generate_series(1, 9) i;
SELECT coalesce(max(id), 0) AS last_id FROM dperm.ledger \gset
SELECT dp_huber(f, t, dp_options(epsilon => 0.25, delta => 1e-7, l2 => 0.5, seed => 3)) IS NOT NULL AS released FROM small;
SELECT role = current_user::regrole AS role_ok, relations, relation_names, algorithm, mechanism, loss,
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
SELECT count(*) AS visible_after, bool_and(role = current_user::regrole) AS own_rows_only FROM dperm.ledger;
RESET ROLE;

-- a budget changed in the releasing transaction is locked until it commits:
-- the release fails after a short wait instead of hanging
CREATE TABLE locked AS SELECT ARRAY[0.1, 0.2]::float8[] AS f, true AS y;
SELECT dperm.set_budget('locked', 1);
BEGIN;
SELECT dperm.set_budget('locked', 2);
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 1, dimension => 2)) FROM locked;
ROLLBACK;
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 1, dimension => 2)) IS NOT NULL AS released FROM locked;

-- the running totals (dperm.budget_totals, kept by the ledger's triggers)
-- compose like the rows: releases of several kinds, plus rows written
-- directly (as a restore would) without a curve, with delta = 0, and with a
-- malformed curve (composes by sums); one row names two relations
CREATE TABLE mixed AS SELECT ARRAY[0.1 * i, 0.2]::float8[] AS f, i % 2 = 0 AS y FROM generate_series(1, 20) i;
SELECT dperm.set_budget('mixed', 100, 1e-3);
SELECT dp_logreg(f, y, dp_options(epsilon => 0.3, l2 => 1, dimension => 2, seed => 1)) IS NOT NULL AS released FROM mixed;
SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, delta => 1e-6, l2 => 1, dimension => 2, seed => 2)) IS NOT NULL AS released FROM mixed;
SELECT dp_huber(f, 0.5, dp_options(epsilon => 0.2, l2 => 1, dimension => 2, target_bound => 1, seed => 3)) IS NOT NULL AS released FROM mixed;
INSERT INTO dperm.ledger (released_at, role, role_name, relations, relation_names, algorithm, mechanism, loss,
                          neighbors, epsilon, delta, n, d, seeded, query, rdp)
SELECT now(), current_user::regrole, current_user, ARRAY['mixed'::regclass, 'small'::regclass], ARRAY['public.mixed', 'public.small'],
       'test', 'test', 'test', 'replace-one', e, d, 20, 2, true, NULL, r
  FROM (VALUES (0.2, 1e-5, NULL::float8[]), (0.1, 0, NULL),
               (0.4, 0, ARRAY[1, 2]::float8[]),
               (0.25, 2e-6, (SELECT array_agg(o * 0.01) FROM unnest(dperm.rdp_orders()) o))) v(e, d, r);
SELECT dp_logreg(f, y, dp_options(epsilon => 0.3, l2 => 1, dimension => 2, seed => 4)) IS NOT NULL AS released FROM mixed;
SELECT releases, curves FROM dperm.budget_totals WHERE relation = 'mixed'::regclass;
-- budget_spent from the totals, then (the totals renamed away) from the rows
CREATE TEMP TABLE cases AS
SELECT rel, acc, db, extra
  FROM unnest(ARRAY['mixed', 'small']::regclass[]) rel, unnest(ARRAY['rdp', 'basic']) acc,
       unnest(ARRAY[1e-3, 1e-5, 0]) db, unnest(ARRAY[false, true]) extra;
CREATE FUNCTION pg_temp.spent(rel regclass, acc text, db float8, extra boolean)
  RETURNS TABLE (epsilon float8, delta float8, releases bigint) LANGUAGE sql AS $$
  SELECT * FROM dperm.budget_spent(rel, acc, db,
    CASE WHEN extra THEN (SELECT array_agg(o * 0.002) FROM unnest(dperm.rdp_orders()) o) END,
    CASE WHEN extra THEN 0.1 ELSE 0 END, CASE WHEN extra THEN 1e-7 ELSE 0 END) $$;
CREATE TEMP TABLE by_totals AS SELECT c.*, s.* FROM cases c, pg_temp.spent(rel, acc, db, extra) s;
CREATE FUNCTION pg_temp.compare_with_rows() RETURNS TABLE (cases bigint, same_releases boolean,
    same_epsilon boolean, same_delta boolean, rdp_below_basic bigint) LANGUAGE sql AS $$
  SELECT count(*), bool_and(t.releases = r.releases),
         bool_and(abs(t.epsilon - r.epsilon) <= 1e-12 * r.epsilon),
         bool_and(abs(t.delta - r.delta) <= 1e-12 * r.delta),
         count(*) FILTER (WHERE t.acc = 'rdp' AND t.epsilon < b.epsilon)
    FROM by_totals t, pg_temp.spent(t.rel, t.acc, t.db, t.extra) r,
         by_totals b WHERE (b.rel, b.acc, b.db, b.extra) = (t.rel, 'basic', t.db, t.extra) $$;
BEGIN;
ALTER TABLE dperm.budget_totals RENAME TO budget_totals_hidden;
SELECT * FROM pg_temp.compare_with_rows();
ROLLBACK;
-- deleting ledger rows rebuilds the totals
DELETE FROM dperm.ledger WHERE id = (SELECT max(id) FROM dperm.ledger WHERE relations @> ARRAY['mixed'::regclass]);
SELECT releases, curves FROM dperm.budget_totals WHERE relation = 'mixed'::regclass;
DELETE FROM by_totals;
INSERT INTO by_totals SELECT c.*, s.* FROM cases c, pg_temp.spent(rel, acc, db, extra) s;
BEGIN;
ALTER TABLE dperm.budget_totals RENAME TO budget_totals_hidden;
SELECT * FROM pg_temp.compare_with_rows();
ROLLBACK;
-- analysts neither read the totals (they count other roles' releases, which
-- the ledger's row-level security hides) nor write them
SET ROLE regress_dperm_reader;
SELECT count(*) > 0 AS readable FROM dperm.budget_totals;
UPDATE dperm.budget_totals SET epsilon = 0;
DELETE FROM dperm.budget_totals;
RESET ROLE;
-- Charges to one relation take turns (ledger_writer.cpp), a lock held only
-- while the writer serves the charge: held to the end of the releasing
-- transaction, it would hold up every other release charged to the
-- relation meanwhile.
CREATE TABLE turns AS SELECT ARRAY[0.1 * (i % 7), 0.5]::float8[] AS f, i % 2 = 0 AS y FROM generate_series(1, 50) i;
SELECT dperm.set_budget('turns', 10, 0, 'basic');
BEGIN;
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 1, dimension => 2)) IS NOT NULL AS released FROM turns;
SELECT count(*) AS turns_still_held FROM pg_locks
 WHERE locktype = 'advisory' AND objsubid = 25712 AND pid = pg_backend_pid();
COMMIT;
