-- The demo of scripts/demo.sh: a private model of BANK trained from its raw
-- columns through a feature spec, its coefficients in the data's units, its
-- ledger row and the remaining budget. psql variable bank_csv: the path of
-- bank-full.csv.gz (../shared/data/raw, or $DPERM_DATA_DIR).
\pset pager off
\echo '== dperm demo: differentially private logistic regression on BANK'
CREATE EXTENSION IF NOT EXISTS dperm;
DROP TABLE IF EXISTS bank_raw;
CREATE TABLE bank_raw (age int, job text, marital text, education text, "default" text,
                       balance int, housing text, loan text, contact text, day int, month text,
                       duration int, campaign int, pdays int, previous int, poutcome text, y text);
\set bank_cmd 'zcat ' :bank_csv
COPY bank_raw FROM PROGRAM :'bank_cmd' WITH (FORMAT csv, DELIMITER ';', HEADER true);
SELECT count(*) AS rows FROM bank_raw;

\echo '== the data owner gives the table a total privacy budget'
SELECT dperm.set_budget('bank_raw', epsilon => 3, delta => 1e-5);

\echo '== the analyst declares each raw column''s public domain (from the dataset''s documentation,'
\echo '   never from the rows), in the order they want to read the model'
\set spec '[{"column": "duration", "bounds": [0, 5000]}, {"column": "poutcome", "values": ["unknown", "other", "failure", "success"]}, {"column": "age", "bounds": [18, 100]}, {"column": "balance", "bounds": [-10000, 110000]}, {"column": "campaign", "bounds": [1, 65]}, {"column": "pdays", "bounds": [-1, 900]}, {"column": "previous", "bounds": [0, 300]}, {"column": "day", "bounds": [1, 31]}, {"column": "month", "values": ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]}, {"column": "job", "values": ["admin.", "unknown", "unemployed", "management", "housemaid", "entrepreneur", "student", "blue-collar", "self-employed", "retired", "technician", "services"]}, {"column": "marital", "values": ["married", "divorced", "single"]}, {"column": "education", "values": ["unknown", "primary", "secondary", "tertiary"]}, {"column": "default", "values": ["no", "yes"]}, {"column": "housing", "values": ["no", "yes"]}, {"column": "loan", "values": ["no", "yes"]}, {"column": "contact", "values": ["unknown", "telephone", "cellular"]}, {"column": "y", "values": ["no", "yes"], "label": true}]'

\echo '== what training will do, before reading any data (16 columns: d = 51, row bound 4)'
SELECT key, value FROM jsonb_each(dp_explain('logistic', 45211, 51,
         dp_options(epsilon => 1, delta => 1e-6, l2 => 0.01, feature_bound => 4)))
 WHERE key IN ('algorithm', 'iterations', 'step_size', 'L', 'beta', 'sensitivity',
               'noise', 'noise_scale', 'epsilon', 'delta');

\echo '== train: one (1, 1e-6)-differentially private release of a named model'
SELECT dperm.train_model('bank_demo', 'bank_raw', :'spec'::jsonb, 'y', 'logistic',
                         dp_options(epsilon => 1, delta => 1e-6, l2 => 0.01)) AS version;
SELECT jsonb_pretty((model::jsonb) - 'plan' - 'coefficients' - 'feature_names' - 'feature_spec' - 'options') AS model
  FROM dperm.model('bank_demo');

\echo '== the coefficients in the data''s units (per second of call, per euro, per level), with the'
\echo '   noise scale of each: the ten largest on the encoded scale, where they are comparable'
WITH m AS (SELECT model FROM dperm.model('bank_demo')),
     raw AS (SELECT term, coefficient, noise_scale FROM m, dp_coefficients(m.model)),
     enc AS (SELECT term, coefficient FROM m, dp_coefficients(m.model, 'encoded'))
SELECT term, round(raw.coefficient::numeric, 6) AS per_unit, round(raw.noise_scale::numeric, 6) AS noise_scale,
       round(enc.coefficient::numeric, 4) AS encoded
  FROM raw JOIN enc USING (term) ORDER BY abs(enc.coefficient) DESC LIMIT 10;

\echo '== how well it ranks: AUC on the training rows (an evaluation, itself not private)'
WITH scored AS (SELECT y = 'yes' AS label, rank() OVER (ORDER BY dperm.predict('bank_demo', b)) AS r FROM bank_raw b)
SELECT round(((sum(r) FILTER (WHERE label) - count(*) FILTER (WHERE label) * (count(*) FILTER (WHERE label) + 1) / 2.0)
              / (count(*) FILTER (WHERE label) * count(*) FILTER (WHERE NOT label)))::numeric, 4) AS auc
  FROM scored;

\echo '== the ledger row of the release and the budget left'
SELECT id, role, relation_names, algorithm, mechanism, epsilon, delta, n, d, released_at
  FROM dperm.ledger ORDER BY id DESC LIMIT 1;
SELECT * FROM dperm.budget_status;
