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

-- Labels through the spec: one column marked "label": true is read through
-- its domain (values: their index, logistic [negative, positive]; Huber
-- bounds: scaled to [-1, 1], the model mapped back). It is not a feature.
SELECT v, dperm.encode_label('{"a": {"type": "boolean"}, "y": {"values": ["no", "yes"], "label": true}}', v) AS y
  FROM unnest(ARRAY['no', 'yes', 'Yes', NULL]) v;
SELECT v, dperm.encode_label('{"a": {"type": "boolean"}, "y": {"bounds": [100, 300], "label": true}}', v) AS y
  FROM unnest(ARRAY['100', '250', '1e9', 'abc', NULL]) v;
ALTER TABLE people ADD COLUMN old01 int, ADD COLUMN tier text, ADD COLUMN tier_i int,
                   ADD COLUMN score numeric, ADD COLUMN scaled float8;
UPDATE people SET old01 = old::int,
  tier = CASE WHEN age < 40 THEN 'young' WHEN age < 65 THEN 'middle' ELSE 'senior' END,
  tier_i = CASE WHEN age < 40 THEN 0 WHEN age < 65 THEN 1 ELSE 2 END,
  score = 100 + 2 * age + id % 7, scaled = (100 + 2 * age + id % 7 - 200) / 100.0;
-- An integer 0/1 label is refused without a spec (no silent "> 0");
-- through its declared values it trains the same model as the boolean.
\set VERBOSITY terse
SELECT dperm.train('people', :'pspec'::jsonb, 'old01', 'logistic', dp_options(epsilon => 1));
\set VERBOSITY default
\set lspec '{"age": {"bounds": [18, 90]}, "home": {"values": ["owner", "rent", "parents"]}, "vip": {"type": "boolean"}, "old01": {"values": ["0", "1"], "label": true}}'
SELECT (a::jsonb)->'coefficients' = (b::jsonb)->'coefficients' AND (a::jsonb)->'intercept' = (b::jsonb)->'intercept' AS same_model,
       (b::jsonb)->'d' AS d
  FROM (SELECT dperm.train('people', :'pspec'::jsonb, 'old', 'logistic', dp_options(epsilon => 2, delta => 1e-6, seed => 3)) a,
               dperm.train('people', :'lspec'::jsonb, 'old01', 'logistic', dp_options(epsilon => 2, delta => 1e-6, seed => 3)) b) t;
-- Softmax: the label's values are the classes (K from the spec).
\set sspec '{"age": {"bounds": [18, 90]}, "home": {"values": ["owner", "rent", "parents"]}, "vip": {"type": "boolean"}, "tier": {"values": ["young", "middle", "senior"], "label": true}}'
SELECT (a::jsonb)->'coefficients' = (b::jsonb)->'coefficients' AS same_model, (b::jsonb)->'classes' AS classes
  FROM (SELECT dperm.train('people', :'pspec'::jsonb, 'tier_i', 'softmax', dp_options(epsilon => 2, delta => 1e-6, classes => 3, seed => 3)) a,
               dperm.train('people', :'sspec'::jsonb, 'tier', 'softmax', dp_options(epsilon => 2, delta => 1e-6, seed => 3)) b) t;
-- Huber: targets declared in [100, 300] train on (y - 200)/100; the model
-- comes back in the label's units: 100 w and 100 b + 200 of the model on the
-- hand-scaled column, with the same seed.
\set hspec '{"age": {"bounds": [18, 90]}, "home": {"values": ["owner", "rent", "parents"]}, "vip": {"type": "boolean"}, "score": {"bounds": [100, 300], "label": true}}'
SELECT (SELECT bool_and(abs(100 * x::float8 - y::float8) < 1e-9)
          FROM jsonb_array_elements_text((a::jsonb)->'coefficients') WITH ORDINALITY p(x, i)
          JOIN jsonb_array_elements_text((b::jsonb)->'coefficients') WITH ORDINALITY q(y, j) ON i = j) AS coefficients_scaled,
       abs(100 * ((a::jsonb)->>'intercept')::float8 + 200 - ((b::jsonb)->>'intercept')::float8) < 1e-9 AS intercept_scaled,
       (b::jsonb)->'target_bounds' AS target_bounds
  FROM (SELECT dperm.train('people', :'pspec'::jsonb, 'scaled', 'huber', dp_options(epsilon => 2, delta => 1e-6, seed => 3)) a,
               dperm.train('people', :'hspec'::jsonb, 'score', 'huber', dp_options(epsilon => 2, delta => 1e-6, seed => 3)) b) t;
-- Named models: prediction in the label's units and classes, and
-- dperm.evaluate(name, relation, options) through the stored spec and label.
SELECT dperm.train_model('score', 'people', :'hspec'::jsonb, 'score', 'huber', dp_options(epsilon => 2, delta => 1e-6));
SELECT sqrt(avg((dperm.predict('score', p) - score) ^ 2)) < 0.2 * stddev(score) AS rmse_small FROM people p;
SELECT (e->>'rmse')::float8 < 0.2 * (SELECT stddev(score) FROM people) AS private_rmse_small,
       e->'residual_bound' AS residual_bound
  FROM dperm.evaluate('score', 'people', '{"epsilon": 5}') e;
SELECT dperm.train_model('tier', 'people', :'sspec'::jsonb, 'tier', 'softmax', dp_options(epsilon => 2, delta => 1e-6));
SELECT avg((dperm.predict('tier', p)::int = tier_i)::int) > 0.9 AS accurate FROM people p;
SELECT (e->>'accuracy')::float8 > 0.9 AS private_accuracy FROM dperm.evaluate('tier', 'people', '{"epsilon": 5}') e;
SELECT (e->>'accuracy')::float8 > 0.9 AS private_accuracy FROM dperm.evaluate('old_age', 'people', '{"epsilon": 5}') e;
-- Wrong on their face, refused before any charge: the label is another
-- column, a domain the loss does not read, options that contradict the
-- spec's label, a model not trained through a spec.
SELECT count(*) AS charged_before FROM dperm.ledger WHERE 'people'::regclass = ANY (relations) \gset
\set VERBOSITY terse
SELECT dperm.train('people', :'lspec'::jsonb, 'old', 'logistic', dp_options(epsilon => 1));
SELECT dperm.train('people', :'hspec'::jsonb, 'score', 'logistic', dp_options(epsilon => 1));
SELECT dperm.train('people', :'sspec'::jsonb, 'tier', 'softmax', dp_options(epsilon => 1, classes => 4));
SELECT dperm.train('people', :'hspec'::jsonb, 'score', 'huber', dp_options(epsilon => 1, target_bound => 3));
SELECT dperm.train('people', :'hspec'::jsonb, 'score', 'huber', dp_options(epsilon => 1, fit_intercept => false));
SELECT dperm.train_model('tier2', 'people', :'sspec'::jsonb, 'tier', 'softmax', dp_options(epsilon => 1, classes => 2));
SELECT dperm.encode_values('{"y": {"type": "boolean", "label": true}}', ARRAY['t']);
SELECT dperm.encode_label(:'pspec', 'x');
SELECT dperm.evaluate('raw_age', 'people', '{"epsilon": 1}');
\set VERBOSITY default
SELECT count(*) = :charged_before AS nothing_charged FROM dperm.ledger WHERE 'people'::regclass = ANY (relations);
SELECT count(*) AS tier2_versions FROM dperm.models WHERE name = 'tier2';
