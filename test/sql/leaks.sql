-- Nothing about other roles (docs/user-guide.md, "Budgets and the ledger",
-- "Named models in detail"). dperm.budget_spent, charges_fit, runs_that_fit, the view
-- dperm.budget_status and the table dperm.budgets show a relation's budget
-- and its releases (every role's) only to roles that may see the relation:
-- its owner's privileges, SELECT on it or an ancestor, an analyst of its
-- protection, or pg_read_all_stats (and superusers); others get 42501 and
-- no row. Model names belong to their owner (a role, by OID): a name another
-- role uses is never refused, names the caller cannot see never answer
-- differently from names nobody uses, and a new role with a dropped role's
-- name does not inherit its models.
SET max_parallel_workers_per_gather = 0;
CREATE ROLE regress_leaks_owner;
CREATE ROLE regress_leaks_owner2;
CREATE ROLE regress_leaks_analyst;
CREATE ROLE regress_leaks_reader;
CREATE ROLE regress_leaks_eve;
CREATE ROLE regress_leaks_stats IN ROLE pg_read_all_stats;
CREATE ROLE regress_leaks_member IN ROLE regress_leaks_owner;
CREATE ROLE regress_leaks_ghost;
GRANT CREATE ON SCHEMA public TO regress_leaks_owner, regress_leaks_owner2, regress_leaks_eve;
-- the SQLSTATE of a statement's error (NULL: none)
CREATE FUNCTION leaks_sqlstate(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;
-- the error message of a statement (NULL: none)
CREATE FUNCTION leaks_error(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  RETURN SQLERRM;
END $$;
-- A superuser-owned SECURITY DEFINER function (as an event trigger's) reads
-- every budget and status row whoever calls it.
CREATE FUNCTION leaks_definer_counts(OUT budgets bigint, OUT status bigint) LANGUAGE sql
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp
  AS $$ SELECT (SELECT count(*) FROM dperm.budgets WHERE relation::text LIKE '%lk\_%'),
               (SELECT count(*) FROM dperm.budget_status WHERE relation::text LIKE '%lk\_%') $$;
GRANT EXECUTE ON FUNCTION leaks_sqlstate(text), leaks_error(text), leaks_definer_counts() TO PUBLIC;

-- The owner's relations: lk_private (nobody else), lk_shared (SELECT for
-- the reader), lk_secret (protected, the analyst trains on it), lk_parted
-- (partitioned; the reader may SELECT the parent), lk_public (SELECT for
-- every role). Each has a budget and releases.
SET ROLE regress_leaks_owner;
CREATE TABLE lk_private AS
  SELECT i, ARRAY[sin(i) / 2, cos(i) / 2] AS x, sin(3 * i) > 0 AS y FROM generate_series(1, 200) i;
CREATE TABLE lk_shared AS SELECT * FROM lk_private;
CREATE TABLE lk_secret AS SELECT * FROM lk_private;
CREATE TABLE lk_public AS SELECT * FROM lk_private;
CREATE TABLE lk_parted (i int, x float8[], y boolean) PARTITION BY RANGE (i);
CREATE TABLE lk_part1 PARTITION OF lk_parted FOR VALUES FROM (1) TO (101);
CREATE TABLE lk_part2 PARTITION OF lk_parted FOR VALUES FROM (101) TO (201);
INSERT INTO lk_parted SELECT * FROM lk_private;
GRANT SELECT ON lk_shared, lk_parted TO regress_leaks_reader;
GRANT SELECT ON lk_public TO PUBLIC;
SELECT dperm.protect('lk_secret', ARRAY['regress_leaks_analyst']::regrole[]);
SELECT dperm.set_budget(r, 10, 1e-5)
  FROM unnest(ARRAY['lk_private', 'lk_shared', 'lk_secret', 'lk_parted', 'lk_part1', 'lk_public']::regclass[]) r;
SELECT dp_logreg(x, y, dp_options(dimension => 2, epsilon => 0.5, l2 => 0.1)) IS NOT NULL AS released FROM lk_private;
SELECT dp_logreg(x, y, dp_options(dimension => 2, epsilon => 0.5, l2 => 0.1)) IS NOT NULL AS released FROM lk_shared;
SELECT dp_logreg(x, y, dp_options(dimension => 2, epsilon => 0.5, l2 => 0.1)) IS NOT NULL AS released FROM lk_parted;
RESET ROLE;
SET ROLE regress_leaks_analyst;
SELECT (dperm.train('lk_secret', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 0.5, l2 => 0.1)))::jsonb->>'n' AS n;
RESET ROLE;
SET ROLE regress_leaks_eve;
CREATE TABLE lk_eve AS SELECT * FROM lk_public;
SELECT dperm.set_budget('lk_eve', 10, 1e-5);
SELECT dp_logreg(x, y, dp_options(dimension => 2, epsilon => 0.5, l2 => 0.1)) IS NOT NULL AS released FROM lk_eve;
RESET ROLE;

-- 1. Eve may see none of the owner's relations: 42501 from the functions,
-- no row in the view or in dperm.budgets; her own relation she sees.
SET ROLE regress_leaks_eve;
SELECT leaks_error($$SELECT dperm.budget_spent('lk_private', 'rdp', 1e-5)$$) AS budget_spent;
SELECT r AS relation,
       leaks_sqlstate(format($$SELECT dperm.budget_spent(%L, 'rdp', 1e-5)$$, r)) AS budget_spent,
       leaks_sqlstate(format($$SELECT dperm.charges_fit(%L, 'rdp', 10, 1e-5, NULL, 0.5, 0, 1)$$, r)) AS charges_fit,
       leaks_sqlstate(format($$SELECT dperm.runs_that_fit(%L, 'rdp', 10, 1e-5, NULL, 0.5, 0)$$, r)) AS runs_that_fit
  FROM unnest(ARRAY['lk_private', 'lk_shared', 'lk_secret', 'lk_parted', 'lk_part1']) r;
-- the totals of a relation that does not exist any more are nobody's business either
SELECT leaks_sqlstate($$SELECT dperm.budget_spent(4000000000::oid::regclass, 'rdp', 1e-5)$$) AS no_relation;
SELECT relation, releases FROM dperm.budget_status WHERE relation::text LIKE 'lk\_%' ORDER BY relation::text;
SELECT relation FROM dperm.budgets WHERE relation::text LIKE 'lk\_%' ORDER BY relation::text;
SELECT releases FROM dperm.budget_spent('lk_eve', 'rdp', 1e-5);
SELECT dperm.runs_that_fit('lk_eve', 'basic', 10, 1e-5, NULL, 0.5, 0) AS eve_runs;
-- a superuser's SECURITY DEFINER function still reads everything
SELECT * FROM leaks_definer_counts();
RESET ROLE;

-- 2. Who sees what.
SET ROLE regress_leaks_reader;  -- SELECT on lk_shared, lk_parted (so its partitions) and lk_public
SELECT relation, releases FROM dperm.budget_status WHERE relation::text LIKE 'lk\_%' ORDER BY relation::text;
SELECT releases FROM dperm.budget_spent('lk_part1', 'rdp', 1e-5);
SELECT leaks_sqlstate($$SELECT dperm.budget_spent('lk_private', 'rdp', 1e-5)$$) AS private;
RESET ROLE;
SET ROLE regress_leaks_analyst;  -- an analyst of lk_secret
SELECT relation, releases FROM dperm.budget_status WHERE relation::text LIKE 'lk\_%' ORDER BY relation::text;
SELECT dperm.runs_that_fit('lk_secret', 'basic', 10, 1e-5, NULL, 0.5, 0) AS secret_runs;
RESET ROLE;
SET ROLE regress_leaks_member;  -- has the owner's privileges
SELECT count(*) AS member_sees FROM dperm.budget_status WHERE relation::text LIKE 'lk\_%';
RESET ROLE;
SET ROLE regress_leaks_stats;  -- pg_read_all_stats
SELECT count(*) AS stats_sees, sum(releases) AS releases FROM dperm.budget_status WHERE relation::text LIKE 'lk\_%';
SELECT releases FROM dperm.budget_spent('lk_private', 'rdp', 1e-5);
RESET ROLE;
SELECT count(*) AS superuser_sees FROM dperm.budget_status WHERE relation::text LIKE 'lk\_%';
SELECT c.relrowsecurity AS budgets_rls, c.relforcerowsecurity AS budgets_forced
  FROM pg_class c WHERE c.oid = 'dperm.budgets'::regclass;
-- A release refused for budget names the relation; what was spent on it
-- (every role's releases) only to a role that may see it: not to eve, who
-- reads its rows through a view of the owner's.
SET ROLE regress_leaks_owner;
CREATE TABLE lk_small AS SELECT * FROM lk_private;
SELECT dperm.set_budget('lk_small', 1, 0, 'basic');
SELECT dp_logreg(x, y, dp_options(dimension => 2, epsilon => 0.75, l2 => 0.1)) IS NOT NULL AS released FROM lk_small;
CREATE VIEW lk_small_view AS SELECT x, y FROM lk_small;
GRANT SELECT ON lk_small_view TO regress_leaks_eve;
RESET ROLE;
SET ROLE regress_leaks_eve;
SELECT dp_logreg(x, y, dp_options(dimension => 2, epsilon => 0.5, l2 => 0.1)) FROM lk_small_view;
RESET ROLE;
SET ROLE regress_leaks_owner;
SELECT dp_logreg(x, y, dp_options(dimension => 2, epsilon => 0.5, l2 => 0.1)) FROM lk_small_view;
RESET ROLE;

-- 3. Model names are per owner. The owner's 'churn' is invisible to eve,
-- who creates her own 'churn' (never "belongs to another role"); each role
-- resolves 'churn' to its own.
SET ROLE regress_leaks_owner;
SELECT dperm.train_model('churn', 'lk_private', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 0.1, l2 => 0.1)) AS version;
SELECT dperm.train_model('secret_name', 'lk_private', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 0.1, l2 => 0.1)) AS version;
RESET ROLE;
SET ROLE regress_leaks_eve;
SELECT dperm.train_model('churn', 'lk_eve', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 0.1, l2 => 0.1)) AS version;
SELECT dperm.retrain('churn') AS version;
SELECT owner, name, version, trained_by FROM dperm.models ORDER BY owner::text, name, version;
SELECT (dperm.model('churn')).owner AS resolves_to;
-- a name only another role uses answers exactly like a name nobody uses
SELECT f AS function,
       leaks_error(format(f, 'secret_name')) = replace(leaks_error(format(f, 'nobody_uses')), 'nobody_uses', 'secret_name') AS same_error,
       leaks_sqlstate(format(f, 'secret_name')) AS sqlstate
  FROM unnest(ARRAY[$$SELECT dperm.retrain(%L)$$, $$SELECT dperm.drop_model(%L)$$,
                    $$SELECT dperm.model(%L)$$, $$SELECT dperm.predict(%L, ARRAY[0.1, 0.2])$$,
                    $$SELECT dperm.retraining_forecast(%L)$$,
                    $$SELECT dperm.schedule_retraining(%L, '0 3 * * *')$$,
                    $$SELECT dperm.unschedule_retraining(%L)$$,
                    $$SELECT dperm.evaluate(%L, 'lk_eve', 'x', 'y', '{"epsilon": 1}')$$]) f;
