-- Budgets follow the rows through ALTER TABLE: a partition detached from a
-- budgeted, protected parent (DETACH PARTITION), a child disinherited (NO
-- INHERIT) and the partitions of a moved budget's old parent
-- (dperm.move_budget) are still charged to the budget they were under
-- (dperm.lineage); a protected relation joins only a protected parent.
-- (The privacy unit's column: budget_unit_column.sql.)
SET max_parallel_workers_per_gather = 0;
CREATE FUNCTION lin_sqlstate(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;
CREATE ROLE regress_lin_owner;
CREATE ROLE regress_lin_analyst;
GRANT CREATE ON SCHEMA public TO regress_lin_owner;
GRANT EXECUTE ON FUNCTION lin_sqlstate(text) TO PUBLIC;
SET ROLE regress_lin_owner;

-- ---------------------------------------------------------------- DETACH PARTITION
CREATE TABLE lp (f float8[], y boolean, k int) PARTITION BY LIST (k);
CREATE TABLE lp_a PARTITION OF lp FOR VALUES IN (0);
CREATE TABLE lp_b PARTITION OF lp FOR VALUES IN (1);
INSERT INTO lp SELECT ARRAY[sin(i) / 2, cos(i) / 2], sin(3 * i) > 0, i % 2 FROM generate_series(1, 200) i;
SELECT dperm.set_budget('lp', 1.0, accounting => 'basic');
SELECT dperm.protect('lp', ARRAY['regress_lin_analyst'::regrole]);
SET ROLE regress_lin_analyst;
SELECT dperm.train('lp', 'f', 'y', 'logistic', dp_options(epsilon => 0.7, l2 => 0.1, dimension => 2)) IS NOT NULL AS released;
SET ROLE regress_lin_owner;
ALTER TABLE lp DETACH PARTITION lp_a;
SELECT relation, ancestor FROM dperm.lineage ORDER BY 1, 2;
-- the detached partition is still part of lp's budgeted rows: read alone it
-- is a subset of them, refused (0A000) as a partition read alone is, for
-- the analyst and the owner alike
SET ROLE regress_lin_analyst;
SELECT lin_sqlstate($$SELECT dperm.train('lp_a', 'f', 'y', 'logistic', dp_options(epsilon => 0.7, l2 => 0.1, dimension => 2))$$) AS detached_alone;
SET ROLE regress_lin_owner;
SELECT lin_sqlstate($$SELECT dp_logreg(f, y, dp_options(epsilon => 0.2, l2 => 0.1, dimension => 2)) FROM lp_a$$) AS owner_detached_alone;
-- read with the rest of lp, it is charged to lp's budget: 0.7 + 0.7 > 1
SELECT lin_sqlstate($$SELECT dp_logreg(f, y, dp_options(epsilon => 0.7, l2 => 0.1, dimension => 2))
                        FROM (SELECT f, y FROM lp UNION ALL SELECT f, y FROM lp_a) s$$) AS with_parent_over_budget;
SELECT dp_logreg(f, y, dp_options(epsilon => 0.2, l2 => 0.1, dimension => 2)) IS NOT NULL AS released
  FROM (SELECT f, y FROM lp UNION ALL SELECT f, y FROM lp_a) s;
SELECT round(epsilon_spent::numeric, 9) AS epsilon_spent, releases FROM dperm.budget_status WHERE relation = 'lp'::regclass;
-- a sub-partitioned partition: every level below keeps the ancestors
CREATE TABLE lp_c PARTITION OF lp FOR VALUES IN (2) PARTITION BY LIST (y);
CREATE TABLE lp_c_t PARTITION OF lp_c FOR VALUES IN (true);
ALTER TABLE lp DETACH PARTITION lp_c;
SELECT relation, ancestor FROM dperm.lineage WHERE relation::text LIKE 'lp_c%' ORDER BY 1, 2;
-- DETACH PARTITION CONCURRENTLY too
CREATE TABLE lp_d PARTITION OF lp FOR VALUES IN (3);
ALTER TABLE lp DETACH PARTITION lp_d CONCURRENTLY;
SELECT ancestor FROM dperm.lineage WHERE relation = 'lp_d'::regclass;
DROP TABLE lp_d;
-- a protected relation joins only a protected parent (55000): the new
-- parent's readers would read its rows directly
CREATE TABLE other_parent (f float8[], y boolean, k int) PARTITION BY LIST (k);
ALTER TABLE other_parent ATTACH PARTITION lp_a FOR VALUES IN (0);
CREATE TABLE other_heir (f float8[], y boolean, k int);
SELECT lin_sqlstate('ALTER TABLE lp_a INHERIT other_heir') AS inherit_unprotected;
DROP TABLE other_heir;
-- attached under a protected parent, the lineage stays
SELECT dperm.protect('other_parent', ARRAY['regress_lin_analyst'::regrole]);
ALTER TABLE other_parent ATTACH PARTITION lp_a FOR VALUES IN (0);
SELECT lin_sqlstate($$SELECT dp_logreg(f, y, dp_options(epsilon => 0.2, l2 => 0.1, dimension => 2)) FROM other_parent$$) AS reattached_subset;
-- a failed DETACH records nothing
SELECT lin_sqlstate('ALTER TABLE lp DETACH PARTITION no_such_partition') AS failed_detach;
SELECT count(*) AS lineage_rows FROM dperm.lineage WHERE ancestor = 'lp'::regclass;

-- ---------------------------------------------------------------- NO INHERIT
CREATE TABLE ip (f float8[], y boolean);
CREATE TABLE ic () INHERITS (ip);
INSERT INTO ic SELECT ARRAY[sin(i) / 2, cos(i) / 2], sin(3 * i) > 0 FROM generate_series(1, 200) i;
SELECT dperm.set_budget('ip', 1.0, accounting => 'basic');
SELECT dp_logreg(f, y, dp_options(epsilon => 0.7, l2 => 0.1, dimension => 2)) IS NOT NULL AS released FROM ip;
ALTER TABLE ic NO INHERIT ip;
-- alone, a subset of ip's budgeted rows; with ip, charged to ip: 0.7 + 0.7 > 1
SELECT lin_sqlstate($$SELECT dp_logreg(f, y, dp_options(epsilon => 0.7, l2 => 0.1, dimension => 2)) FROM ic$$) AS disinherited_alone;
SELECT dp_logreg(f, y, dp_options(epsilon => 0.7, l2 => 0.1, dimension => 2)) IS NOT NULL AS released
  FROM (SELECT f, y FROM ip UNION ALL SELECT f, y FROM ic) s;
SELECT round(epsilon_spent::numeric, 9) AS epsilon_spent, releases FROM dperm.budget_status WHERE relation = 'ip'::regclass;

-- ---------------------------------------------------------------- move_budget
-- the reload moves the budget to a new parent; the old parent's partitions,
-- still protected, stay under the moved budget (read alone, a subset of it)
CREATE TABLE mp (f float8[], y boolean, k int) PARTITION BY LIST (k);
CREATE TABLE mp_a PARTITION OF mp FOR VALUES IN (0);
INSERT INTO mp SELECT ARRAY[sin(i) / 2, cos(i) / 2], sin(3 * i) > 0, 0 FROM generate_series(1, 200) i;
SELECT dperm.set_budget('mp', 1.0, accounting => 'basic');
SELECT dperm.protect('mp', ARRAY['regress_lin_analyst'::regrole]);
SET ROLE regress_lin_analyst;
SELECT dperm.train('mp', 'f', 'y', 'logistic', dp_options(epsilon => 0.7, l2 => 0.1, dimension => 2)) IS NOT NULL AS released;
SET ROLE regress_lin_owner;
CREATE TABLE mp_new AS SELECT * FROM mp;
SELECT dperm.move_budget('mp', 'mp_new');
SET ROLE regress_lin_analyst;
SELECT lin_sqlstate($$SELECT dperm.train('mp_a', 'f', 'y', 'logistic', dp_options(epsilon => 0.7, l2 => 0.1, dimension => 2))$$) AS old_partition_alone;
SELECT lin_sqlstate($$SELECT dperm.train('mp_new', 'f', 'y', 'logistic', dp_options(epsilon => 0.7, l2 => 0.1, dimension => 2))$$) AS new_over_budget;
SET ROLE regress_lin_owner;
-- the partition detached from lp follows lp's budget when it moves
CREATE TABLE lp_new AS SELECT * FROM lp;
SELECT dperm.move_budget('lp', 'lp_new');
SELECT ancestor FROM dperm.lineage WHERE relation = 'lp_a'::regclass ORDER BY 1;
SELECT lin_sqlstate($$SELECT dp_logreg(f, y, dp_options(epsilon => 0.2, l2 => 0.1, dimension => 2)) FROM lp_a$$) AS moved_alone;
-- dropping a relation forgets its lineage
DROP TABLE mp;
DROP TABLE lp_c;
SELECT count(*) AS lineage_of_dropped FROM dperm.lineage
 WHERE relation::oid NOT IN (SELECT oid FROM pg_class) OR ancestor::oid NOT IN (SELECT oid FROM pg_class);

-- clean up
SET client_min_messages = warning;
SELECT dperm.retire_budget(relation) FROM dperm.budgets
 WHERE relation::text IN ('lp_new', 'ip', 'mp_new');
DROP TABLE lp, lp_new, other_parent, ip, ic, mp_new;
RESET client_min_messages;
SELECT count(*) AS lineage_left FROM dperm.lineage;
REVOKE CREATE ON SCHEMA public FROM regress_lin_owner;
DROP ROLE regress_lin_owner, regress_lin_analyst;
