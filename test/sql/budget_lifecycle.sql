-- Budgets follow the data: a budgeted relation cannot be dropped (every way
-- of dropping it) until its owner moves the budget to the relation that
-- replaces it (dperm.move_budget, the ETL reload) or retires it
-- (dperm.retire_budget); renaming, moving to another schema and truncating
-- keep the budget. Roles are stored by OID: a new role that reuses a
-- dropped role's name sees none of its ledger rows. dperm.evaluate charges
-- what dperm.train charges.
SET max_parallel_workers_per_gather = 0;
CREATE FUNCTION bl_sqlstate(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;
-- the budget of a relation, as budget_status reports it
CREATE FUNCTION bl_status(rel regclass) RETURNS TABLE (epsilon_budget float8, epsilon_spent float8,
                                                         epsilon_remaining numeric, releases bigint)
LANGUAGE sql AS $$
  SELECT epsilon_budget, epsilon_spent, round(epsilon_remaining::numeric, 9), releases
    FROM dperm.budget_status WHERE relation = rel
$$;
CREATE ROLE regress_life_owner;
CREATE ROLE regress_life_other;
GRANT CREATE ON SCHEMA public TO regress_life_owner;
CREATE SCHEMA life AUTHORIZATION regress_life_owner;
SET ROLE regress_life_owner;

-- ---------------------------------------------------------------- the ETL reload
CREATE TABLE raw AS
  SELECT i, ARRAY[sin(i) / 2, cos(i) / 2] AS f, sin(3 * i) > 0 AS y FROM generate_series(1, 200) i;
SELECT dperm.set_budget('raw', 1.0, accounting => 'basic');
SELECT dp_logreg(f, y, dp_options(epsilon => 0.6, l2 => 0.1, dimension => 2)) IS NOT NULL AS released FROM raw;
CREATE TABLE raw2 AS SELECT * FROM raw;
-- the reload that used to leave raw2 unbudgeted and the budget orphaned:
-- dropping the budgeted relation is refused, naming the budget and the way out
DROP TABLE raw;
-- and every other way of dropping it
SELECT bl_sqlstate('DROP TABLE raw2, raw') AS two_tables,
       bl_sqlstate('DROP OWNED BY regress_life_owner') AS drop_owned;
SELECT bl_sqlstate('DROP TABLE raw') AS drop_table;
SELECT count(*) AS budgets_kept FROM dperm.budgets WHERE relation = 'raw'::regclass;

-- the way through: move the budget and its ledger to the new table in the
-- transaction that drops the old one
BEGIN;
SELECT dperm.move_budget('raw', 'raw2');
DROP TABLE raw;
ALTER TABLE raw2 RENAME TO raw;
COMMIT;
SELECT * FROM bl_status('raw');
-- the ledger row now names the new relation; relation_names keeps the history
SELECT relations, relation_names, epsilon FROM dperm.ledger WHERE relations @> ARRAY['raw'::regclass];
-- and the budget still holds
SELECT dp_logreg(f, y, dp_options(epsilon => 0.6, l2 => 0.1, dimension => 2)) FROM raw;
SELECT dp_logreg(f, y, dp_options(epsilon => 0.3, l2 => 0.1, dimension => 2)) IS NOT NULL AS released FROM raw;
SELECT * FROM bl_status('raw');

-- ---------------------------------------------------------------- move_budget's refusals
CREATE TABLE target AS SELECT * FROM raw;
CREATE TABLE budgeted AS SELECT * FROM raw;
SELECT dperm.set_budget('budgeted', 5);
-- a target with a budget of its own, or with ledger rows, is refused
SELECT dperm.move_budget('raw', 'budgeted');
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1)) IS NOT NULL AS released FROM target;
SELECT dperm.move_budget('raw', 'target');
-- a relation without a budget has nothing to move; a relation onto itself
SELECT dperm.move_budget('target', 'budgeted');
SELECT dperm.move_budget('raw', 'raw');
-- a temporary relation vanishes at session end without a DROP: refused
CREATE TEMP TABLE tmp AS SELECT * FROM raw;
SELECT dperm.move_budget('raw', 'tmp');
SELECT dperm.set_budget('tmp', 1);
SELECT count(*) AS temp_budgets FROM dperm.budgets WHERE relation = 'tmp'::regclass;
-- only the owner of both relations
RESET ROLE;
CREATE TABLE others AS SELECT * FROM raw;
ALTER TABLE others OWNER TO regress_life_other;
SET ROLE regress_life_owner;
SELECT dperm.move_budget('raw', 'others');
SET ROLE regress_life_other;
SELECT dperm.move_budget('raw', 'others');
SELECT dperm.retire_budget('raw');
SELECT * FROM bl_status('raw');
SET ROLE regress_life_owner;

