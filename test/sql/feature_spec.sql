-- Feature specs: raw columns with declared public domains, encoded the
-- same way in the training scan and at prediction.
SET dperm.allow_seed = on;
SET client_min_messages = warning;
-- The encoder: bounds scale to [-1, 1] and clip (NULL, NaN and non-numbers
-- are the middle, 0); values are one-hot (unknown or NULL: all zeros);
-- booleans are 1 or 0. The values come in the spec's order as jsonb keeps
-- it (keys by length, then bytes: age, vip, home).
\set spec '{"age": {"bounds": [20, 80]}, "home": {"values": ["owner", "rent"]}, "vip": {"type": "boolean"}}'
SELECT v AS "values", dperm.encode_values(:'spec'::jsonb, v) AS encoded
  FROM (VALUES (ARRAY['20', 't', 'owner']), (ARRAY['50', 'f', 'rent']), (ARRAY['95', NULL, 'other']),
               (ARRAY[NULL, 'true', NULL]), (ARRAY['NaN', 'f', 'rent']), (ARRAY['-Infinity', 'f', 'owner']),
               (ARRAY['abc', 'f', 'owner'])) t(v);
-- Wrong on its face: refused before anything is read or charged.
\set VERBOSITY terse
SELECT dperm.encode_values(:'spec'::jsonb, ARRAY['20']);
SELECT dperm.encode_values('{"age": {"bounds": [80, 20]}}', ARRAY['1']);
SELECT dperm.encode_values('{"age": {"bounds": [0, 1], "values": ["a"]}}', ARRAY['1']);
SELECT dperm.encode_values('{"age": {"values": [1, 2]}}', ARRAY['1']);
SELECT dperm.encode_values('{"age": {"values": ["a", "a"]}}', ARRAY['a']);
SELECT dperm.encode_values('{"age": {"type": "date"}}', ARRAY['a']);
SELECT dperm.encode_values('[]', ARRAY['a']);
\set VERBOSITY default

-- A raw table: ages 20 to 89 decide the label. Unscaled, the ages are
-- clipped to norm 1 and the model cannot separate them; through the spec
-- it can.
CREATE TABLE people AS
SELECT i AS id, 20 + (i * 37) % 70 AS age,
       (ARRAY['owner', 'rent', 'parents'])[1 + i % 3] AS home, i % 4 = 0 AS vip,
       ARRAY[(20 + (i * 37) % 70)::float8] AS raw_age
  FROM generate_series(1, 4000) i;
ALTER TABLE people ADD COLUMN old boolean;
UPDATE people SET old = age >= 55;
SELECT dperm.set_budget('people', 100, 1e-5);
\set pspec '{"age": {"bounds": [18, 90]}, "home": {"values": ["owner", "rent", "parents"]}, "vip": {"type": "boolean"}}'
WITH m AS (SELECT dperm.train('people', :'pspec'::jsonb, 'old', 'logistic',
                              dp_options(epsilon => 2, delta => 1e-6, seed => 3))::jsonb j)
SELECT j->'d' AS d, j->'feature_names' AS names, j->'preprocessing'->'feature_bound' AS bound,
       j->'options'->'dimension' AS declared_d FROM m;
CREATE TABLE trained AS
SELECT dperm.train('people', :'pspec'::jsonb, 'old', 'logistic',
                   dp_options(epsilon => 2, delta => 1e-6, seed => 3)) AS spec_model,
       dperm.train('people', 'raw_age', 'old', 'logistic',
                   dp_options(epsilon => 2, delta => 1e-6, dimension => 1, seed => 3)) AS raw_model;
SELECT avg(((dp_predict(t.spec_model, dperm.encode_values(:'pspec'::jsonb, ARRAY[age::text, vip::text, home])) > 0.5) = old)::int) > 0.9 AS spec_accurate,
       avg(((dp_predict(t.raw_model, raw_age) > 0.5) = old)::int) < 0.8 AS raw_inaccurate
  FROM people, trained t;
-- The spec's columns are checked against the table, and it declares d,
-- the names and the bound: options may not say otherwise.
\set VERBOSITY terse
SELECT dperm.train('people', '{"nope": {"bounds": [0, 1]}}'::jsonb, 'old', 'logistic', dp_options(epsilon => 1));
SELECT dperm.train('people', '{"home": {"bounds": [0, 1]}}'::jsonb, 'old', 'logistic', dp_options(epsilon => 1));
SELECT dperm.train('people', '{"age": {"type": "boolean"}}'::jsonb, 'old', 'logistic', dp_options(epsilon => 1));
SELECT dperm.train('people', :'pspec'::jsonb, 'old', 'logistic', dp_options(epsilon => 1, dimension => 2));
SELECT dperm.train('people', :'pspec'::jsonb, 'old', 'logistic', dp_options(epsilon => 1, feature_bound => 2));
SELECT dperm.train('people', :'pspec'::jsonb, 'old', 'logistic', dp_options(epsilon => 1, feature_names => ARRAY['a']));
\set VERBOSITY default
SELECT count(*) AS charged FROM dperm.ledger WHERE 'people'::regclass = ANY (relations);

-- Named models keep their spec: dperm.predict and dperm.encode take the raw
-- row, retraining reads through the same spec.
SELECT dperm.train_model('old_age', 'people', :'pspec'::jsonb, 'old', 'logistic',
                         dp_options(epsilon => 2, delta => 1e-6));
SELECT feature_spec = :'pspec'::jsonb AS spec_stored FROM dperm.models WHERE name = 'old_age';
SELECT dperm.encode('old_age', p) AS encoded FROM people p WHERE id IN (1, 2) ORDER BY id;
SELECT bool_and(dperm.predict('old_age', p) = dp_predict((dperm.model('old_age')).model, dperm.encode('old_age', p))) AS same,
       avg(((dperm.predict('old_age', p) > 0.5) = old)::int) > 0.9 AS accurate
  FROM people p;
SELECT dperm.retrain('old_age');
SELECT version, feature_spec = :'pspec'::jsonb AS spec_kept, (model::jsonb)->'d' AS d
  FROM dperm.models WHERE name = 'old_age' ORDER BY version;
-- A row without one of the spec's columns, and a model trained on a float8[]
-- column, are refused by their shape.
\set VERBOSITY terse
SELECT dperm.predict('old_age', ROW(30, 'owner')::record);
SELECT dperm.train_model('raw_age', 'people', 'raw_age', 'old', 'logistic', dp_options(epsilon => 1, dimension => 1));
SELECT dperm.predict('raw_age', p) FROM people p LIMIT 1;
\set VERBOSITY default
