-- Row-level security and dperm (docs/user-guide.md, "Protected relations"). A protected
-- relation is read as its owner, so its policies would be evaluated for the
-- owner, not for the analyst: a tenant policy would hand the analyst the
-- owner's rows, a policy keyed on a setting would be switched by the
-- analyst's SET, and a policy's own error would depend on a row. dperm
-- therefore refuses to protect a relation with row-level security enabled
-- anywhere in its family (0A000), and refuses, before any charge, to read a
-- protected relation whose owner enabled it afterwards (55000). Relations
-- that are not protected are read with the caller's own rights: policies
-- apply to the caller, who trains on the rows it sees.
SET max_parallel_workers_per_gather = 0;
CREATE ROLE regress_rls_owner;
CREATE ROLE regress_rls_analyst;
GRANT CREATE ON SCHEMA public TO regress_rls_owner;
-- the SQLSTATE of a statement's error (NULL: none)
CREATE FUNCTION rls_sqlstate(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;
-- how many ledger rows exist (the ledger shows each role its own)
CREATE FUNCTION rls_ledger_rows() RETURNS bigint LANGUAGE sql SECURITY DEFINER
  AS $$ SELECT count(*) FROM dperm.ledger $$;
GRANT EXECUTE ON FUNCTION rls_sqlstate(text), rls_ledger_rows() TO PUBLIC;

-- 1000 rows: the analyst's tenant has 100 of them, the owner's 900.
SET ROLE regress_rls_owner;
CREATE TABLE rls_t AS
  SELECT i, ARRAY[sin(i) / 2, cos(i) / 2] AS x, sin(3 * i) > 0 AS y, i % 3 AS k,
         CASE WHEN i <= 100 THEN 'regress_rls_analyst' ELSE 'regress_rls_owner' END AS tenant
    FROM generate_series(1, 1000) i;

-- 1. protect refuses a relation with row-level security enabled: a tenant
-- policy, a policy keyed on a setting, FORCE'd or not.
CREATE TABLE rls_tenant AS SELECT * FROM rls_t;
ALTER TABLE rls_tenant ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON rls_tenant USING (tenant = current_user);
SELECT dperm.protect('rls_tenant', ARRAY['regress_rls_analyst']::regrole[]);
CREATE TABLE rls_setting AS SELECT * FROM rls_t;
ALTER TABLE rls_setting ENABLE ROW LEVEL SECURITY;
ALTER TABLE rls_setting FORCE ROW LEVEL SECURITY;
CREATE POLICY setting_rows ON rls_setting USING (tenant = current_setting('app.tenant', true));
SELECT rls_sqlstate($$SELECT dperm.protect('rls_setting')$$) AS setting_policy;
-- enabled with no policy at all (every row hidden from others) is refused too
CREATE TABLE rls_nopolicy AS SELECT * FROM rls_t;
ALTER TABLE rls_nopolicy ENABLE ROW LEVEL SECURITY;
SELECT rls_sqlstate($$SELECT dperm.protect('rls_nopolicy')$$) AS enabled_without_policy;
-- the family: a partition or an inheritance child with row-level security
-- refuses its parent, and a parent with it refuses its partition
CREATE TABLE rls_parted (i int, x float8[], y boolean, tenant text) PARTITION BY RANGE (i);
CREATE TABLE rls_part_low PARTITION OF rls_parted FOR VALUES FROM (1) TO (501);
CREATE TABLE rls_part_high PARTITION OF rls_parted FOR VALUES FROM (501) TO (1001);
INSERT INTO rls_parted SELECT i, x, y, tenant FROM rls_t;
ALTER TABLE rls_part_high ENABLE ROW LEVEL SECURITY;
SELECT dperm.protect('rls_parted');
SELECT rls_sqlstate($$SELECT dperm.protect('rls_part_high')$$) AS partition_itself,
       rls_sqlstate($$SELECT dperm.protect('rls_part_low')$$) AS sibling_is_not_family;
ALTER TABLE rls_part_high DISABLE ROW LEVEL SECURITY;
ALTER TABLE rls_parted ENABLE ROW LEVEL SECURITY;
SELECT rls_sqlstate($$SELECT dperm.protect('rls_part_high')$$) AS parent_has_rls;
ALTER TABLE rls_parted DISABLE ROW LEVEL SECURITY;
CREATE TABLE rls_base (i int, x float8[], y boolean);
CREATE TABLE rls_child () INHERITS (rls_base);
ALTER TABLE rls_child ENABLE ROW LEVEL SECURITY;
SELECT rls_sqlstate($$SELECT dperm.protect('rls_base')$$) AS inheritance_child;
-- nothing was protected (and no privilege revoked) by the refusals
SELECT count(*) AS protected FROM dperm.protected
 WHERE relation::text LIKE 'rls\_%' AND relation::text <> 'rls_part_low';
-- without row-level security the same relations are protected as before
ALTER TABLE rls_child DISABLE ROW LEVEL SECURITY;
SELECT dperm.protect('rls_base');
SELECT dperm.protect('rls_parted', ARRAY['regress_rls_analyst']::regrole[]);
SELECT relation FROM dperm.protected WHERE relation::text LIKE 'rls\_%' ORDER BY relation::text;
RESET ROLE;

-- 2. Row-level security enabled after protect: dperm.train (in memory and
-- streaming), train_model, retrain and evaluate refuse the relation before
-- anything is charged, whatever the analyst SETs.
SET ROLE regress_rls_owner;
CREATE TABLE rls_late AS SELECT * FROM rls_t;
SELECT dperm.protect('rls_late', ARRAY['regress_rls_analyst']::regrole[]);
SELECT dperm.set_budget('rls_late', 100, 1e-5);
RESET ROLE;
SET ROLE regress_rls_analyst;
SELECT dperm.train_model('late_m', 'rls_late', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 1, l2 => 0.1)) AS version;
SELECT (dperm.train('rls_late', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 1, l2 => 0.1)))::jsonb->>'n' AS n_before_rls;
RESET ROLE;
SET ROLE regress_rls_owner;
ALTER TABLE rls_late ENABLE ROW LEVEL SECURITY;
CREATE POLICY late_rows ON rls_late USING (tenant = current_setting('app.tenant', true));
RESET ROLE;
SET ROLE regress_rls_analyst;
SET app.tenant = 'regress_rls_owner';
SELECT rls_ledger_rows() AS ledger_before \gset
SELECT dperm.train('rls_late', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 1, l2 => 0.1));
SELECT rls_sqlstate($$SELECT dperm.train('rls_late', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 1), 'streaming')$$) AS streaming,
       rls_sqlstate($$SELECT dperm.train('rls_late', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 1), 'in_memory')$$) AS in_memory,
       rls_sqlstate($$SELECT dperm.train('rls_late', 'x', 'k', 'softmax', dp_options(dimension => 2, epsilon => 1, classes => 3))$$) AS softmax;