-- ---------------------------------------------------------------- rename, set schema, truncate and reload keep the budget
CREATE TABLE keep AS SELECT * FROM raw;
SELECT dperm.set_budget('keep', 1.0, accounting => 'basic');
SELECT dp_logreg(f, y, dp_options(epsilon => 0.6, l2 => 0.1, dimension => 2)) IS NOT NULL AS released FROM keep;
ALTER TABLE keep RENAME TO kept;
SELECT * FROM bl_status('kept');
ALTER TABLE kept SET SCHEMA life;
SELECT * FROM bl_status('life.kept');
TRUNCATE life.kept;
INSERT INTO life.kept SELECT * FROM raw;
SELECT * FROM bl_status('life.kept');
SELECT dp_logreg(f, y, dp_options(epsilon => 0.6, l2 => 0.1, dimension => 2)) FROM life.kept;
-- DROP SCHEMA ... CASCADE is a drop too
DROP SCHEMA life CASCADE;
SELECT * FROM bl_status('life.kept');

-- ---------------------------------------------------------------- partitions, inheritance, views
CREATE TABLE parted (i int, f float8[], y boolean) PARTITION BY RANGE (i);
CREATE TABLE parted_low PARTITION OF parted FOR VALUES FROM (0) TO (100);
CREATE TABLE parted_high PARTITION OF parted FOR VALUES FROM (100) TO (1000);
INSERT INTO parted SELECT i, ARRAY[sin(i) / 2, cos(i) / 2], sin(3 * i) > 0 FROM generate_series(1, 300) i;
SELECT dperm.set_budget('parted_low', 1.0, accounting => 'basic');
-- dropping the parent drops the budgeted partition: refused; an
-- unbudgeted partition may go
DROP TABLE parted;
DROP TABLE parted_high;
-- a budget on an inheritance parent: an unbudgeted child may go, the parent not
CREATE TABLE inh_parent (i int);
CREATE TABLE inh_child () INHERITS (inh_parent);
SELECT dperm.set_budget('inh_parent', 1.0);
DROP TABLE inh_child;
SELECT bl_sqlstate('DROP TABLE inh_parent') AS drop_parent;
SELECT dperm.retire_budget('inh_parent');
DROP TABLE inh_parent;
-- a budgeted view dropped with the table it reads
CREATE TABLE base AS SELECT * FROM raw;
CREATE VIEW base_view AS SELECT * FROM base;
SELECT dperm.set_budget('base_view', 1.0);
DROP TABLE base CASCADE;
SELECT dperm.retire_budget('base_view');
DROP TABLE base CASCADE;

-- ---------------------------------------------------------------- evaluate charges what train charges
-- a model trained on the parent, a budget on one partition: evaluating on
-- the parent reads that partition and is charged to it
SELECT dperm.train_model('parted_model', 'parted', 'f', 'y', 'logistic', dp_options(epsilon => 0.2, l2 => 0.1, dimension => 2));
SELECT * FROM bl_status('parted_low');
SELECT (dperm.evaluate('parted_model', 'parted', 'f', 'y', '{"epsilon": 0.3}'))->>'n' AS n;
SELECT * FROM bl_status('parted_low');
SELECT relation_names FROM dperm.ledger WHERE algorithm = 'evaluate' ORDER BY id DESC LIMIT 1;
-- and refused when that budget is exhausted
SELECT dperm.evaluate('parted_model', 'parted', 'f', 'y', '{"epsilon": 0.6}');
SELECT * FROM bl_status('parted_low');

-- ---------------------------------------------------------------- retire_budget
CREATE TABLE scratch AS SELECT * FROM raw;
SELECT dperm.set_budget('scratch', 2.0, 1e-6, accounting => 'basic');
SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 0.1, dimension => 2)) IS NOT NULL AS released FROM scratch;
SELECT dperm.retire_budget('scratch');
DROP TABLE scratch;
-- the decision is recorded, and the ledger keeps its rows
SELECT relation_name, epsilon, delta, accounting, epsilon_spent, releases, retired_by
  FROM dperm.retired_budgets WHERE retired_by::text LIKE 'regress_life%' ORDER BY relation_name;
SELECT relation_names, epsilon FROM dperm.ledger WHERE relation_names = '{public.scratch}';
-- a relation without a budget has nothing to retire
SELECT dperm.retire_budget('target');

-- ---------------------------------------------------------------- the event trigger resolves no name a role defines
-- the owner may create functions, operators and tables in public and
-- pg_temp; the drop is refused all the same
CREATE FUNCTION public.pg_event_trigger_dropped_objects() RETURNS SETOF record LANGUAGE sql AS 'SELECT NULL::record WHERE false';
CREATE FUNCTION public.never_equal(oid, oid) RETURNS boolean LANGUAGE sql AS 'SELECT false';
CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = public.never_equal);
CREATE TEMP TABLE budgets (relation oid);
CREATE TEMP VIEW pg_event_trigger_dropped_objects AS SELECT 0::oid AS objid;
SET search_path = pg_temp, public, pg_catalog;
DROP TABLE raw;
RESET search_path;
-- session_replication_role (which silences event triggers) is a superuser's
SET session_replication_role = replica;
DROP OPERATOR public.= (oid, oid);
DROP FUNCTION public.never_equal(oid, oid), public.pg_event_trigger_dropped_objects();

