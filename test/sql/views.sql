-- dperm.train on a view: the view is read as the caller,
-- its body with its owner's rights (or the caller's, security_invoker), and
-- the release is charged to every relation the view reads, through nested
-- views, as the caller's own SELECT dp_logreg(...) FROM view is.
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE vb AS
  SELECT i, ARRAY[sin(i), cos(3 * i)] AS f, sin(i) + cos(3 * i) > 0 AS y
    FROM generate_series(1, 400) i;
CREATE TABLE vp (i int, f float8[], y boolean) PARTITION BY RANGE (i);
CREATE TABLE vp_low PARTITION OF vp FOR VALUES FROM (0) TO (100);
CREATE TABLE vp_high PARTITION OF vp FOR VALUES FROM (100) TO (1000);
INSERT INTO vp SELECT i, ARRAY[cos(i), sin(5 * i)], cos(i) > 0 FROM generate_series(1, 200) i;
CREATE VIEW v1 AS SELECT f AS features, y AS label FROM vb;
CREATE VIEW v2 AS SELECT features, label FROM v1 UNION ALL SELECT f, y FROM vp;
CREATE VIEW v3 AS SELECT * FROM v2;

CREATE FUNCTION view_gap(a dp_model, b dp_model) RETURNS float8 LANGUAGE sql AS $$
  SELECT max(abs(x.coefficient - y.coefficient))
    FROM dp_coefficients(a) x JOIN dp_coefficients(b) y ON x.term = y.term $$;
-- the sorted relation names of ledger row `id`
CREATE FUNCTION charged(row_id bigint) RETURNS text[] LANGUAGE sql AS $$
  SELECT array_agg(u.name ORDER BY u.name)
    FROM dperm.ledger l, unnest(l.relation_names) AS u(name) WHERE l.id = row_id $$;

-- Same seed: a view over every row of vb trains the model vb does, in
-- memory and streaming (output_gd and dp_gd).
SELECT mode, algorithm,
       view_gap(dperm.train('v1', 'features', 'label', 'logistic', o, mode => mode),
                 dperm.train('vb', 'f', 'y', 'logistic', o, mode => mode)) < 1e-12 AS same_model
  FROM (VALUES ('in_memory'), ('streaming')) m(mode),
       LATERAL (VALUES ('output_gd', dp_options(epsilon => 1, l2 => 0.05, seed => 3)),
                       ('dp_gd', dp_options(epsilon => 1, delta => 1e-6, algorithm => 'dp_gd',
                                            iterations => 20, seed => 3))) a(algorithm, o)
 ORDER BY 1, 2;
-- and the seeded view model differs from another seed's (the comparison can fail)
SELECT view_gap(dperm.train('v1', 'features', 'label', 'logistic', dp_options(epsilon => 1, l2 => 0.05, seed => 3)),
                 dperm.train('vb', 'f', 'y', 'logistic', dp_options(epsilon => 1, l2 => 0.05, seed => 4))) > 0 AS seeds_differ;

-- The ledger row lists the base table(s): through v1, vb; through the nested
-- v3, vb and vp with its partitions (and the views); in memory, streaming and
-- by the direct aggregate alike.
SELECT max(id) AS before FROM dperm.ledger \gset
SELECT (dperm.train('v1', 'features', 'label', 'logistic', dp_options(epsilon => 0.1), mode => 'in_memory'))::jsonb->>'n' AS n;
SELECT charged(:before + 1);
SELECT (dperm.train('v3', 'features', 'label', 'logistic', dp_options(epsilon => 0.1), mode => 'in_memory'))::jsonb->>'n' AS n;
SELECT (dperm.train('v3', 'features', 'label', 'logistic', dp_options(epsilon => 0.1), mode => 'streaming'))::jsonb->>'n' AS n;
SELECT (dp_logreg(features, label, dp_options(epsilon => 0.1)))::jsonb->>'n' AS n FROM v3;
SELECT charged(:before + 2) AS in_memory,
       charged(:before + 3) = charged(:before + 2) AS streaming_same,
       charged(:before + 4) = charged(:before + 2) AS direct_same;

-- A budget on a base table is charged through the (nested) view and refuses
-- once exhausted.
SELECT dperm.set_budget('vp_high', 1.0);
SELECT (dperm.train('v3', 'features', 'label', 'logistic', dp_options(epsilon => 0.6, dimension => 2), mode => 'streaming'))::jsonb->>'n' AS n;
SELECT dperm.train('v3', 'features', 'label', 'logistic', dp_options(epsilon => 0.6, dimension => 2), mode => 'streaming');
SELECT dperm.train('v3', 'features', 'label', 'logistic', dp_options(epsilon => 0.6, dimension => 2), mode => 'in_memory');
SELECT dperm.train('v2', 'features', 'label', 'logistic', dp_options(epsilon => 0.6, dimension => 2));
SELECT releases FROM dperm.budget_status WHERE relation = 'vp_high'::regclass;
-- v1 does not read vp: still free
SELECT (dperm.train('v1', 'features', 'label', 'logistic', dp_options(epsilon => 0.6)))::jsonb->>'n' AS n;

