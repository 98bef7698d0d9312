-- "bounds": "auto" (auto_domain.hpp): a spec written without looking at the
-- data trains on BANK's raw columns under a budget; the domain step takes a
-- tenth of epsilon, charged in the model's one ledger row (the epsilon
-- asked), and the model states the chosen bounds and their epsilon.
-- Refusals (an auto label, "values": "auto", a privacy unit, a text column)
-- cost nothing.
SET dperm.allow_seed = on;
CREATE TABLE ad_bank (age int, job text, marital text, education text, "default" text,
                      balance int, housing text, loan text, contact text, day int, month text,
                      duration int, campaign int, pdays int, previous int, poutcome text, y text);
\copy ad_bank FROM PROGRAM 'zcat "${DPERM_DATA_DIR:-../shared/data/raw}/bank-full.csv.gz"' WITH (FORMAT csv, DELIMITER ';', HEADER true)
SELECT count(*) AS rows FROM ad_bank;
SELECT dperm.set_budget('ad_bank', 10, 1e-5);
\set aspec '[{"column": "duration", "bounds": "auto"}, {"column": "age", "bounds": "auto"}, {"column": "balance", "bounds": "auto"}, {"column": "poutcome", "values": ["unknown", "other", "failure", "success"]}, {"column": "y", "values": ["no", "yes"], "label": true}]'
CREATE TABLE ad_trained AS
SELECT dperm.train('ad_bank', :'aspec'::jsonb, 'y', 'logistic',
                   dp_options(epsilon => 2, delta => 1e-6, seed => 5))::jsonb AS j;
-- The model's epsilon is the one asked; a tenth of it took the domains,
-- split over the three auto columns.
SELECT j->'epsilon' AS epsilon, j->'domain_epsilon' AS domain_epsilon,
       (j->'options'->>'epsilon')::float8 AS model_epsilon FROM ad_trained;
SELECT s->>'column' AS col, s->'bounds' AS bounds, s->'private_bounds' AS private_bounds
  FROM ad_trained, jsonb_array_elements(j->'feature_spec') s;
-- The chosen bounds against the data's own 1% and 99% quantiles (not
-- released; the test only): each chosen bound is within a factor 5 (two
-- steps of the 1-2-5 grid: a tie past the data goes one step further with
-- probability 1/4) of the true one, either way.
WITH b AS (SELECT s->>'column' AS col, (s->'bounds'->>0)::float8 AS lo, (s->'bounds'->>1)::float8 AS hi
             FROM ad_trained, jsonb_array_elements(j->'feature_spec') s WHERE s ? 'private_bounds'),
     q AS (SELECT 'age' AS col, percentile_disc(0.01) WITHIN GROUP (ORDER BY age) AS q1,
                  percentile_disc(0.99) WITHIN GROUP (ORDER BY age) AS q99 FROM ad_bank
           UNION ALL
           SELECT 'duration', percentile_disc(0.01) WITHIN GROUP (ORDER BY duration),
                  percentile_disc(0.99) WITHIN GROUP (ORDER BY duration) FROM ad_bank
           UNION ALL
           SELECT 'balance', percentile_disc(0.01) WITHIN GROUP (ORDER BY balance),
                  percentile_disc(0.99) WITHIN GROUP (ORDER BY balance) FROM ad_bank)
SELECT b.col, b.lo < b.hi AS ordered,
       b.hi BETWEEN least(q.q99 * 5, q.q99 / 5) - 1 AND greatest(q.q99 * 5, q.q99 / 5) + 1 AS hi_near_q99,
       b.lo BETWEEN least(q.q1 * 5, q.q1 / 5) - 1 AND greatest(q.q1 * 5, q.q1 / 5) + 1 AS lo_near_q1
  FROM b JOIN q USING (col) ORDER BY col;
-- One ledger row, at the epsilon asked.
SELECT count(*) AS charges, sum(epsilon) AS epsilon, sum(delta) AS delta
  FROM dperm.ledger WHERE 'ad_bank'::regclass = ANY (relations);
-- Coefficients in the data's units through the chosen bounds; prediction
-- through the spec the model states.
SELECT term FROM dp_coefficients((SELECT j::text::dp_model FROM ad_trained)) LIMIT 3;
SELECT avg(((dp_predict(t.j::text::dp_model,
                        dperm.encode_values(t.j->'feature_spec',
                                            ARRAY[duration::text, age::text, balance::text, poutcome]))
             > 0.5) = (y = 'yes'))::int) > 0.85 AS accurate
  FROM ad_bank, ad_trained t;
-- Refusals: nothing charged.
\set VERBOSITY terse
SELECT dperm.train('ad_bank', '{"age": {"bounds": "auto"}, "duration": {"bounds": "auto", "label": true}}'::jsonb,
                   'duration', 'huber', dp_options(epsilon => 1));
SELECT dperm.train('ad_bank', '{"age": {"bounds": "auto"}, "job": {"values": "auto"}}'::jsonb,
                   'y', 'logistic', dp_options(epsilon => 1, delta => 1e-6));
SELECT dperm.train('ad_bank', '{"job": {"bounds": "auto"}}'::jsonb, 'y', 'logistic', dp_options(epsilon => 1));
SELECT dperm.encode_values('{"age": {"bounds": "auto"}}'::jsonb, ARRAY['30']);
CREATE TABLE ad_units (uid int, age int, y boolean);
INSERT INTO ad_units SELECT i % 50, 20 + i % 60, i % 3 = 0 FROM generate_series(1, 500) i;
SELECT dperm.set_budget('ad_units', 5, privacy_unit => 'uid', max_rows_per_unit => 20);
SELECT dperm.train('ad_units', '{"age": {"bounds": "auto"}}'::jsonb, 'y', 'logistic', dp_options(epsilon => 1));
\set VERBOSITY default
SELECT count(*) AS charges FROM dperm.ledger WHERE relations && ARRAY['ad_bank', 'ad_units']::regclass[];
