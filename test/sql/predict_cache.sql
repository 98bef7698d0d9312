-- Scoring decodes a model once per call site and stored value, not once
-- per row: a column with several models (here two, alternating row by row,
-- and a third stored out of line) must still score every row with its own
-- model. The reference is the model's coefficients applied in SQL.
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE pc_rows AS SELECT i, ARRAY[0.3 * cos(i), 0.3 * sin(i)] AS f, i % 3 = 0 AS y
  FROM generate_series(1, 200) i;
CREATE TABLE pc_models (k int, m dp_model);
INSERT INTO pc_models SELECT 1, dp_logreg(f, y, dp_options(epsilon => 1, l2 => 1, seed => 1)) FROM pc_rows;
INSERT INTO pc_models SELECT 2, dp_logreg(f, y, dp_options(epsilon => 1, l2 => 1, seed => 2)) FROM pc_rows;
ALTER TABLE pc_models ALTER COLUMN m SET STORAGE EXTERNAL;
INSERT INTO pc_models SELECT 3, dp_logreg(f, y, dp_options(epsilon => 1, l2 => 1, seed => 3)) FROM pc_rows;
-- The reference: 1 / (1 + exp(-(b + w . x))) with x inside the unit ball.
CREATE FUNCTION pc_reference(m dp_model, f float8[]) RETURNS float8 LANGUAGE sql AS $$
  SELECT 1 / (1 + exp(-(coalesce(max(c.coefficient) FILTER (WHERE c.term = 'intercept'), 0)
                        + coalesce(sum(c.coefficient * f[substr(c.term, 2)::int]) FILTER (WHERE c.term <> 'intercept'), 0))))
    FROM dp_coefficients(m) c $$;
SELECT count(DISTINCT m::text) AS models,
       count(*) AS scored,
       max(abs(dp_predict(m, f) - pc_reference(m, f))) < 1e-12 AS same_as_reference,
       max(abs((dp_predict_proba(m, f))[2] - dp_predict(m, f))) < 1e-15 AS proba_agrees,
       bool_and(dp_predict_class(m, f) = (dp_predict(m, f) > 0.5)::int) AS class_agrees
  FROM (SELECT r.i, r.f, p.m FROM pc_rows r JOIN pc_models p ON p.k = 1 + r.i % 3 ORDER BY r.i) s;
-- Two models given as a VALUES list, each scoring every row (all of one
-- model's rows, then all of the other's, through the same call sites):
-- each model's own predictions, not the first one's.
SELECT k, count(*) AS scored,
       max(abs(dp_predict(m, f) - pc_reference(m, f))) < 1e-12 AS same_as_reference,
       max(abs((dp_predict_proba(m, f))[2] - pc_reference(m, f))) < 1e-12 AS proba_same,
       bool_and(dp_predict_class(m, f) = (pc_reference(m, f) > 0.5)::int) AS class_same
  FROM (SELECT v.k, v.m, r.f
          FROM (VALUES (1, (SELECT m FROM pc_models WHERE k = 1)),
                       (2, (SELECT m FROM pc_models WHERE k = 2))) v(k, m)
          CROSS JOIN pc_rows r ORDER BY v.k, r.i) s
 GROUP BY k ORDER BY k;
-- the two models do differ on these rows
SELECT count(*) FILTER (WHERE abs(dp_predict(a.m, r.f) - dp_predict(b.m, r.f)) > 1e-6) > 100 AS models_differ
  FROM pc_rows r, pc_models a, pc_models b WHERE a.k = 1 AND b.k = 2;

-- dperm.predict resolves a name once per statement: a new version trained
-- in between is the next statement's (and, in a PL/pgSQL loop that keeps
-- its call sites from statement to statement, the next iteration's).
SELECT dperm.train_model('pc_m', 'pc_rows', 'f', 'y', 'logistic',
                         dp_options(epsilon => 1, l2 => 1, seed => 1)) AS version;
