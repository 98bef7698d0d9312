-- Missing values at scoring time: a NULL element of the features counts as
-- 0, as training counts it (then the row is clipped as in training), in
-- dp_predict, dp_predict_class, dp_predict_proba and dperm.predict, through
-- each call site's model cache; a NULL array gives NULL; dperm.evaluate (a
-- private release) scores rows with NULL elements without an error.
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE pn_rows AS
  SELECT i, ARRAY[sin(i) / 2, cos(3 * i) / 2, 0.3] AS f, sin(i) + cos(3 * i) > 0 AS y,
         i % 3 AS k, sin(i) AS t
    FROM generate_series(1, 300) i;
CREATE TABLE pn_models AS
  SELECT (SELECT dp_logreg(f, y, dp_options(epsilon => 1, l2 => 0.1, seed => 1)) FROM pn_rows) AS logistic,
         (SELECT dp_huber(f, t, dp_options(epsilon => 1, l2 => 0.1, seed => 1)) FROM pn_rows) AS huber,
         (SELECT dp_softmax(f, k, dp_options(epsilon => 1, l2 => 0.1, classes => 3, seed => 1)) FROM pn_rows) AS softmax;
-- rows with NULL elements, alternating with complete rows (one call site)
CREATE TABLE pn_score AS
  SELECT i, CASE WHEN i % 2 = 0 THEN ARRAY[NULL, f[2], NULL] ELSE f END AS f,
            CASE WHEN i % 2 = 0 THEN ARRAY[0, f[2], 0] ELSE f END AS f0
    FROM pn_rows WHERE i <= 40;
SELECT count(*) AS scored,
       bool_and(dp_predict(m.logistic, s.f) = dp_predict(m.logistic, s.f0)) AS logistic_as_zero,
       bool_and(dp_predict(m.huber, s.f) = dp_predict(m.huber, s.f0)) AS huber_as_zero,
       bool_and(dp_predict_class(m.logistic, s.f) = dp_predict_class(m.logistic, s.f0)) AS class_as_zero,
       bool_and(dp_predict_proba(m.softmax, s.f) = dp_predict_proba(m.softmax, s.f0)) AS proba_as_zero,
       bool_and(dp_predict_class(m.softmax, s.f) = dp_predict_class(m.softmax, s.f0)) AS softmax_class_as_zero
  FROM (SELECT * FROM pn_score ORDER BY i) s, pn_models m;
-- NULL elements do change the prediction (not ignored or NaN)
SELECT dp_predict(logistic, ARRAY[NULL, NULL, NULL]::float8[]) = dp_predict(logistic, ARRAY[0, 0, 0]::float8[]) AS all_null_as_zero,
       dp_predict(logistic, ARRAY[NULL, 0.1, 0.3]) <> dp_predict(logistic, ARRAY[0.4, 0.1, 0.3]) AS differs,
       dp_predict(logistic, ARRAY[NULL, 0.1, 0.3]) BETWEEN 0 AND 1 AS probability
  FROM pn_models;
-- a NULL array is NULL
SELECT dp_predict(logistic, NULL) IS NULL AS predict, dp_predict_class(logistic, NULL) IS NULL AS class,
       dp_predict_proba(softmax, NULL) IS NULL AS proba
  FROM pn_models;
-- named models: the same rule
SELECT dperm.train_model('pn_m', 'pn_rows', 'f', 'y', 'logistic',
                         dp_options(epsilon => 1, l2 => 0.1, seed => 1)) AS version;
SELECT bool_and(dperm.predict('pn_m', s.f) = dperm.predict('pn_m', s.f0)) AS named_as_zero,
       bool_and(dperm.predict('pn_m', s.f) = dp_predict((dperm.model('pn_m')).model, s.f0)) AS same_as_model
  FROM (SELECT * FROM pn_score ORDER BY i) s;
SELECT dperm.predict('pn_m', NULL::float8[]) IS NULL AS named_null;
-- dperm.evaluate reads rows with NULL elements without an error
CREATE TABLE pn_eval AS
  SELECT i, CASE WHEN i % 5 = 0 THEN ARRAY[NULL, f[2], f[3]] ELSE f END AS f, y FROM pn_rows;
SELECT (dperm.evaluate('pn_m', 'pn_eval', 'f', 'y', '{"epsilon": 1}'))->>'n' AS n;
