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
DROP TABLE pc_rows, pc_models;
DROP FUNCTION pc_reference(dp_model, float8[]);
