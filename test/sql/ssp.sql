-- algorithm => 'ssp': one-pass sufficient-statistics perturbation for
-- logistic regression (src/core/algorithms/ssp.cpp). The plan is one pass
-- with one Gaussian over the moments; the model learns; what it cannot do
-- is refused before any charge.
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
SET extra_float_digits = 0;

-- The plan from public inputs: one pass, n gradient evaluations, and the
-- sensitivity sqrt(2 gamma^2 L^2 + 2 R^4 + gamma^4 L^4/(2 R^4)) = sqrt(18) at R = L = gamma = sqrt 2
-- (feature_bound 1 with the intercept) plus a rounding term below 2^-9 of it;
-- sigma is the analytic Gaussian's for it (2^-20 dyadic rounding).
-- (intercept => 'fitted': no offset stage, so the mechanism has all of epsilon.)
WITH p AS (SELECT dp_explain('logistic', 45211, 42,
             dp_options(algorithm => 'ssp', epsilon => 1, delta => 1e-6, intercept => 'fitted')) j)
SELECT j->>'algorithm' AS algorithm, (j->>'iterations')::int AS iterations,
       (j->>'gradient_evaluations')::bigint AS gradient_evaluations,
       (j->>'sensitivity')::float8 >= sqrt(18) AS sensitivity_at_least_formula,
       (j->>'sensitivity')::float8 <= sqrt(18) * (1 + 1.0 / 512) AS rounding_small,
       (j->>'moment_coordinates')::int AS moments,
       abs((j->>'noise_scale')::float8 / dperm.gaussian_sigma(1, 1e-6, (j->>'sensitivity')::float8) - 1) < 1e-5
         AS analytic_sigma
  FROM p;

-- A separable-ish set: label = x1 > x2, rows in the unit ball. At epsilon 1
-- the one-pass model predicts well above the 0.5 of chance.
CREATE TABLE ssp_rows AS
  SELECT i, ARRAY[0.6 * sin(i), 0.6 * cos(3 * i)] AS features, sin(i) > cos(3 * i) AS label
    FROM generate_series(1, 4000) i;
CREATE TABLE ssp_models AS
  SELECT dp_logreg(features, label, dp_options(algorithm => 'ssp', epsilon => 1, delta => 1e-6, seed => 1)) AS m
    FROM ssp_rows;
SELECT m::jsonb->>'algorithm' AS algorithm, jsonb_array_length(m::jsonb->'coefficients') AS coefficients
  FROM ssp_models;
SELECT avg(((dp_predict(m, features) > 0.5) = label)::int) > 0.8 AS accurate
  FROM ssp_rows, ssp_models;

-- Refused while planning (public inputs), before any charge: Huber and
-- softmax, delta = 0, l1, and streaming (it is not a pass-sum method).
SELECT dp_explain('huber', 1000, 3, dp_options(algorithm => 'ssp', epsilon => 1, delta => 1e-6));
SELECT dp_explain('logistic', 1000, 3, dp_options(algorithm => 'ssp', epsilon => 1));
SELECT dp_explain('logistic', 1000, 3, dp_options(algorithm => 'ssp', epsilon => 1, delta => 1e-6, l1 => 0.1));
SELECT dp_explain('logistic', 1000, 600, dp_options(algorithm => 'ssp', epsilon => 1, delta => 1e-6));
SELECT dperm.train('ssp_rows', 'features', 'label', 'logistic',
                   dp_options(algorithm => 'ssp', epsilon => 1, delta => 1e-6, seed => 1), mode => 'streaming');