-- A view is read as the caller: one she may not SELECT is refused (42501),
-- uncharged; a security_invoker view runs its body with her rights.
CREATE ROLE regress_views_eve;
CREATE VIEW v_invoker WITH (security_invoker) AS SELECT * FROM vb;
GRANT SELECT ON v_invoker TO regress_views_eve;
GRANT SELECT ON v1 TO regress_views_eve;
SELECT count(*) AS ledger_before FROM dperm.ledger \gset
SET ROLE regress_views_eve;
\set VERBOSITY sqlstate
SELECT dperm.train('v3', 'features', 'label', 'logistic', dp_options(epsilon => 0.1, dimension => 2));
SELECT dperm.train('v_invoker', 'f', 'y', 'logistic', dp_options(epsilon => 0.1));
\set VERBOSITY default
SELECT dperm.train('v3', 'features', 'label', 'logistic', dp_options(epsilon => 0.1, dimension => 2));
-- v1 runs with its owner's rights: she may train on it, charged to vb
SELECT (dperm.train('v1', 'features', 'label', 'logistic', dp_options(epsilon => 0.1)))::jsonb->>'n' AS n;
RESET ROLE;
SELECT count(*) - :ledger_before AS new_rows FROM dperm.ledger;
SELECT role::regrole, relation_names FROM dperm.ledger ORDER BY id DESC LIMIT 1;

-- A view is never protected.
SELECT dperm.protect('v1');

-- The attack: after protecting a table the owner creates a view over it and
-- grants it to an analyst (protect refused while such a view existed). The
-- view is the owner's own publication of the rows, read with the owner's
-- rights; it never escapes the table's budget: every release through it is
-- charged to the protected table, through dperm.train or the aggregate.
CREATE ROLE regress_views_owner;
CREATE ROLE regress_views_analyst;
GRANT CREATE ON SCHEMA public TO regress_views_owner;
SET ROLE regress_views_owner;
CREATE TABLE secret AS
  SELECT i, ARRAY[sin(i) / 2, cos(i) / 2] AS x, sin(3 * i) > 0 AS sick FROM generate_series(1, 300) i;
CREATE VIEW secret_early AS SELECT * FROM secret;
GRANT SELECT ON secret_early TO regress_views_analyst;
SELECT dperm.protect('secret', ARRAY['regress_views_analyst']::regrole[]);
DROP VIEW secret_early;
SELECT dperm.protect('secret', ARRAY['regress_views_analyst']::regrole[]);
SELECT dperm.set_budget('secret', 1.0);
CREATE VIEW secret_late AS SELECT x, sick FROM secret;
CREATE VIEW secret_nested AS SELECT * FROM secret_late;
GRANT SELECT ON secret_late, secret_nested TO regress_views_analyst;
SET ROLE regress_views_analyst;
SELECT (dperm.train('secret_nested', 'x', 'sick', 'logistic', dp_options(epsilon => 0.6, dimension => 2)))::jsonb->>'n' AS n;
SELECT relation_names FROM dperm.ledger ORDER BY id DESC LIMIT 1;
SELECT dperm.train('secret_nested', 'x', 'sick', 'logistic', dp_options(epsilon => 0.6, dimension => 2));
SELECT dperm.train('secret_late', 'x', 'sick', 'logistic', dp_options(epsilon => 0.6, dimension => 2), mode => 'streaming');
SELECT dp_logreg(x, sick, dp_options(epsilon => 0.6, dimension => 2)) FROM secret_late;
SELECT (dperm.train('secret_late', 'x', 'sick', 'logistic', dp_options(epsilon => 0.3, dimension => 2)))::jsonb->>'n' AS n;
SELECT dperm.train('secret_late', 'x', 'sick', 'logistic', dp_options(epsilon => 0.3, dimension => 2));
RESET ROLE;
SELECT releases, epsilon_spent <= 1 AS within FROM dperm.budget_status WHERE relation = 'secret'::regclass;

RESET ROLE;
-- budgeted tables are dropped once their budgets are retired
SET client_min_messages = warning;
SELECT count(dperm.retire_budget(relation)) AS retired FROM dperm.budgets
 WHERE relation IN ('secret'::regclass, 'vp_high'::regclass);
RESET client_min_messages;
DROP TABLE secret CASCADE;
DROP TABLE vb, vp CASCADE;
DROP FUNCTION view_gap(dp_model, dp_model), charged(bigint);
REVOKE CREATE ON SCHEMA public FROM regress_views_owner;
DROP ROLE regress_views_eve;
DROP ROLE regress_views_owner;
DROP ROLE regress_views_analyst;
