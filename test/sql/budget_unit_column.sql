-- A budget's privacy unit is its column, not the column's name: the unit
-- follows RENAME COLUMN (of a table, a partitioned parent, a materialized
-- view), so a column added later under the old name is not the unit, and
-- dropping the unit's column is refused (2BP01) in every form.
SET max_parallel_workers_per_gather = 0;
CREATE FUNCTION unit_sqlstate(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;
CREATE ROLE regress_unit_owner;
GRANT CREATE ON SCHEMA public TO regress_unit_owner;
SET ROLE regress_unit_owner;

-- ---------------------------------------------------------------- the unit's column
CREATE TABLE ut AS
  SELECT ARRAY[sin(i) / 2, cos(i) / 2] AS f, sin(3 * i) > 0 AS y, i % 40 AS uid FROM generate_series(1, 200) i;
SELECT dperm.set_budget('ut', 5, privacy_unit => 'uid', max_rows_per_unit => 5);
SELECT dperm.train('ut', 'f', 'y', 'logistic', dp_options(epsilon => 1, l2 => 0.1, dimension => 2)) IS NOT NULL AS released;
-- RENAME COLUMN then ADD COLUMN under the old name: the unit stays the
-- renamed column (every row its own value of the new column would make
-- each row a unit)
ALTER TABLE ut RENAME COLUMN uid TO person;
ALTER TABLE ut ADD COLUMN uid int;
UPDATE ut SET uid = 1;
SELECT privacy_unit, max_rows_per_unit FROM dperm.budget_status WHERE relation = 'ut'::regclass;
SELECT dperm.train('ut', 'f', 'y', 'logistic', dp_options(epsilon => 1, l2 => 0.1, dimension => 2)) IS NOT NULL AS released;
SELECT neighbors FROM dperm.ledger WHERE relations = ARRAY['ut'::regclass] ORDER BY id;
-- ALTER TABLE ... RENAME without COLUMN, and on a parent (the rename
-- recurses to the partitions, whose budgets follow)
ALTER TABLE ut RENAME person TO person_id;
SELECT privacy_unit FROM dperm.budgets WHERE relation = 'ut'::regclass;
CREATE TABLE up (f float8[], y boolean, uid int) PARTITION BY LIST (y);
CREATE TABLE up_t PARTITION OF up FOR VALUES IN (true);
SELECT dperm.set_budget('up_t', 5, privacy_unit => 'uid', max_rows_per_unit => 5);
ALTER TABLE up RENAME COLUMN uid TO who;
SELECT privacy_unit FROM dperm.budgets WHERE relation = 'up_t'::regclass;
-- a materialized view's unit follows ALTER MATERIALIZED VIEW ... RENAME COLUMN
CREATE MATERIALIZED VIEW umv AS SELECT f, y, person_id AS uid FROM ut;
SELECT dperm.set_budget('umv', 5, privacy_unit => 'uid', max_rows_per_unit => 5);
ALTER MATERIALIZED VIEW umv RENAME COLUMN uid TO pid;
SELECT privacy_unit FROM dperm.budgets WHERE relation = 'umv'::regclass;
SELECT dperm.retire_budget('umv');
DROP MATERIALIZED VIEW umv;
-- a failed rename changes nothing
SELECT unit_sqlstate('ALTER TABLE ut RENAME COLUMN person_id TO uid') AS rename_onto_existing;
SELECT privacy_unit FROM dperm.budgets WHERE relation = 'ut'::regclass;
-- dropping the unit's column is refused (2BP01), in every form
ALTER TABLE ut DROP COLUMN person_id;
SELECT unit_sqlstate('ALTER TABLE up DROP COLUMN who') AS drop_parent_column,
       unit_sqlstate('ALTER TABLE ut DROP COLUMN uid') AS drop_other_column;
RESET ROLE;
CREATE DOMAIN unit_id AS int;
CREATE TABLE ud (f float8[], y boolean, uid unit_id);
SELECT dperm.set_budget('ud', 5, privacy_unit => 'uid', max_rows_per_unit => 5);
SELECT unit_sqlstate('DROP DOMAIN unit_id CASCADE') AS drop_type_cascade;
SELECT privacy_unit FROM dperm.budgets WHERE relation = 'ud'::regclass;

-- clean up
SET client_min_messages = warning;
SELECT dperm.retire_budget(relation) FROM dperm.budgets
 WHERE relation::text IN ('ut', 'up_t', 'ud');
DROP TABLE ut, up, ud;
DROP DOMAIN unit_id;
RESET client_min_messages;
REVOKE CREATE ON SCHEMA public FROM regress_unit_owner;
DROP ROLE regress_unit_owner;
