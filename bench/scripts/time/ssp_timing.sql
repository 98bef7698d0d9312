-- BANK timing of dp_logreg with algorithm => 'ssp' against the default (bench/reports/ssp.md).
-- Run from the repository: pg_virtualenv -t psql -X -v ON_ERROR_STOP=1 -f bench/scripts/time/ssp_timing.sql
CREATE EXTENSION IF NOT EXISTS dperm;
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE bank (features float8[], label boolean);
\copy bank FROM PROGRAM 'python3 bench/load_datasets.py --copy bank'
SELECT count(*) FROM bank;
\timing on
SELECT m::jsonb->>'algorithm' AS algorithm FROM (SELECT dp_logreg(features, label, dp_options(epsilon => 1, delta => 1e-6, seed => 1)) m FROM bank) s;
SELECT m::jsonb->>'algorithm' AS algorithm FROM (SELECT dp_logreg(features, label, dp_options(algorithm => 'ssp', epsilon => 1, delta => 1e-6, seed => 1)) m FROM bank) s;
SELECT m::jsonb->>'algorithm' AS algorithm FROM (SELECT dp_logreg(features, label, dp_options(algorithm => 'ssp', epsilon => 1, delta => 1e-6, seed => 2)) m FROM bank) s;
SELECT m::jsonb->>'algorithm' AS algorithm FROM (SELECT dp_logreg(features, label, dp_options(epsilon => 1, delta => 1e-6, seed => 2)) m FROM bank) s;
SELECT dperm.train('bank', 'features', 'label', 'logistic', dp_options(algorithm => 'ssp', epsilon => 1, delta => 1e-6, seed => 3))::jsonb->>'algorithm';
SELECT count(*) FROM bank;