CREATE FUNCTION pc_scores(version int) RETURNS float8 LANGUAGE sql AS $$
  SELECT sum(dp_predict((dperm.model('pc_m', version)).model, f)) FROM pc_rows $$;
SELECT sum(dperm.predict('pc_m', f)) = pc_scores(1) AS version_1 FROM pc_rows;
SELECT dperm.train_model('pc_m', 'pc_rows', 'f', 'y', 'logistic',
                         dp_options(epsilon => 1, l2 => 0.5, seed => 2)) AS version;
SELECT sum(dperm.predict('pc_m', f)) = pc_scores(2) AS version_2,
       sum(dperm.predict('pc_m', f)) <> pc_scores(1) AS not_version_1
  FROM pc_rows;
-- both versions pinned in one statement, row by row alternately
SELECT sum(dperm.predict('pc_m', f, 1 + i % 2)) FILTER (WHERE i % 2 = 0)
         = (SELECT sum(dp_predict((dperm.model('pc_m', 1)).model, f)) FROM pc_rows WHERE i % 2 = 0) AS pinned_1,
       sum(dperm.predict('pc_m', f, 1 + i % 2)) FILTER (WHERE i % 2 = 1)
         = (SELECT sum(dp_predict((dperm.model('pc_m', 2)).model, f)) FROM pc_rows WHERE i % 2 = 1) AS pinned_2
  FROM (SELECT * FROM pc_rows ORDER BY i) r;
-- one transaction, one call site: version 3 is seen as soon as it exists
DO $$
DECLARE
  before float8;
  after float8;
BEGIN
  FOR round IN 1..2 LOOP
    IF round = 2 THEN
      PERFORM dperm.train_model('pc_m', 'pc_rows', 'f', 'y', 'logistic',
                                dp_options(epsilon => 1, l2 => 0.25, seed => 3));
    END IF;
    before := dperm.predict('pc_m', ARRAY[0.3, 0.1]);
    after := dp_predict((dperm.model('pc_m')).model, ARRAY[0.3, 0.1]);
    RAISE NOTICE 'round %: version %, predict % its model', round, (dperm.model('pc_m')).version,
      CASE WHEN before = after THEN 'uses' ELSE 'does not use' END;
  END LOOP;
END $$;
-- a role that may not see the model gets dperm.model's error, even from a
-- call site that resolved the name for another role in the same
-- transaction and snapshot (SET ROLE changes neither)
CREATE ROLE regress_pc_other;
\set VERBOSITY terse
DO $$
DECLARE
  p float8;
BEGIN
  FOR round IN 1..2 LOOP
    IF round = 2 THEN
      SET ROLE regress_pc_other;
    END IF;
    p := dperm.predict('pc_m', ARRAY[0.3, 0.1]);
    RAISE NOTICE 'round %: predicted', round;
  END LOOP;
END $$;
\set VERBOSITY default
RESET ROLE;
DROP ROLE regress_pc_other;
-- unknown names, versions and NULLs behave as before
SELECT dperm.predict('pc_m', NULL::float8[]) IS NULL AS null_features;
SELECT dperm.predict('pc_m', ARRAY[0.3, 0.1], NULL) = dp_predict((dperm.model('pc_m', 3)).model, ARRAY[0.3, 0.1]) AS null_version_is_latest;
\set VERBOSITY sqlstate
SELECT dperm.predict('pc_nope', ARRAY[0.3, 0.1]);
SELECT dperm.predict('pc_m', ARRAY[0.3, 0.1], 9);
SELECT dperm.predict(NULL, ARRAY[0.3, 0.1]);
SELECT dperm.predict('pc_m', ARRAY[0.3]);
\set VERBOSITY default
SELECT dperm.drop_model('pc_m');
DROP FUNCTION pc_scores(int);
DROP TABLE pc_rows, pc_models;
DROP FUNCTION pc_reference(dp_model, float8[]);
