-- Feature specs checked against the columns' types before anything is read
-- or charged (no privacy cost), the case rule of text values, the array
-- form (columns in the order written), and dp_coefficients in the raw
-- columns' units.
SET dperm.allow_seed = on;
SET client_min_messages = warning;
CREATE TYPE sc_tier AS ENUM ('low', 'high');
CREATE TABLE sc_people AS
SELECT i AS id, 20 + (i * 37) % 61 AS age, (ARRAY['white', 'blue'])[1 + i % 2] AS color,
       (ARRAY['low', 'high'])[1 + (i / 3) % 2]::sc_tier AS tier, i % 5 AS n, i % 4 = 0 AS vip,
       20 + (i * 37) % 61 >= 50 AS old
  FROM generate_series(1, 3000) i;
SELECT dperm.set_budget('sc_people', 100, 1e-5);
SELECT count(*) AS charged_before FROM dperm.ledger WHERE 'sc_people'::regclass = ANY (relations) \gset

-- A boolean column takes booleans: ["no", "yes"] or ["f", "t"] would match
-- no row (it reads as true/false), so they are refused before the charge;
-- [false, true] (JSON booleans) and ["false", "true"] are the same domain.
\set VERBOSITY terse
SELECT dperm.train('sc_people', '{"age": {"bounds": [20, 80]}, "old": {"values": ["no", "yes"], "label": true}}'::jsonb, 'old', 'logistic', dp_options(epsilon => 1));
SELECT dperm.train('sc_people', '{"age": {"bounds": [20, 80]}, "old": {"values": ["f", "t"], "label": true}}'::jsonb, 'old', 'logistic', dp_options(epsilon => 1));
SELECT dperm.train('sc_people', '{"age": {"bounds": [20, 80]}, "vip": {"values": ["yes"]}}'::jsonb, 'old', 'logistic', dp_options(epsilon => 1));
-- JSON booleans need a boolean column; an integer column integers as it
-- prints them; an enum column its labels (case matters); "case" a text column.
SELECT dperm.train('sc_people', '{"age": {"bounds": [20, 80]}, "color": {"values": [true]}}'::jsonb, 'old', 'logistic', dp_options(epsilon => 1));
SELECT dperm.train('sc_people', '{"age": {"bounds": [20, 80]}, "n": {"values": ["1", "03"]}}'::jsonb, 'old', 'logistic', dp_options(epsilon => 1));
SELECT dperm.train('sc_people', '{"age": {"bounds": [20, 80]}, "n": {"values": ["1", "x"]}}'::jsonb, 'old', 'logistic', dp_options(epsilon => 1));
SELECT dperm.train('sc_people', '{"age": {"bounds": [20, 80]}, "tier": {"values": ["Low", "High"]}}'::jsonb, 'old', 'logistic', dp_options(epsilon => 1));
SELECT dperm.train('sc_people', '{"age": {"bounds": [20, 80]}, "tier": {"values": ["low"], "case": "insensitive"}}'::jsonb, 'old', 'logistic', dp_options(epsilon => 1));
SELECT dperm.train_model('sc_bad', 'sc_people', '{"age": {"bounds": [20, 80]}, "old": {"values": ["no", "yes"], "label": true}}'::jsonb, 'old', 'logistic', dp_options(epsilon => 1));
\set VERBOSITY default
SELECT count(*) = :charged_before AS nothing_charged FROM dperm.ledger WHERE 'sc_people'::regclass = ANY (relations);
SELECT count(*) AS sc_bad_versions FROM dperm.models WHERE name = 'sc_bad';

-- The boolean label as JSON booleans trains the same model as the strings
-- "false"/"true" and as the boolean label without a spec's label.
\set lspec '{"age": {"bounds": [20, 80]}, "old": {"values": [false, true], "label": true}}'
\set sspec '{"age": {"bounds": [20, 80]}, "old": {"values": ["false", "true"], "label": true}}'
SELECT (a::jsonb)->'coefficients' = (b::jsonb)->'coefficients' AND (a::jsonb)->'intercept' = (b::jsonb)->'intercept' AS same_model,
       (a::jsonb)->'coefficients' = (c::jsonb)->'coefficients' AS same_as_boolean,
       ((a::jsonb)->>'intercept')::float8 > -5 AS not_all_negative
  FROM (SELECT dperm.train('sc_people', :'lspec'::jsonb, 'old', 'logistic', dp_options(epsilon => 5, delta => 1e-6, seed => 7)) a,
               dperm.train('sc_people', :'sspec'::jsonb, 'old', 'logistic', dp_options(epsilon => 5, delta => 1e-6, seed => 7)) b,
               dperm.train('sc_people', '{"age": {"bounds": [20, 80]}}'::jsonb, 'old', 'logistic', dp_options(epsilon => 5, delta => 1e-6, seed => 7)) c) t;

-- Text values match byte for byte by default: "White" is not "white" (the
-- declared level reads all zeros); "case": "insensitive" folds ASCII letters
-- on both sides.
SELECT dperm.encode_values('{"color": {"values": ["White", "Blue"]}}', ARRAY['white']) AS exact,
       dperm.encode_values('{"color": {"values": ["White", "Blue"], "case": "insensitive"}}', ARRAY['white']) AS folded,
       dperm.encode_values('{"color": {"values": ["White", "Blue"], "case": "insensitive"}}', ARRAY['BLUE']) AS folded_blue,
       dperm.encode_values('{"color": {"values": ["White", "Blue"], "case": "exact"}}', ARRAY['White']) AS exact_match;
