-- The trust boundary (docs/user-guide.md, "Trust model"): every attack an
-- ordinary login role can mount through dperm, run as that role. Each block
-- would give superuser, a crash, or an uncharged read on dperm 0.4.0.
SET max_parallel_workers_per_gather = 0;
CREATE ROLE regress_sec_owner;
CREATE ROLE regress_sec_mallory;
CREATE ROLE regress_sec_alice;
GRANT CREATE ON SCHEMA public TO regress_sec_owner;
-- Where analysts may CREATE in the extension's schema (attack 4 needs it).
GRANT CREATE ON SCHEMA public TO regress_sec_mallory;
-- Whether mallory became superuser, and how many ledger rows exist.
CREATE FUNCTION sec_mallory_is_superuser() RETURNS boolean LANGUAGE sql
  AS $$ SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_sec_mallory' $$;
CREATE FUNCTION sec_ledger_rows() RETURNS bigint LANGUAGE sql SECURITY DEFINER
  AS $$ SELECT count(*) FROM dperm.ledger $$;
GRANT EXECUTE ON FUNCTION sec_ledger_rows() TO PUBLIC;
-- The SQLSTATE of a statement's error (its message may name internals).
CREATE FUNCTION sec_sqlstate(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;

-- A protected table of the owner: 300 rows, 40 with a NULL label, 30 with
-- a class out of range, one ragged row in t_ragged.
SET ROLE regress_sec_owner;
CREATE TABLE sec_t AS
  SELECT i, ARRAY[sin(i) / 2, cos(i) / 2] AS x,
         CASE WHEN i % 10 = 0 THEN NULL ELSE sin(3 * i) > 0 END AS y,
         (i % 5)::smallint AS k, (i % 7) AS k7
    FROM generate_series(1, 300) i;
SELECT dperm.protect('sec_t', ARRAY['regress_sec_mallory', 'regress_sec_alice']::regrole[]);
SELECT dperm.set_budget('sec_t', 100, 1e-3);
RESET ROLE;

-- 1. Type shadowing: a temp domain named like a catalog type whose CHECK
-- runs the attacker's function. Internal SQL pins search_path =
-- pg_catalog, pg_temp and qualifies its types: the domain is never used.
SET ROLE regress_sec_mallory;
CREATE FUNCTION pg_temp.evil(oid) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF current_user <> 'regress_sec_mallory' THEN
    RAISE NOTICE 'evil ran as %', current_user;
  END IF;
  BEGIN EXECUTE 'ALTER ROLE regress_sec_mallory SUPERUSER'; EXCEPTION WHEN OTHERS THEN NULL; END;
  RETURN true;
END $$;
CREATE TABLE own_t AS SELECT ARRAY[0.1, 0.2]::float8[] AS x, true AS y FROM generate_series(1, 50);
CREATE DOMAIN pg_temp.regclass AS oid CHECK (pg_temp.evil(VALUE));
CREATE DOMAIN pg_temp.oid AS pg_catalog.oid CHECK (pg_temp.evil(VALUE));
CREATE DOMAIN pg_temp.name AS text CHECK (pg_temp.evil(0));
CREATE DOMAIN pg_temp.text AS pg_catalog.text CHECK (pg_temp.evil(0));
CREATE DOMAIN pg_temp.jsonb AS pg_catalog.jsonb CHECK (pg_temp.evil(0));
CREATE DOMAIN pg_temp.regrole AS oid CHECK (pg_temp.evil(VALUE));
CREATE DOMAIN pg_temp.float8 AS pg_catalog.float8 CHECK (pg_temp.evil(0));
CREATE DOMAIN pg_temp.int4 AS pg_catalog.int4 CHECK (pg_temp.evil(0));
CREATE DOMAIN pg_temp.bool AS pg_catalog.bool CHECK (pg_temp.evil(0));
SELECT (dperm.train('sec_t', 'x', 'y', 'logistic', dp_options(epsilon => 1, dimension => 2, l2 => 0.1)))::pg_catalog.jsonb->>'loss' AS trained;
SELECT relation::text, epsilon_budget FROM dperm.budget_status WHERE relation = 'sec_t'::pg_catalog.regclass;
SELECT releases FROM dperm.budget_spent('sec_t', 'rdp', 1e-3);
SELECT dperm.set_budget('own_t', 1);
SELECT dperm.protect('own_t');
SELECT dperm.budget_spent('own_t', 'basic', 0) IS NOT NULL AS spent;
SELECT dp_logreg(x, y, dp_options(epsilon => 1, dimension => 2, l2 => 0.1)) IS NOT NULL AS released FROM own_t;
DROP DOMAIN pg_temp.regclass, pg_temp.oid, pg_temp.name, pg_temp.text, pg_temp.jsonb,
  pg_temp.regrole, pg_temp.float8, pg_temp.int4, pg_temp.bool;
RESET ROLE;
SELECT sec_mallory_is_superuser() AS mallory_is_superuser;

-- 2. A protected temp table turned into a view by a "_RETURN" rule: train
-- re-checks the relation's kind and never reads as a superuser.
SET ROLE regress_sec_mallory;
CREATE TEMP TABLE turncoat (x float8[], y boolean);
SELECT dperm.protect('turncoat');
CREATE FUNCTION pg_temp.evil_label() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  BEGIN EXECUTE 'ALTER ROLE regress_sec_mallory SUPERUSER'; EXCEPTION WHEN OTHERS THEN NULL; END;
  RETURN true;
END $$;
CREATE RULE "_RETURN" AS ON SELECT TO turncoat DO INSTEAD
  SELECT ARRAY[0.1, 0.2]::float8[] AS x, pg_temp.evil_label() AS y;
SELECT dperm.train('turncoat', 'x', 'y', 'logistic', dp_options(epsilon => 1));
RESET ROLE;
SELECT sec_mallory_is_superuser() AS mallory_is_superuser;

-- Other relation kinds are refused too.
SET ROLE regress_sec_mallory;
CREATE TEMP SEQUENCE sec_seq;
CREATE TYPE pg_temp.sec_composite AS (x float8[], y boolean);
SELECT dperm.protect('sec_seq');
SELECT dperm.protect('pg_temp.sec_composite');
SELECT dperm.train('sec_seq', 'last_value', 'is_called', 'logistic', dp_options(epsilon => 1));
RESET ROLE;

-- Operators and functions of a schema the attacker puts first in her
-- search_path are never resolved by dperm's internal statements.
SET ROLE regress_sec_mallory;
CREATE FUNCTION public.sec_evil_eq(oid, oid) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF current_user <> 'regress_sec_mallory' THEN
    RAISE NOTICE 'evil operator ran as %', current_user;
  END IF;
  RETURN $1 OPERATOR(pg_catalog.=) $2;
END $$;
CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = public.sec_evil_eq);
CREATE OPERATOR public.<> (LEFTARG = oid, RIGHTARG = oid, FUNCTION = public.sec_evil_eq);
CREATE FUNCTION public.array_length(float8[], int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  IF current_user <> 'regress_sec_mallory' THEN
    RAISE NOTICE 'evil array_length ran as %', current_user;
  END IF;
  RETURN 2;
END $$;
SET search_path = public, pg_catalog;
SELECT (dperm.train('sec_t', 'x', 'y', 'logistic', dp_options(epsilon => 1, dimension => 2, l2 => 0.1)))::pg_catalog.jsonb->>'n' AS n;
SELECT count(*) >= 0 AS status_read FROM dperm.budget_status;
SELECT dperm.protect('own_t');
RESET search_path;
DROP OPERATOR public.= (oid, oid);
DROP OPERATOR public.<> (oid, oid);
DROP FUNCTION public.sec_evil_eq(oid, oid), public.array_length(float8[], int);
RESET ROLE;
SELECT sec_mallory_is_superuser() AS mallory_is_superuser;

-- 3. Shadow aggregates: an exact-match dp_softmax(float8[], smallint, jsonb)
-- in the extension's schema never sees the rows of sec_t.
SET ROLE regress_sec_mallory;
CREATE FUNCTION public.sec_steal_sfunc(float8[], float8[], smallint, jsonb) RETURNS float8[]
  LANGUAGE plpgsql AS $$ BEGIN RAISE NOTICE 'shadow aggregate saw a row as %', current_user; RETURN $2; END $$;
CREATE AGGREGATE public.dp_softmax(float8[], smallint, jsonb) (SFUNC = public.sec_steal_sfunc, STYPE = float8[]);
SELECT (dperm.train('sec_t', 'x', 'k', 'softmax', dp_options(epsilon => 1, dimension => 2, l2 => 0.1, classes => 5)))::jsonb->>'loss' AS trained;
DROP AGGREGATE public.dp_softmax(float8[], smallint, jsonb);
RESET ROLE;

-- 4. Nothing data-dependent for free.
SET ROLE regress_sec_mallory;
-- n of a protected relation does not depend on the columns or options
-- chosen: NULL labels and classes out of range are imputed, not skipped.
SELECT (dperm.train('sec_t', 'x', 'y', 'logistic', dp_options(epsilon => 1, dimension => 2, l2 => 0.1)))::jsonb->>'n' AS n_logistic;
SELECT (dperm.train('sec_t', 'x', 'k7', 'softmax', dp_options(epsilon => 1, dimension => 2, l2 => 0.1, classes => 2)))::jsonb->>'n' AS n_classes_2;
SELECT (dperm.train('sec_t', 'x', 'k7', 'softmax', dp_options(epsilon => 1, dimension => 2, l2 => 0.1, classes => 6)))::jsonb->>'n' AS n_classes_6;
-- errors that depend on options and the public shape (n, d) come before
-- the scan and are free, including every plan error
SELECT sec_ledger_rows() AS rows_before \gset
SELECT dperm.train('sec_t', 'x', 'k7', 'softmax', dp_options(epsilon => 1));
SELECT dperm.train('sec_t', 'x', 'y', 'logistic', dp_options(epsilon => 1e-150));
SELECT dperm.train('sec_t', 'x', 'y', 'logistic', '{"epsilon": 1, "seed": 3}');
SELECT dperm.train('sec_t', 'x', 'y', 'logistic',
                   dp_options(epsilon => 1, dimension => 2, delta => 1e-6, algorithm => 'dp_sgd', batch_size => 100000));
SELECT dperm.train('sec_t', 'x', 'y', 'logistic', dp_options(epsilon => 1, dimension => 2, l2 => 0.1, step_size => 100));
SELECT sec_ledger_rows() - :rows_before AS charged_for_option_errors;
-- on a relation the caller reads directly (unbudgeted, so a WHERE is
-- allowed), n is whatever the query keeps; an error that needs only n, d
-- and the options is still raised before the charge, free
CREATE TEMP TABLE own_t2 AS SELECT ARRAY[0.1, 0.2]::float8[] AS x, true AS y FROM generate_series(1, 50);
SELECT dp_logreg(x, y, dp_options(epsilon => 1, delta => 1e-6, algorithm => 'dp_sgd', batch_size => 100000))
  FROM own_t2 WHERE y;
SELECT sec_ledger_rows() - :rows_before AS charged_after_batch_error;
RESET ROLE;
-- a ragged row is no error: truncated to the declared d, counted in n,
-- and the release is charged like any other
SET ROLE regress_sec_owner;
CREATE TABLE sec_ragged AS SELECT ARRAY[0.1, 0.2]::float8[] AS x, i % 2 = 0 AS y FROM generate_series(1, 100) i;
INSERT INTO sec_ragged VALUES (ARRAY[0.1, 0.2, 0.3], true);
SELECT dperm.protect('sec_ragged');
RESET ROLE;
SET ROLE regress_sec_mallory;
SELECT sec_ledger_rows() AS rows_before \gset
SELECT m->>'n' AS n, m->>'d' AS d
  FROM (SELECT dperm.train('sec_ragged', 'x', 'y', 'logistic', dp_options(epsilon => 1, l2 => 0.1, dimension => 2))::jsonb AS m) s;
SELECT sec_ledger_rows() - :rows_before AS charged_for_ragged;
SELECT relation_names, epsilon, n, d, mechanism FROM dperm.ledger ORDER BY id DESC LIMIT 1;
RESET ROLE;

-- 5. protect covers partitions, inheritance children and views.
SET ROLE regress_sec_owner;
CREATE TABLE sec_private AS SELECT 1 AS i;
CREATE TABLE sec_parts (x float8[], y boolean, p int) PARTITION BY LIST (p);
CREATE TABLE sec_part1 PARTITION OF sec_parts FOR VALUES IN (1);
CREATE TABLE sec_part2 PARTITION OF sec_parts FOR VALUES IN (2);
INSERT INTO sec_parts SELECT ARRAY[0.1, 0.01 * i], i % 3 = 0, 1 + i % 2 FROM generate_series(1, 200) i;
GRANT SELECT ON sec_part1 TO regress_sec_mallory;
CREATE TABLE sec_inh_parent (x float8[], y boolean);
CREATE TABLE sec_inh_child () INHERITS (sec_inh_parent);
GRANT SELECT ON sec_inh_child TO PUBLIC;
CREATE VIEW sec_view AS SELECT * FROM sec_inh_parent;
GRANT SELECT ON sec_view TO regress_sec_alice;
CREATE MATERIALIZED VIEW sec_mat AS SELECT * FROM sec_parts;
GRANT SELECT ON sec_mat TO regress_sec_alice;
-- views and materialized views that expose the rows block protect
SELECT dperm.protect('sec_inh_parent');
SELECT dperm.protect('sec_parts');
REVOKE SELECT ON sec_view FROM regress_sec_alice;
DROP MATERIALIZED VIEW sec_mat;
SELECT dperm.protect('sec_inh_parent', ARRAY['regress_sec_mallory']::regrole[]);
SELECT dperm.protect('sec_parts', ARRAY['regress_sec_mallory']::regrole[]);
SELECT relation::text, analysts FROM dperm.protected WHERE relation::text LIKE 'sec_%' ORDER BY 1;
SELECT dperm.set_budget('sec_parts', 2);
RESET ROLE;
SET ROLE regress_sec_mallory;
SELECT count(*) FROM sec_part1;
SELECT count(*) FROM sec_inh_child;
-- the parent trains whole, charged to it, within its budget
SELECT (dperm.train('sec_parts', 'x', 'y', 'logistic', dp_options(epsilon => 1.5, dimension => 2, l2 => 0.1)))::jsonb->>'n' AS n_parts;
SELECT relation_names FROM dperm.ledger ORDER BY id DESC LIMIT 1;
SELECT dperm.train('sec_parts', 'x', 'y', 'logistic', dp_options(epsilon => 1, dimension => 2, l2 => 0.1));
-- a partition is a subset of its budgeted parent (its n would be the exact
-- size of the subset): training on it alone is refused before anything is
-- charged, even where epsilon would fit
SELECT sec_ledger_rows() AS rows_before \gset
SELECT public.sec_sqlstate($$SELECT dperm.train('sec_part1', 'x', 'y', 'logistic', dp_options(epsilon => 0.1, dimension => 2, l2 => 0.1))$$) AS train_partition;
SELECT sec_ledger_rows() - :rows_before AS charged_for_partition;
RESET ROLE;

-- 6. dataset charges only what the caller may read; catalogs are refused.
SET ROLE regress_sec_mallory;
SELECT dp_logreg(x, y, dp_options(epsilon => 1, dataset => 'pg_catalog.pg_authid')) FROM own_t2;
SELECT dp_logreg(x, y, dp_options(epsilon => 1, dataset => 'pg_class')) FROM own_t2;
SELECT dp_logreg(x, y, dp_options(epsilon => 1, dataset => 'information_schema.tables')) FROM own_t2;
SELECT dp_logreg(x, y, dp_options(epsilon => 1, dataset => 'sec_private')) FROM own_t2;
SELECT dperm.train('sec_t', 'x', 'y', 'logistic', dp_options(epsilon => 1, dataset => 'sec_private'));
-- an analyst of a protected relation may name it, but a release charged
-- to it must read it whole: rows from elsewhere are refused (0A000, not a
-- permission error), nothing charged
SELECT sec_ledger_rows() AS rows_before \gset
SELECT dp_logreg(x, y, dp_options(epsilon => 1, dimension => 2, l2 => 0.1, dataset => 'sec_t')) IS NOT NULL AS analyst_may_charge FROM own_t2;
SELECT sec_ledger_rows() - :rows_before AS charged_for_dataset_refusal;
-- the same checks from a parallel plan; an unbudgeted dataset the caller
-- may read is charged beside the relation read, the owner sees the row
CREATE TABLE public.sec_mallory_rows AS SELECT ARRAY[0.1, 0.2]::float8[] AS x, true AS y FROM generate_series(1, 2000);
CREATE TABLE public.sec_mallory_other (i int);
ALTER TABLE public.sec_mallory_rows SET (parallel_workers = 2);
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT dp_logreg(x, y, dp_options(epsilon => 1, dimension => 2, l2 => 0.1, dataset => 'sec_t')) IS NOT NULL AS parallel_analyst_may_charge
  FROM public.sec_mallory_rows;
SELECT dp_logreg(x, y, dp_options(epsilon => 1, l2 => 0.1, dataset => 'sec_private')) FROM public.sec_mallory_rows;
SELECT dp_logreg(x, y, dp_options(epsilon => 1, l2 => 0.1, dataset => 'public.sec_mallory_other')) IS NOT NULL AS parallel_dataset_charged
  FROM public.sec_mallory_rows;
SET max_parallel_workers_per_gather = 0;
RESET ROLE;
SELECT relation_names FROM dperm.ledger ORDER BY id DESC LIMIT 1;

-- 7. Row-level security: a relation with it is never protected (its
-- policies would run for the owner; test/sql/rls.sql has the attacks); granted
-- SELECT, an analyst trains on the rows the policies show it.
SET ROLE regress_sec_owner;
CREATE TABLE sec_rls AS SELECT ARRAY[0.1, 0.01 * i]::float8[] AS x, i % 2 = 0 AS y, i FROM generate_series(1, 100) i;
ALTER TABLE sec_rls ENABLE ROW LEVEL SECURITY;
ALTER TABLE sec_rls FORCE ROW LEVEL SECURITY;
CREATE POLICY sec_rls_half ON sec_rls USING (i <= 40);
SELECT dperm.protect('sec_rls');
GRANT SELECT ON sec_rls TO regress_sec_alice;
RESET ROLE;
SET ROLE regress_sec_alice;
SELECT (dperm.train('sec_rls', 'x', 'y', 'logistic', dp_options(epsilon => 1, l2 => 0.1)))::jsonb->>'n' AS n_under_rls;
RESET ROLE;

-- 8. Bounded resources: a release's coefficient count is capped before the
-- scan (classes * (d + 1) > dperm.max_coefficients), free of charge; only a
-- superuser may change the cap.
SET dperm.max_coefficients = 1000;
SET ROLE regress_sec_mallory;
SELECT sec_ledger_rows() AS rows_before \gset
SELECT dperm.train('sec_t', 'x', 'k', 'softmax', dp_options(epsilon => 1, dimension => 2, classes => 400));
SELECT dp_softmax(x, 1, dp_options(epsilon => 1, classes => 400)) FROM own_t2;
SELECT sec_ledger_rows() - :rows_before AS charged_for_the_cap;
SET dperm.max_coefficients = 100000000;
RESET ROLE;
RESET dperm.max_coefficients;

SELECT sec_mallory_is_superuser() AS mallory_is_superuser;
-- budgeted tables are dropped once their budgets are retired
SET client_min_messages = warning;
SELECT count(dperm.retire_budget(b.relation)) > 0 AS retired
  FROM dperm.budgets b JOIN pg_class c ON c.oid = b.relation
 WHERE pg_get_userbyid(c.relowner) LIKE 'regress_sec_%';
RESET client_min_messages;
DROP OWNED BY regress_sec_owner, regress_sec_mallory, regress_sec_alice;
DROP FUNCTION sec_mallory_is_superuser(), sec_ledger_rows(), sec_sqlstate(text);
DROP ROLE regress_sec_owner, regress_sec_mallory, regress_sec_alice;