SELECT dperm.drop_model('churn');
RESET ROLE;
SET ROLE regress_leaks_owner;
SELECT owner, name, version FROM dperm.models WHERE name = 'churn' ORDER BY version;
RESET ROLE;

-- Resolution: the caller's own model first; else the one model of that
-- name it may see; else, when several roles' models of that name are
-- visible, an error naming only those.
SET ROLE regress_leaks_owner;
SELECT dperm.train_model('shared_m', 'lk_shared', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 0.1, l2 => 0.1)) AS version;
SELECT dperm.train_model('dup', 'lk_shared', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 0.1, l2 => 0.1)) AS version;
RESET ROLE;
SET ROLE regress_leaks_owner2;
CREATE TABLE lk_shared2 AS SELECT * FROM lk_public;
GRANT SELECT ON lk_shared2 TO regress_leaks_reader;
SELECT dperm.train_model('dup', 'lk_shared2', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 0.1, l2 => 0.1)) AS version;
RESET ROLE;
SET ROLE regress_leaks_eve;  -- a 'dup' the reader cannot see
SELECT dperm.train_model('dup', 'lk_eve', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 0.1, l2 => 0.1)) AS version;
RESET ROLE;
SET ROLE regress_leaks_reader;
SELECT (dperm.model('shared_m')).owner AS visible_owner,
       dperm.predict('shared_m', ARRAY[0.1, 0.2]) BETWEEN 0 AND 1 AS predicts;