SELECT dperm.retrain('late_m');
SELECT rls_sqlstate($$SELECT dperm.train_model('late_m2', 'rls_late', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 1))$$) AS train_model;
SELECT dperm.evaluate('late_m', 'rls_late', 'x', 'y', '{"epsilon": 1}');
SELECT rls_ledger_rows() - :ledger_before AS charged;
-- the refused runs leave no version (only late_m's first, trained run)
SELECT name, version, status, sqlstate, ledger_id IS NULL AS uncharged FROM dperm.models
 WHERE name IN ('late_m', 'late_m2') ORDER BY name, version;
RESET app.tenant;
RESET ROLE;

-- A FORCE'd policy whose cast fails on one row: refused before a row is
-- read, never a row-dependent error (charged or not).
SET ROLE regress_rls_owner;
CREATE TABLE rls_cast AS SELECT *, CASE WHEN i = 500 THEN 'oops' ELSE i::text END AS code FROM rls_t;
SELECT dperm.protect('rls_cast', ARRAY['regress_rls_analyst']::regrole[]);
SELECT dperm.set_budget('rls_cast', 100, 1e-5);
ALTER TABLE rls_cast ENABLE ROW LEVEL SECURITY;
ALTER TABLE rls_cast FORCE ROW LEVEL SECURITY;
CREATE POLICY cast_rows ON rls_cast USING (code::int > 0);
RESET ROLE;
SET ROLE regress_rls_analyst;
SELECT rls_ledger_rows() AS ledger_before \gset
SELECT rls_sqlstate($$SELECT dperm.train('rls_cast', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 1))$$) AS with_bad_row;
RESET ROLE;
SET ROLE regress_rls_owner;
ALTER TABLE rls_cast NO FORCE ROW LEVEL SECURITY;
DELETE FROM rls_cast WHERE i = 500;
ALTER TABLE rls_cast FORCE ROW LEVEL SECURITY;
RESET ROLE;
SET ROLE regress_rls_analyst;
SELECT rls_sqlstate($$SELECT dperm.train('rls_cast', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 1))$$) AS without_bad_row;
SELECT rls_ledger_rows() - :ledger_before AS charged;
RESET ROLE;

