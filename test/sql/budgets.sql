-- Budgets: set by a relation's owner, checked before training, refused with
-- a clear error, reported by dperm.budget_status.
CREATE ROLE regress_dperm_owner;
CREATE ROLE regress_dperm_analyst;
GRANT CREATE ON SCHEMA public TO regress_dperm_owner;
SET ROLE regress_dperm_owner;
CREATE TABLE patients AS
  SELECT i, ARRAY[sin(i) / 2, cos(i) / 2] AS features, sin(3 * i) > 0 AS sick
    FROM generate_series(1, 500) i;
CREATE TABLE visits AS SELECT i FROM generate_series(1, 500) i;
GRANT SELECT ON patients, visits TO regress_dperm_analyst;
-- this file checks basic composition (plain sums); rdp_ledger.sql checks RDP
SELECT dperm.set_budget('patients', 1.0, 1e-6, accounting => 'basic');
RESET ROLE;

-- only the owner (or a superuser) may set a budget
SET ROLE regress_dperm_analyst;
SELECT dperm.set_budget('patients', 100);
-- and nobody writes the catalog directly
INSERT INTO dperm.budgets VALUES ('patients', 100, 0);
UPDATE dperm.budgets SET epsilon = 100;
DELETE FROM dperm.ledger;
RESET ROLE;
SELECT dperm.set_budget('patients', -1);
SELECT dperm.set_budget('patients', 'infinity');
SELECT dperm.set_budget('patients', 1, 1);
SELECT dperm.set_budget('no_such_table', 1);

SELECT relation, epsilon_budget, delta_budget, epsilon_spent, epsilon_remaining, releases
  FROM dperm.budget_status WHERE relation = 'patients'::regclass;

-- an analyst spends the budget (patients is budgeted: d is declared)
SET ROLE regress_dperm_analyst;
SELECT dp_logreg(features, sick, dp_options(epsilon => 0.4, l2 => 0.1, dimension => 2)) IS NOT NULL AS released FROM patients;
SELECT dp_logreg(features, sick, dp_options(epsilon => 0.4, delta => 5e-7, l2 => 0.1, dimension => 2)) IS NOT NULL AS released FROM patients;
SELECT relation, epsilon_spent, delta_spent, round(epsilon_remaining::numeric, 12) AS epsilon_remaining,
       delta_remaining, releases
  FROM dperm.budget_status WHERE relation = 'patients'::regclass;
-- without a declared d the release is refused before anything is charged
SELECT dp_logreg(features, sick, dp_options(epsilon => 0.1, l2 => 0.1)) FROM patients;
-- 0.4 more would overspend epsilon: refused before training, nothing charged
SELECT dp_logreg(features, sick, dp_options(epsilon => 0.4, l2 => 0.1, dimension => 2)) FROM patients;
-- delta is budgeted too
SELECT dp_logreg(features, sick, dp_options(epsilon => 0.1, delta => 1e-6, l2 => 0.1, dimension => 2)) FROM patients;
-- a join, a filtering subquery and a CTE read patients too: a direct
-- aggregate must read every row of a budgeted relation once, so they are
-- refused before any row is read (even though epsilon would fit)
SELECT dp_logreg(p.features, p.sick, dp_options(epsilon => 0.1, l2 => 0.1, dimension => 2)) FROM patients p JOIN visits v USING (i);
SELECT dp_logreg(features, sick, dp_options(epsilon => 0.1, l2 => 0.1, dimension => 2)) FROM (SELECT * FROM patients WHERE i > 10) s;
WITH p AS MATERIALIZED (SELECT * FROM patients) SELECT dp_logreg(features, sick, dp_options(epsilon => 0.1, l2 => 0.1, dimension => 2)) FROM p;
RESET ROLE;
-- a view over it reads every row, and is charged to it
CREATE VIEW patients_view AS SELECT * FROM patients;
SELECT dp_logreg(features, sick, dp_options(epsilon => 0.3, l2 => 0.1, dimension => 2)) FROM patients_view;
-- the refusals left no ledger rows: still two releases
SELECT releases, round(epsilon_spent::numeric, 12) AS epsilon_spent FROM dperm.budget_status WHERE relation = 'patients'::regclass;
-- what fits the remainder is released
SET ROLE regress_dperm_analyst;
SELECT dp_logreg(features, sick, dp_options(epsilon => 0.2, l2 => 0.1, dimension => 2)) IS NOT NULL AS released FROM patients;
SELECT releases, round(epsilon_remaining::numeric, 12) AS epsilon_remaining FROM dperm.budget_status WHERE relation = 'patients'::regclass;
RESET ROLE;