SELECT runs > 0 AS runs_left, limiting_relation FROM dperm.retraining_forecast('shared_m');
-- visible, but not the reader's: only its owner (or a role with its privileges) retrains it
SELECT dperm.retrain('shared_m');
SELECT (dperm.model('dup')).owner;
SELECT dperm.predict('dup', ARRAY[0.1, 0.2]);
SELECT dperm.retrain('dup');
-- the reader's own 'dup' comes first, and creating it was never refused
SELECT dperm.train_model('dup', 'lk_shared', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 0.1, l2 => 0.1)) AS version;
SELECT (dperm.model('dup')).owner AS resolves_to, dperm.retrain('dup') AS version;
SELECT owner, name, version FROM dperm.models WHERE name = 'dup' ORDER BY owner::text, version;
RESET ROLE;
-- a member of the owner's role acts for it: it retrains the owner's model
SET ROLE regress_leaks_member;
SELECT dperm.retrain('secret_name') AS version;
SELECT owner, trained_by FROM dperm.models WHERE name = 'secret_name' ORDER BY version;
RESET ROLE;

-- 4. Roles by OID: a role dropped and created again under the same name
-- does not inherit the models of the old one.
SET ROLE regress_leaks_ghost;
SELECT dperm.train_model('ghost_m', 'lk_public', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 0.1, l2 => 0.1)) AS version;
SELECT owner, trained_by FROM dperm.models WHERE name = 'ghost_m';
RESET ROLE;
SELECT 'regress_leaks_ghost'::regrole::oid AS ghost_oid \gset
DROP ROLE regress_leaks_ghost;
CREATE ROLE regress_leaks_ghost;
SELECT :ghost_oid <> 'regress_leaks_ghost'::regrole::oid AS new_oid;
SET ROLE regress_leaks_ghost;
-- the old model is visible (lk_public is readable by all) but not the new role's
SELECT owner = :ghost_oid::regrole AS old_owner, owner::text = :'ghost_oid' AS shown_as_oid,
       trained_by = :ghost_oid::regrole AS old_trainer
  FROM dperm.models WHERE name = 'ghost_m';
