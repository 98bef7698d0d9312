-- dperm.evaluate checks what every reader checks (CheckReleaseReads): a
-- partition or child of a budgeted or protected parent is not read alone,
-- and a view of one must read each of its rows once. On 0.7.0 evaluate on
-- one partition stated that partition's exact n, and on an empty one
-- failed uncharged with "no rows to evaluate on": "does anyone have
-- diagnosis X" for free.
SET dperm.allow_seed = on;
SET client_min_messages = warning;
CREATE TABLE ev_patients (diagnosis text, features float8[], sick boolean) PARTITION BY LIST (diagnosis);
CREATE TABLE ev_flu PARTITION OF ev_patients FOR VALUES IN ('flu');
CREATE TABLE ev_rare PARTITION OF ev_patients FOR VALUES IN ('rare');
INSERT INTO ev_patients
SELECT 'flu', ARRAY[(i % 7) / 7.0, (i % 5) / 5.0], i % 3 = 0 FROM generate_series(1, 200) i;
SELECT dperm.set_budget('ev_patients', 10, 1e-5);
SELECT dperm.protect('ev_patients');
SELECT dperm.train_model('ev_m', 'ev_patients', 'features', 'sick', 'logistic',
                         dp_options(epsilon => 1, dimension => 2, seed => 1));
SELECT count(*) AS ledger_before FROM dperm.ledger WHERE relations && ARRAY['ev_patients'::regclass] \gset

-- The whole parent: evaluated and charged.
SELECT (e->>'n')::int AS n, e ? 'accuracy' AS has_accuracy
  FROM (SELECT dperm.evaluate('ev_m', 'ev_patients', 'features', 'sick', '{"epsilon": 0.5, "seed": 2}') e) s;
-- One partition, and the empty one: refused the same way, before anything
-- is counted or charged.
SELECT dperm.evaluate('ev_m', 'ev_flu', 'features', 'sick', '{"epsilon": 0.5}');
SELECT dperm.evaluate('ev_m', 'ev_rare', 'features', 'sick', '{"epsilon": 0.5}');
-- A view that filters the parent: the count's plan does not read every row.
CREATE VIEW ev_flu_only AS SELECT * FROM ev_patients WHERE diagnosis = 'flu';
\set VERBOSITY terse
SELECT dperm.evaluate('ev_m', 'ev_flu_only', 'features', 'sick', '{"epsilon": 0.5}');
\set VERBOSITY default
-- One charge: the whole parent's evaluation.
SELECT count(*) - :ledger_before AS new_ledger_rows FROM dperm.ledger WHERE relations && ARRAY['ev_patients'::regclass];
SELECT dperm.drop_model('ev_m');
