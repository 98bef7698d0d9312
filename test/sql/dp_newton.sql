-- algorithm => 'dp_newton': K private Newton passes for logistic regression
-- (src/core/algorithms/dp_newton.cpp). The plan is K passes, each one
-- Gaussian over the gradient and Hessian sums; the model learns and is
-- charged once; what it cannot do is refused before any charge.
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
SET extra_float_digits = 0;

-- The plan from public inputs: 6 passes, 6 n gradient evaluations, one
-- pass's sensitivity sqrt(4 gamma^2 L^2 + beta^2) with gamma = (beta/L)
-- sqrt(4.5) at R = L = sqrt 2, beta = 1/2 (feature_bound 1 with the
-- intercept): sqrt(4 * 4.5 * 0.25 + 0.25) = sqrt(4.75), plus a rounding term
-- below 2^-9 of it. Pass k's sigma is sqrt(2)^(5 - k) times the last's
-- (noise_scale), so the passes compose as one Gaussian of ratio
-- sensitivity/noise_scale sqrt(2 - 2^-5), which is 1 over the analytic
-- Gaussian's sigma per unit (to the roundings, 2e-3).
-- (intercept => 'fitted': no offset stage, so the mechanism has all of epsilon.)
WITH p AS (SELECT dp_explain('logistic', 45211, 42,
             dp_options(algorithm => 'dp_newton', epsilon => 1, delta => 1e-6, intercept => 'fitted')) j)
SELECT j->>'algorithm' AS algorithm, (j->>'iterations')::int AS passes,
       (j->>'gradient_evaluations')::bigint AS gradient_evaluations,
       (j->>'sensitivity')::float8 >= sqrt(4.75) AS sensitivity_at_least_formula,
       (j->>'sensitivity')::float8 <= sqrt(4.75) * (1 + 1.0 / 512) AS rounding_small,
       (j->>'moment_coordinates')::int AS sums_per_pass,
       abs((j->>'sensitivity')::float8 / (j->>'noise_scale')::float8 * sqrt(2 - 2 ^ -5)
           * dperm.gaussian_sigma(1, 1e-6, 1) - 1) < 2e-3 AS composes_to_the_analytic_gaussian
  FROM p;
-- `iterations` sets the passes.
SELECT (dp_explain('logistic', 1000, 3, dp_options(algorithm => 'dp_newton', epsilon => 1, delta => 1e-6,
                                                   iterations => 8))->>'iterations')::int AS passes;

-- label = x1 > x2, rows in the unit ball: the model predicts well above
-- chance, and the release is charged once, as dp_newton.
CREATE TABLE newton_rows AS
  SELECT i, ARRAY[0.6 * sin(i), 0.6 * cos(3 * i)] AS features, sin(i) > cos(3 * i) AS label
    FROM generate_series(1, 4000) i;
SELECT dperm.set_budget('newton_rows', 5, 1e-5);
CREATE TABLE newton_models AS
  SELECT dp_logreg(features, label, dp_options(algorithm => 'dp_newton', epsilon => 1, delta => 1e-6, seed => 1, dimension => 2)) AS m
    FROM newton_rows;
SELECT m::jsonb->>'algorithm' AS algorithm, jsonb_array_length(m::jsonb->'coefficients') AS coefficients
  FROM newton_models;
SELECT avg(((dp_predict(m, features) > 0.5) = label)::int) > 0.9 AS accurate
  FROM newton_rows, newton_models;
SELECT algorithm, epsilon, delta FROM dperm.ledger WHERE 'newton_rows'::regclass = ANY (relations);

-- Streaming: each pass is one curvature pass of the per-pass aggregate;
-- the seeded model equals the in-memory one (intercept => 'fitted': no
-- offset stage in streaming mode), in K = 6 passes, charged once.
SELECT count(*) AS ledger_before FROM dperm.ledger \gset
SELECT m_str->>'algorithm' AS algorithm, m_str->'plan'->>'passes' AS passes,
       m_str->'coefficients' = m_mem->'coefficients' AND m_str->'intercept' = m_mem->'intercept' AS same_model
  FROM (SELECT dperm.train('newton_rows', 'features', 'label', 'logistic',
                           dp_options(algorithm => 'dp_newton', epsilon => 1, delta => 1e-6, seed => 2,
                                      intercept => 'fitted', dimension => 2), mode => 'streaming')::jsonb AS m_str,
               dperm.train('newton_rows', 'features', 'label', 'logistic',
                           dp_options(algorithm => 'dp_newton', epsilon => 1, delta => 1e-6, seed => 2,
                                      intercept => 'fitted', dimension => 2), mode => 'in_memory')::jsonb AS m_mem) r;
SELECT count(*) - :ledger_before AS new_ledger_rows FROM dperm.ledger;

-- Refused while planning (public inputs), before any charge: Huber and
-- softmax, delta = 0, l1 and too many coordinates.
SELECT dp_explain('huber', 1000, 3, dp_options(algorithm => 'dp_newton', epsilon => 1, delta => 1e-6));
SELECT dp_explain('logistic', 1000, 3, dp_options(algorithm => 'dp_newton', epsilon => 1));
SELECT dp_explain('logistic', 1000, 3, dp_options(algorithm => 'dp_newton', epsilon => 1, delta => 1e-6, l1 => 0.1));
SELECT dp_explain('logistic', 1000, 600, dp_options(algorithm => 'dp_newton', epsilon => 1, delta => 1e-6));
SELECT count(*) AS ledger_rows FROM dperm.ledger WHERE 'newton_rows'::regclass = ANY (relations);
