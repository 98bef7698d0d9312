-- dperm.explain: dp_explain for dperm.train's call as the analyst writes
-- it (relation, feature spec, label, loss, options). d comes from the spec,
-- n from the analyst's estimate or the last count dperm released of the
-- relation that the caller may see; no row is read, nothing is charged.
SET dperm.allow_seed = on;
SET client_min_messages = warning;
CREATE ROLE regress_xd_owner;
CREATE ROLE regress_xd_analyst;
CREATE ROLE regress_xd_other;
GRANT CREATE ON SCHEMA public TO regress_xd_owner;
SET ROLE regress_xd_owner;
-- 300 rows of 60 persons (5 each); a spec of 2 numeric columns, a boolean
-- and a category of 3 values: d = 2 + 1 + 3 = 6.
CREATE TABLE xd_people AS
  SELECT i AS id, i % 60 AS person, 18 + (i * 7) % 70 AS age, (i * 13) % 40 AS hours,
         i % 5 = 0 AS vip, (ARRAY['owner', 'rent', 'parents'])[1 + i % 3] AS home,
         (18 + (i * 7) % 70) > 50 AS old
    FROM generate_series(1, 300) i;
SELECT dperm.set_budget('xd_people', 10, 1e-5);
SELECT dperm.protect('xd_people', ARRAY['regress_xd_analyst']::regrole[]);
CREATE TABLE xd_visits AS SELECT * FROM xd_people;
SELECT dperm.set_budget('xd_visits', 10, 1e-5, privacy_unit => 'person', max_rows_per_unit => 5);
SELECT dperm.protect('xd_visits', ARRAY['regress_xd_analyst']::regrole[]);
RESET ROLE;
\set spec '{"age": {"bounds": [18, 90]}, "hours": {"bounds": [0, 40]}, "vip": {"type": "boolean"}, "home": {"values": ["owner", "rent", "parents"]}}'
SELECT count(*) AS ledger_rows FROM dperm.ledger \gset

SET ROLE regress_xd_analyst;
-- The analyst cannot read a row of either table ...
SELECT count(*) FROM xd_people;
-- ... but may explain: d from the spec, n as stated (a compact answer).
SELECT j->'algorithm' AS algorithm, j->'epsilon' AS epsilon, j->'delta' AS delta,
       j->'split' AS split, j->'per' AS per, j->'d' AS d, j->'n' AS n, j->'mode' AS mode,
       j->'charged' AS charged, j ? 'plan' AS has_plan
  FROM dperm.explain('xd_people', :'spec'::jsonb, 'old', 'logistic',
                     dp_options(epsilon => 1, delta => 1e-6), 300) j;
-- The split adds up to the epsilon asked; the compact answer names its keys.
SELECT abs((j->'split'->>'count')::float8 + (j->'split'->>'offset')::float8
           + (j->'split'->>'decision')::float8 + (j->'split'->>'model')::float8
           - (j->>'epsilon')::float8) < 1e-12 AS split_adds_up,
       (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(j) k) AS keys
  FROM dperm.explain('xd_people', :'spec'::jsonb, 'old', 'logistic',
                     dp_options(epsilon => 1, delta => 1e-6), 300) j;
