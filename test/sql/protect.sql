-- Protected relations: the owner revokes direct access; analysts train
-- through dperm.train, which charges the relation under the analyst's name,
-- and they cannot read rows, change budgets or dodge the charge.
SET max_parallel_workers_per_gather = 0;
CREATE ROLE regress_dperm_clinic;
CREATE ROLE regress_dperm_alice;
CREATE ROLE regress_dperm_bob;
GRANT CREATE ON SCHEMA public TO regress_dperm_clinic;
SET ROLE regress_dperm_clinic;
CREATE TABLE records AS
  SELECT i, ARRAY[sin(i) / 2, cos(i) / 2] AS x, sin(3 * i) > 0 AS sick, cos(3 * i) AS score, 'name ' || i AS name
    FROM generate_series(1, 500) i;
GRANT SELECT ON records TO PUBLIC;
GRANT SELECT (name) ON records TO regress_dperm_bob;
SELECT dperm.set_budget('records', 1.0, 1e-6);
-- only the owner may protect
SET ROLE regress_dperm_alice;
SELECT dperm.protect('records');
SET ROLE regress_dperm_clinic;
SELECT dperm.protect('records', ARRAY['regress_dperm_alice']::regrole[]);
SELECT relation, analysts, protected_by FROM dperm.protected WHERE relation = 'records'::regclass;
RESET ROLE;

-- Alice: no direct access any more, not even through a view or a CTE
CREATE SCHEMA regress_alice AUTHORIZATION regress_dperm_alice;
SET ROLE regress_dperm_alice;
SELECT count(*) FROM records;
WITH r AS (SELECT * FROM records) SELECT dp_logreg(x, sick, dp_options(epsilon => 0.1)) FROM r;
CREATE VIEW regress_alice.v AS SELECT * FROM records;
SELECT count(*) FROM regress_alice.v;
SELECT dp_logreg(x, sick, dp_options(epsilon => 0.1)) FROM regress_alice.v;
-- but she trains through dperm.train; the release is charged to records,
-- and the ledger says it was hers
SELECT m::jsonb->>'loss' AS loss, (m::jsonb->>'n')::int AS n
  FROM dperm.train('records', 'x', 'sick', 'logistic', dp_options(epsilon => 0.3, l2 => 0.1, dimension => 2)) m;
SELECT (dperm.train('records', 'x', 'score', 'huber', dp_options(epsilon => 0.3, delta => 1e-7, l2 => 0.1, dimension => 2)))::jsonb->>'loss' AS loss;
SELECT role, relation_names, epsilon FROM dperm.ledger ORDER BY id;
SELECT releases, epsilon_spent < 1 AS within FROM dperm.budget_status WHERE relation = 'records'::regclass;
-- the budget holds: a release that does not fit is refused
SELECT dperm.train('records', 'x', 'sick', 'logistic', dp_options(epsilon => 0.9, dimension => 2));
-- names are columns, never SQL: injection attempts are unknown columns
SELECT dperm.train('records', 'x, sick, ''{"epsilon":1}'') FROM records --', 'sick', 'logistic', dp_options(epsilon => 0.1));
SELECT dperm.train('records', 'x', 'sick); DROP TABLE records; --', 'logistic', dp_options(epsilon => 0.1));
SELECT dperm.train('records', 'name', 'sick', 'logistic', dp_options(epsilon => 0.1));
SELECT dperm.train('records', 'x', 'name', 'logistic', dp_options(epsilon => 0.1));
SELECT dperm.train('records', 'x', 'sick', 'huber', dp_options(epsilon => 0.1));
SELECT dperm.train('records', 'x', 'sick', 'softmax', dp_options(epsilon => 0.1));
SELECT dperm.train('records', 'ctid', 'sick', 'logistic', dp_options(epsilon => 0.1));
-- she cannot change budgets, protections or the ledger
SELECT dperm.set_budget('records', 100);
SELECT dperm.protect('records');
DELETE FROM dperm.ledger;
UPDATE dperm.protected SET analysts = NULL;
-- dperm.train reads an unprotected relation with the caller's own rights
-- her own table is hers to train on
CREATE TABLE regress_alice.own AS SELECT ARRAY[0.1, 0.2]::float8[] AS x, true AS y;
SELECT dperm.train('regress_alice.own', 'x', 'y', 'logistic', dp_options(epsilon => 0.1))::jsonb->>'n' AS n;
-- her view over records runs with her rights, which records no longer grants
SELECT dperm.train('regress_alice.v', 'x', 'sick', 'logistic', dp_options(epsilon => 0.1, dimension => 2));
RESET ROLE;

-- Bob is not an analyst of records, and his column grant is gone too
SET ROLE regress_dperm_bob;
SELECT dperm.train('records', 'x', 'sick', 'logistic', dp_options(epsilon => 0.1));
SELECT name FROM records LIMIT 1;
RESET ROLE;
-- the owner keeps access
SET ROLE regress_dperm_clinic;
SELECT count(*) FROM records;
RESET ROLE;