-- ---------------------------------------------------------------- protection and models move with the budget
SELECT dperm.protect('raw', ARRAY['regress_life_other']::regrole[]);
SET ROLE regress_life_other;
SELECT dperm.train_model('raw_model', 'raw', 'f', 'y', 'logistic', dp_options(epsilon => 0.01, l2 => 0.1, dimension => 2));
SET ROLE regress_life_owner;
CREATE TABLE raw2 AS SELECT * FROM raw;
GRANT SELECT ON raw2 TO regress_life_other;
-- a view that exposes the new table's rows: protection cannot be moved
CREATE VIEW raw2_view AS SELECT * FROM raw2;
GRANT SELECT ON raw2_view TO regress_life_other;
SELECT dperm.move_budget('raw', 'raw2');
DROP VIEW raw2_view;
BEGIN;
SELECT dperm.move_budget('raw', 'raw2');
DROP TABLE raw;
ALTER TABLE raw2 RENAME TO raw;
COMMIT;
RESET ROLE;
SELECT relation, analysts, protected_by FROM dperm.protected WHERE relation = 'raw'::regclass;
SELECT has_table_privilege('regress_life_other', 'raw', 'SELECT') AS other_reads_raw;
SELECT name, version, relation, relation_name, relations FROM dperm.models WHERE name = 'raw_model';
SET ROLE regress_life_other;
SELECT dperm.retrain('raw_model');
RESET ROLE;
SELECT relations, relation_names FROM dperm.ledger WHERE id = (SELECT ledger_id FROM dperm.models WHERE name = 'raw_model' AND version = 2);
SELECT * FROM bl_status('raw');

-- ---------------------------------------------------------------- roles by OID
RESET ROLE;
SELECT format_type(atttypid, atttypmod) AS type, attrelid::regclass AS catalog, attname
  FROM pg_attribute
 WHERE (attrelid, attname) IN (('dperm.budgets'::regclass, 'set_by'), ('dperm.ledger'::regclass, 'role'),
                               ('dperm.protected'::regclass, 'protected_by'), ('dperm.retired_budgets'::regclass, 'retired_by'))
 ORDER BY 2, 3;
SELECT set_by FROM dperm.budgets WHERE relation = 'raw'::regclass;
CREATE ROLE regress_life_reused;
CREATE TABLE open_data AS
  SELECT ARRAY[sin(i) / 2, cos(i) / 2] AS f, sin(3 * i) > 0 AS y FROM generate_series(1, 100) i;
GRANT SELECT ON open_data TO regress_life_reused;
SET ROLE regress_life_reused;
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1)) IS NOT NULL AS released FROM open_data;
SELECT role, relation_names FROM dperm.ledger;
RESET ROLE;
REVOKE SELECT ON open_data FROM regress_life_reused;
DROP ROLE regress_life_reused;
-- the old row keeps the name it was released under; its role is the old OID
SELECT role_name, role::text ~ '^[0-9]+$' AS role_is_dangling_oid
  FROM dperm.ledger WHERE relation_names = '{public.open_data}';
CREATE ROLE regress_life_reused;
GRANT SELECT ON open_data TO regress_life_reused;
SET ROLE regress_life_reused;
-- a new role of the same name sees none of the old role's rows
SELECT count(*) AS rows_seen FROM dperm.ledger;
RESET ROLE;
REVOKE SELECT ON open_data FROM regress_life_reused;
DROP ROLE regress_life_reused;
-- pg_dump writes a dropped role's OID as a number; restored into another
-- cluster it may be a live role's OID there. The row names its role too:
-- that role does not see it.
INSERT INTO dperm.ledger (released_at, role, role_name, relations, relation_names, algorithm, mechanism,
                          loss, neighbors, epsilon, delta, n, d, seeded, query)
VALUES (now(), 'regress_life_other'::regrole, 'regress_life_dropped', ARRAY['open_data'::regclass],
        ARRAY['public.open_data'], 'test', 'test', 'logistic', 'replace_one', 0.1, 0, 100, 2, false, 'restored');
SET ROLE regress_life_other;
SELECT count(*) AS restored_rows_seen FROM dperm.ledger WHERE query = 'restored';
RESET ROLE;
DELETE FROM dperm.ledger WHERE query = 'restored';

-- ---------------------------------------------------------------- clean up
SELECT dperm.retire_budget(relation) FROM dperm.budgets
 WHERE relation IN ('raw'::regclass, 'budgeted'::regclass, 'parted_low'::regclass, 'life.kept'::regclass);
SELECT dperm.drop_model('raw_model');
SELECT dperm.drop_model('parted_model');
DROP TABLE open_data;
DROP OWNED BY regress_life_owner, regress_life_other;
DROP ROLE regress_life_owner, regress_life_other;
DROP FUNCTION bl_sqlstate(text), bl_status(regclass);
