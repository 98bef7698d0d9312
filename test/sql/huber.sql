-- dp_huber: private Huber regression.
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;

-- target = 0.5 + 0.3 x1 - 0.2 x2 + small deterministic wobble
CREATE TABLE hb AS
  SELECT i, ARRAY[0.7 * sin(i), 0.7 * cos(7 * i)] AS features,
         0.5 + 0.3 * sin(i) - 0.2 * cos(7 * i) + 0.01 * sin(13 * i) AS target  -- = 0.5 + (3/7) x1 - (2/7) x2 + wobble
    FROM generate_series(1, 50000) i;
CREATE TABLE hb_model AS
  SELECT dp_huber(features, target, dp_options(epsilon => 1, delta => 1e-5, l2 => 0.01, seed => 1)) AS m FROM hb;
SELECT m::jsonb->>'loss' AS loss, m::jsonb->>'mechanism' AS mechanism,
       m::jsonb->'plan'->>'L' AS l, m::jsonb->'plan'->>'beta' AS beta
  FROM hb_model;
-- the fit is close (l2 shrinks a little): mean absolute error against the
-- target, well below the target's own spread
SELECT avg(abs(dp_predict(m, features) - target)) < 0.05 AS fits,
       avg(abs(dp_predict(m, features) - target)) < 0.3 * (SELECT stddev(target) FROM hb) AS beats_mean
  FROM hb, hb_model;
-- dp_predict is <w, x> + b for Huber
SELECT abs(dp_predict(m, ARRAY[0.1, 0.2]) -
           (SELECT sum(coefficient * CASE term WHEN 'intercept' THEN 1 WHEN 'x1' THEN 0.1 ELSE 0.2 END)
              FROM dp_coefficients(m))) < 1e-12 AS predict_is_linear
  FROM hb_model;
-- huber_delta sets L = huber_delta R, so a smaller huber_delta means less noise
SELECT (SELECT (dp_explain('huber', 50000, 2, dp_options(epsilon => 1, l2 => 0.01, huber_delta => 0.1))->>'noise_scale')::float8)
     < (SELECT (dp_explain('huber', 50000, 2, dp_options(epsilon => 1, l2 => 0.01, huber_delta => 1))->>'noise_scale')::float8) AS smaller_delta_less_noise;
-- The default huber_delta is 0.1 target_bound (B, the public bound on
-- |target|, default 1); a given huber_delta wins. L = huber_delta R with
-- R = sqrt(feature_bound^2 + 1) = sqrt 2 either way.
SELECT j->>'target_bound' AS target_bound, j->>'huber_delta' AS huber_delta,
       j->>'huber_delta_rule' AS rule, abs((j->>'L')::float8 - (j->>'huber_delta')::float8 * sqrt(2.0)) < 1e-12 AS l_ok
  FROM (VALUES (1, dp_explain('huber', 1000, 3, dp_options(epsilon => 1))),
               (2, dp_explain('huber', 1000, 3, dp_options(epsilon => 1, target_bound => 5))),
               (3, dp_explain('huber', 1000, 3, dp_options(epsilon => 1, target_bound => 5, huber_delta => 2)))) v(k, j)
 ORDER BY k;
-- the model stores both, in its preprocessing and its plan
SELECT m::jsonb->'preprocessing'->>'huber_delta' AS huber_delta,
       m::jsonb->'preprocessing'->>'target_bound' AS target_bound,
       m::jsonb->'plan'->>'huber_delta' AS plan_huber_delta
  FROM hb_model;
-- outliers in the target do not break anything: the Huber gradient is bounded
INSERT INTO hb VALUES (0, ARRAY[0.5, 0.5], 1e300), (-1, ARRAY[0.5, 0.5], '-infinity'), (-2, ARRAY[0.5, 0.5], 'NaN');
SELECT (m::jsonb->'coefficients'->>0)::float8 BETWEEN -10 AND 10 AS finite_fit
  FROM (SELECT dp_huber(features, target, dp_options(epsilon => 1, delta => 1e-5, l2 => 0.01, seed => 1)) AS m FROM hb) s;