SELECT dperm.retrain('ghost_m');
SELECT dperm.drop_model('ghost_m');
SELECT dperm.evaluate('ghost_m', 'lk_public', 'x', 'y', '{"epsilon": 1}');
-- the name is free for the new role, from version 1
SELECT dperm.train_model('ghost_m', 'lk_public', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 0.1, l2 => 0.1)) AS version;
SELECT owner::text = :'ghost_oid' AS old, version FROM dperm.models WHERE name = 'ghost_m' ORDER BY 1, 2;
SELECT (dperm.model('ghost_m')).owner AS resolves_to;
RESET ROLE;
-- the catalog stores roles as regrole (OIDs that dump and restore by name)
SELECT attrelid::regclass AS catalog, attname, atttypid::regtype AS type
  FROM pg_attribute
 WHERE attrelid IN ('dperm.models'::regclass, 'dperm.model_schedules'::regclass)
   AND attname IN ('owner', 'trained_by', 'scheduled_by')
 ORDER BY 1, 2;
SELECT pg_get_constraintdef(oid) AS key, conrelid::regclass AS catalog FROM pg_constraint
 WHERE conrelid IN ('dperm.models'::regclass, 'dperm.model_schedules'::regclass) AND contype = 'p'
 ORDER BY 2;

DELETE FROM dperm.models WHERE owner::text LIKE 'regress_leaks_%' OR owner::text = :'ghost_oid';
SET client_min_messages = warning;
SELECT count(dperm.retire_budget(b.relation)) >= 0 AS retired FROM dperm.budgets b;
RESET client_min_messages;
DROP OWNED BY regress_leaks_owner, regress_leaks_owner2, regress_leaks_analyst, regress_leaks_reader,
  regress_leaks_eve, regress_leaks_stats, regress_leaks_member, regress_leaks_ghost CASCADE;
DROP ROLE regress_leaks_owner, regress_leaks_owner2, regress_leaks_analyst, regress_leaks_reader,
  regress_leaks_eve, regress_leaks_stats, regress_leaks_member, regress_leaks_ghost;
DROP FUNCTION leaks_sqlstate(text), leaks_error(text), leaks_definer_counts();