-- A partition whose owner enables row-level security after its parent was
-- protected: training on the parent (which reads it) is refused.
SET ROLE regress_rls_owner;
ALTER TABLE rls_part_high ENABLE ROW LEVEL SECURITY;
RESET ROLE;
SET ROLE regress_rls_analyst;
SELECT rls_sqlstate($$SELECT dperm.train('rls_parted', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 1))$$) AS parent_of_rls_partition;
RESET ROLE;
SET ROLE regress_rls_owner;
ALTER TABLE rls_part_high DISABLE ROW LEVEL SECURITY;
RESET ROLE;
SET ROLE regress_rls_analyst;
SELECT (dperm.train('rls_parted', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 1, l2 => 0.1)))::jsonb->>'n' AS n_without_rls;
RESET ROLE;

-- 3. Not protected: read with the caller's rights, so the tenant policy
-- applies to the analyst, who trains on its own 100 rows (n in the model and
-- in the ledger), in memory, streaming and as a named model.
SET ROLE regress_rls_owner;
GRANT SELECT ON rls_tenant TO regress_rls_analyst;
SELECT dperm.set_budget('rls_tenant', 100, 1e-5);
SELECT count(*) AS owner_sees FROM rls_tenant;
RESET ROLE;
SET ROLE regress_rls_analyst;
SELECT count(*) AS analyst_sees FROM rls_tenant;
SELECT (dperm.train('rls_tenant', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 1, l2 => 0.1), 'in_memory'))::jsonb->>'n' AS n_in_memory,
       (dperm.train('rls_tenant', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 1, l2 => 0.1), 'streaming'))::jsonb->>'n' AS n_streaming;
SELECT role, n, relation_names FROM dperm.ledger ORDER BY id DESC LIMIT 1;
SELECT dperm.train_model('tenant_m', 'rls_tenant', 'x', 'y', 'logistic', dp_options(dimension => 2, epsilon => 1, l2 => 0.1)) AS version;
SELECT (model::jsonb->>'n')::int AS model_n FROM dperm.model('tenant_m');
SELECT (e->>'n')::int AS evaluated_n FROM dperm.evaluate('tenant_m', 'rls_tenant', 'x', 'y', '{"epsilon": 1}') e;
RESET ROLE;

DELETE FROM dperm.models WHERE owner::text LIKE 'regress_rls_%';
SET client_min_messages = warning;
SELECT count(dperm.retire_budget(b.relation)) >= 0 AS retired FROM dperm.budgets b;
RESET client_min_messages;
DROP OWNED BY regress_rls_owner, regress_rls_analyst CASCADE;
DROP ROLE regress_rls_owner, regress_rls_analyst;
DROP FUNCTION rls_sqlstate(text), rls_ledger_rows();