\set VERBOSITY terse
SELECT dperm.encode_values('{"color": {"values": ["White", "white"], "case": "insensitive"}}', ARRAY['a']);
SELECT dperm.encode_values('{"color": {"values": ["White"], "case": "upper"}}', ARRAY['a']);
SELECT dperm.encode_values('{"age": {"bounds": [0, 1], "case": "insensitive"}}', ARRAY['1']);
\set VERBOSITY default

-- The array form keeps the order written (an object's keys are kept by
-- jsonb in its own order: by length, then bytes).
\set aspec '[{"column": "vip", "type": "boolean"}, {"column": "color", "values": ["white", "blue"]}, {"column": "age", "bounds": [20, 80]}, {"column": "old", "values": [false, true], "label": true}]'
SELECT dperm.encode_values(:'aspec', ARRAY['true', 'blue', '50']) AS encoded;
\set VERBOSITY terse
SELECT dperm.encode_values('[{"bounds": [0, 1]}]', ARRAY['1']);
SELECT dperm.encode_values('[{"column": "a", "bounds": [0, 1]}, {"column": "a", "bounds": [0, 1]}]', ARRAY['1', '1']);
SELECT dperm.encode_values('[{"column": "a", "bounds": [0, 1], "extra": 1}]', ARRAY['1']);
\set VERBOSITY default
CREATE TABLE sc_model AS
SELECT dperm.train('sc_people', :'aspec'::jsonb, 'old', 'logistic', dp_options(epsilon => 5, delta => 1e-6, seed => 7)) AS m;
SELECT (m::jsonb)->'feature_names' AS names, (m::jsonb)->'feature_spec' AS stated_spec FROM sc_model;

-- dp_coefficients: by default per unit of each raw column, in the spec's
-- order; age in [20, 80] is encoded 2 (age - 20)/60 - 1, so its raw weight
-- is w 2/60 and the intercept moves by -w (20 + 80)/60; one-hot levels and
-- booleans stay. The noise scale is mapped the same way.
SELECT term, class FROM sc_model, dp_coefficients(m);
WITH e AS (SELECT term, coefficient, noise_scale FROM sc_model, dp_coefficients(m, 'encoded')),
     r AS (SELECT term, coefficient, noise_scale FROM sc_model, dp_coefficients(m)),
     w AS (SELECT coefficient AS w_age, noise_scale AS s FROM e WHERE term = 'age')
SELECT bool_and(CASE WHEN e.term = 'age' THEN abs(r.coefficient - w_age * 2 / 60) < 1e-12
                     WHEN e.term = 'intercept' THEN abs(r.coefficient - (e.coefficient - w_age * 100 / 60)) < 1e-12
                     ELSE r.coefficient = e.coefficient END) AS mapped,
       bool_and(CASE WHEN e.term = 'age' THEN abs(r.noise_scale - s * 2 / 60) < 1e-12
                     WHEN e.term = 'intercept' THEN abs(r.noise_scale - s * sqrt(1 + (100.0 / 60) ^ 2)) < 1e-12
                     ELSE r.noise_scale = e.noise_scale END) AS noise_mapped,
       bool_and(e.noise_scale = (SELECT ((m::jsonb)->>'noise_scale')::float8 FROM sc_model)) AS encoded_noise_is_the_models
  FROM e JOIN r USING (term), w;
-- The raw coefficients give the model's own prediction from the raw values
-- (inside the bounds).
WITH r AS (SELECT term, coefficient FROM sc_model, dp_coefficients(m))
SELECT bool_and(abs(dp_predict(m, dperm.encode_values(:'aspec', ARRAY[p.vip::text, p.color, p.age::text]))
                    - 1 / (1 + exp(-((SELECT coefficient FROM r WHERE term = 'intercept')
                                     + (SELECT coefficient FROM r WHERE term = 'age') * p.age
                                     + (SELECT coefficient FROM r WHERE term = 'color=' || p.color)
                                     + (SELECT coefficient FROM r WHERE term = 'vip') * p.vip::int)))) < 1e-9) AS same_prediction
  FROM sc_model, sc_people p WHERE p.id <= 50;
-- A model without a spec reads the same in both scales.
SELECT bool_and(a.coefficient = b.coefficient AND a.noise_scale = b.noise_scale) AS same
  FROM dp_coefficients('{"loss":"huber","coefficients":[1,2],"intercept":0.5,"feature_names":["a","b"],"noise_scale":0.25,"preprocessing":{"feature_bound":1,"fit_intercept":true,"huber_delta":1}}') a
  JOIN dp_coefficients('{"loss":"huber","coefficients":[1,2],"intercept":0.5,"feature_names":["a","b"],"noise_scale":0.25,"preprocessing":{"feature_bound":1,"fit_intercept":true,"huber_delta":1}}', 'encoded') b USING (term);
\set VERBOSITY terse
SELECT * FROM sc_model, dp_coefficients(m, 'units');
\set VERBOSITY default

-- Named models: a boolean declared by its values encodes at prediction as
-- in the training scan (true/false, not the output function's t/f).
SELECT dperm.train_model('sc_vip', 'sc_people', '[{"column": "age", "bounds": [20, 80]}, {"column": "vip", "values": [false, true]}]'::jsonb,
                         'old', 'logistic', dp_options(epsilon => 2, delta => 1e-6));
SELECT p.vip, dperm.encode('sc_vip', p) AS encoded FROM sc_people p WHERE id IN (4, 5) ORDER BY id;
SELECT term FROM dp_coefficients((dperm.model('sc_vip')).model);