-- the dataset option adds a relation to charge; it never removes inferred
-- ones. A charge to an unbudgeted relation is recorded in its name and
-- counts once it has a budget; a budgeted one must be read whole like any
-- other (rows from VALUES or a function are refused, nothing charged).
SELECT dp_logreg(features, sick, dp_options(epsilon => 0.2, l2 => 0.1, dataset => 'visits')) IS NOT NULL AS released
  FROM (VALUES (ARRAY[0.1, 0.2]::float8[], true)) v(features, sick);
SELECT dperm.set_budget('visits', 0.5, accounting => 'basic');
SELECT dp_logreg(features, sick, dp_options(epsilon => 0.2, l2 => 0.1, dataset => 'visits', dimension => 2))
  FROM (VALUES (ARRAY[0.1, 0.2]::float8[], true)) v(features, sick);
SELECT dp_logreg(features, sick, dp_options(epsilon => 0.2, l2 => 0.1, dataset => 'no_such_table'))
  FROM (VALUES (ARRAY[0.1, 0.2]::float8[], true)) v(features, sick);
SELECT relation, epsilon_spent, releases FROM dperm.budget_status WHERE relation = 'visits'::regclass;

-- raising the budget lets releases continue; spent privacy stays spent
SELECT dperm.set_budget('patients', 2.0, 1e-6);
SELECT relation, epsilon_budget, round(epsilon_spent::numeric, 12) AS epsilon_spent,
       round(epsilon_remaining::numeric, 12) AS epsilon_remaining
  FROM dperm.budget_status WHERE relation = 'patients'::regclass;

-- set_budget writes the catalog as superuser: objects of the caller's
-- search_path must not stand in for built-ins (no "hijacked" notice)
CREATE SCHEMA regress_evil;
GRANT USAGE ON SCHEMA regress_evil TO PUBLIC;
CREATE FUNCTION regress_evil.now() RETURNS timestamptz LANGUAGE plpgsql AS $$
BEGIN RAISE NOTICE 'hijacked as %', current_user; RETURN pg_catalog.now(); END $$;
SET ROLE regress_dperm_owner;
SET search_path = regress_evil, pg_catalog, public;
SELECT dperm.set_budget('visits', 0.7);
RESET search_path;
RESET ROLE;
SELECT epsilon, set_by FROM dperm.budgets WHERE relation = 'visits'::regclass;

-- the budget check reads the relation's running total (dperm.budget_totals,
-- through its primary key), not the ledger's rows: its cost does not grow
-- with the ledger. dperm.budget_totals_stale probes the ledger's primary key
-- above the totals' watermark, where there is no row; the planner may fetch
-- one tuple to bound that key's range (get_actual_variable_range, once the
-- ledger has statistics), so at most 2 ledger tuples are fetched and none
-- scanned, where composing the ledger would fetch every row of patients
-- (at least 3). The check is dperm.budget_spent's statement, run here in this
-- backend (the ledger writer is another process, whose scans this one's
-- statistics do not count); scans are compared with their values just
-- before, since PostgreSQL 15 may still hold counts of earlier transactions.
SELECT count(*) >= 3 AS composing_would_fetch_3 FROM dperm.ledger WHERE relations @> ARRAY['patients'::regclass];
BEGIN;
SET LOCAL enable_seqscan = off;
SELECT coalesce(t.idx_scan, 0) AS totals_before,
       coalesce(l.idx_tup_fetch, 0) AS ledger_fetch_before, coalesce(l.seq_scan, 0) AS ledger_seq_before
  FROM pg_stat_xact_all_tables t, pg_stat_xact_all_tables l
 WHERE t.relid = 'dperm.budget_totals'::regclass AND l.relid = 'dperm.ledger'::regclass \gset
SELECT releases > 0 AS has_releases FROM dperm.budget_spent('patients', 'rdp', 1e-6);
SELECT t.idx_scan > :totals_before AS read_the_total,
       coalesce(l.seq_scan, 0) = :ledger_seq_before
       AND coalesce(l.idx_tup_fetch, 0) - :ledger_fetch_before <= 2 AS ledger_only_probed
  FROM pg_stat_xact_all_tables t, pg_stat_xact_all_tables l
 WHERE t.relid = 'dperm.budget_totals'::regclass AND l.relid = 'dperm.ledger'::regclass;
COMMIT;