-- full => true adds the whole plan, which is dp_explain's at the same n, d
-- and the options the spec implies (dp_explain needs d counted by hand: 6,
-- and the spec's feature_bound).
SELECT (SELECT bool_and(j->'plan'->k = e->k)
          FROM (SELECT dp_explain('logistic', 300, 6, dp_options(epsilon => 1, delta => 1e-6,
                                  dimension => 6, feature_bound => 2)) e) x,
               unnest(ARRAY['algorithm', 'epsilon', 'delta', 'noise_scale', 'iterations', 'l2']) k)
         AS plan_is_dp_explain,
       j->'plan'->'options'->'feature_bound' AS spec_feature_bound,
       j->'plan'->'d' AS plan_d, j->'row_slots' AS row_slots
  FROM dperm.explain('xd_people', :'spec'::jsonb, 'old', 'logistic',
                     dp_options(epsilon => 1, delta => 1e-6), 300, full => true) j;
-- Without n_estimate and with no release of the relation: refused (n is
-- never counted, nor read from the statistics).
\set VERBOSITY terse
SELECT dperm.explain('xd_people', :'spec'::jsonb, 'old', 'logistic', dp_options(epsilon => 1));
SELECT dperm.explain('xd_people', :'spec'::jsonb, 'old', 'logistic', dp_options(epsilon => 1), 0);
-- What dperm.train refuses before its charge, explain refuses alike.
SELECT dperm.explain('xd_people', :'spec'::jsonb, 'old', 'logistic', dp_options(epsilon => 1, dimension => 2), 300);
SELECT dperm.explain('xd_people', '{"nope": {"bounds": [0, 1]}}'::jsonb, 'old', 'logistic', dp_options(epsilon => 1), 300);
RESET ROLE;
SET ROLE regress_xd_other;
SELECT dperm.explain('xd_people', :'spec'::jsonb, 'old', 'logistic', dp_options(epsilon => 1), 300);
RESET ROLE;
\set VERBOSITY default
SET ROLE regress_xd_analyst;

-- A privacy unit: n counts units; the count's share of epsilon is in the
-- split, and the split is per unit.
SELECT j->'epsilon' AS epsilon, j->'split'->'count' AS count_share, j->'per' AS per,
       j->'n' AS n, j->'noise' ? 'count_scale' AS count_noise,
       abs((j->'split'->>'count')::float8 + (j->'split'->>'offset')::float8
           + (j->'split'->>'decision')::float8 + (j->'split'->>'model')::float8 - 2) < 1e-12 AS split_adds_up
  FROM dperm.explain('xd_visits', :'spec'::jsonb, 'old', 'logistic',
                     dp_options(epsilon => 2), 60) j;
-- Nothing was charged so far.
RESET ROLE;
SELECT count(*) - :ledger_rows AS new_ledger_rows FROM dperm.ledger;
SELECT relation, epsilon_spent, releases FROM dperm.budget_status
 WHERE relation IN ('xd_people'::regclass, 'xd_visits'::regclass) ORDER BY relation::text;
SET ROLE regress_xd_analyst;

-- After a release, n defaults to the count dperm released: at the row the
-- n of the caller's own last ledger row; at a unit, the noisy count of
-- units a named model of the relation states.
SELECT (dperm.train('xd_people', :'spec'::jsonb, 'old', 'logistic',
                    dp_options(epsilon => 1, seed => 4))::jsonb->>'n')::int AS released_n;
SELECT j->'n'->'value' AS n, j->'n'->>'source' LIKE 'n of ledger row %' AS from_ledger
  FROM dperm.explain('xd_people', :'spec'::jsonb, 'old', 'logistic', dp_options(epsilon => 1)) j;
SELECT dperm.train_model('xd_model', 'xd_visits', :'spec'::jsonb, 'old', 'logistic',
                         dp_options(epsilon => 1, seed => 4)) AS version;
SELECT (j->'n'->>'value')::int = (m.model::jsonb->'privacy_unit'->>'units')::int AS n_is_noisy_units,
       j->'n'->>'source' LIKE 'the noisy count of units released with model xd_model version 1 %' AS from_model
  FROM dperm.explain('xd_visits', :'spec'::jsonb, 'old', 'logistic', dp_options(epsilon => 1)) j,
       dperm.models m WHERE m.name = 'xd_model';
-- A stated estimate wins over the released count.
SELECT j->'n'->'value' AS n, j->'n'->'source' AS source
  FROM dperm.explain('xd_people', :'spec'::jsonb, 'old', 'logistic', dp_options(epsilon => 1), 1000) j;
RESET ROLE;
-- The explains charged nothing: the ledger holds the two releases only.
SELECT count(*) - :ledger_rows AS new_ledger_rows FROM dperm.ledger;

-- A float8[] column: d from the option dimension, as dperm.train's.
CREATE TABLE xd_plain AS SELECT ARRAY[sin(i) / 2, cos(i) / 2] AS features, i % 2 = 0 AS y
  FROM generate_series(1, 100) i;
SELECT j->'d' AS d, j->'n' AS n, j->'split' AS split
  FROM dperm.explain('xd_plain', 'features', 'y', 'logistic', dp_options(epsilon => 1, dimension => 2), 100) j;
\set VERBOSITY terse
SELECT dperm.explain('xd_plain', 'features', 'y', 'logistic', dp_options(epsilon => 1), 100);
\set VERBOSITY default

-- Epsilon as asked in every refusal, with the split and what is left.
-- xd_visits (epsilon 10 per person, 5 rows each) spent 1 on xd_model.
SET ROLE regress_xd_analyst;
-- Asked 25: refused as 25 (count and model together), 9 left.
SELECT dperm.train('xd_visits', :'spec'::jsonb, 'old', 'logistic', dp_options(epsilon => 25, seed => 4));
-- Asked 0.001: refused as 0.001, with its split (count 0.0001, model
-- 0.0009, per row slot 0.00018).
SELECT dperm.train('xd_visits', :'spec'::jsonb, 'old', 'logistic', dp_options(epsilon => 0.001, seed => 4));
-- Asked 0.004: the model's 0.0036 passes, its 0.00072 per row slot does not.
SELECT dperm.train('xd_visits', :'spec'::jsonb, 'old', 'logistic', dp_options(epsilon => 0.004, seed => 4));
-- With 9 left, asking 9.5 is refused saying 9 is left (not "exhausted").
SELECT dperm.train('xd_visits', :'spec'::jsonb, 'old', 'logistic', dp_options(epsilon => 9.5, seed => 4));
RESET ROLE;
SELECT count(*) - :ledger_rows AS new_ledger_rows FROM dperm.ledger;

DROP TABLE xd_plain;
SET ROLE regress_xd_analyst;
SELECT dperm.drop_model('xd_model');
RESET ROLE;
