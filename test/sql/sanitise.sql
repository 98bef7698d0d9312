-- Data handling (docs/design.md section 4): clipping, NaN/inf sanitising, NULL
-- rows, empty input and n = 1. Never a data-dependent error.
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE clean AS SELECT ARRAY[0.6, 0.8]::float8[] AS f, true AS y, 1.0::float8 AS t;
-- Each dirty row is sanitised to the clean row (0.6, 0.8) (or to a clipped
-- version of it), so every model below must equal the clean model.
CREATE TABLE dirty (f float8[], y boolean, t float8);
INSERT INTO dirty VALUES
  (ARRAY[6, 8], true, 1.0),               -- norm 10: clipped to (0.6, 0.8)
  (ARRAY[6e300, 8e300], true, 1.0);       -- huge: no overflow, same direction
CREATE FUNCTION coefs(m dp_model) RETURNS float8[] LANGUAGE sql
  AS $$ SELECT array_agg(coefficient ORDER BY term) FROM dp_coefficients(m) $$;
-- equal up to rounding of the row scaling
CREATE FUNCTION near(a float8[], b float8[]) RETURNS boolean LANGUAGE sql
  AS $$ SELECT cardinality(a) = cardinality(b) AND
               (SELECT max(abs(x - y)) FROM unnest(a, b) u(x, y)) < 1e-12 $$;
SELECT near((SELECT coefs(dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 1, seed => 7)))
          FROM (SELECT * FROM clean UNION ALL SELECT * FROM clean) s)
     , (SELECT coefs(dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 1, seed => 7))) FROM dirty)) AS clipping_matches;

-- NaN becomes 0; infinite entries give the limit of clipping.
SELECT near((SELECT coefs(dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 1, seed => 7)))
          FROM (VALUES (ARRAY[0, 0.5]::float8[], true)) v(f, y))
     , (SELECT coefs(dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 1, seed => 7)))
       FROM (VALUES (ARRAY['NaN', 0.5]::float8[], true)) v(f, y))) AS nan_is_zero;
SELECT near((SELECT coefs(dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 1, seed => 7)))
          FROM (VALUES (ARRAY[sqrt(0.5), -sqrt(0.5), 0]::float8[], true)) v(f, y))
     , (SELECT coefs(dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 1, seed => 7)))
       FROM (VALUES (ARRAY['infinity', '-infinity', 3]::float8[], true)) v(f, y))) AS inf_is_clipping_limit;
-- NULL array elements count as NaN, i.e. 0
SELECT near((SELECT coefs(dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 1, seed => 7)))
          FROM (VALUES (ARRAY[0, 0.5]::float8[], true)) v(f, y))
     , (SELECT coefs(dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 1, seed => 7)))
       FROM (VALUES (ARRAY[NULL, 0.5]::float8[], true)) v(f, y))) AS null_element_is_zero;

-- Huber targets outside [-target_bound, target_bound] (default 1) are
-- clipped to it, never an error: the model equals the one trained on the
-- clipped targets by hand, and a larger target_bound keeps more of them.
-- huber_delta => 100 keeps every residual in the quadratic zone, where the
-- gradient depends on the target (with a small huber_delta the gradient is
-- +-huber_delta for all these targets alike, and the test could not fail).
CREATE TABLE wild_targets AS
  SELECT ARRAY[0.3 * i, 0.1]::float8[] AS f, t, c1, c10
    FROM (VALUES (1, 5::float8, 1::float8, 5::float8), (2, -1e300, -1, -10),
                 (3, 'infinity', 1, 10), (4, 0.5, 0.5, 0.5), (5, 'NaN', 0, 0)) v(i, t, c1, c10);
CREATE FUNCTION huber_coefs(target_bound float8, clipped text) RETURNS float8[] LANGUAGE plpgsql AS $$
DECLARE r float8[];
BEGIN
  EXECUTE format('SELECT coefs(dp_huber(f, %I, dp_options(algorithm => ''output_gd'', epsilon => 1, l2 => 1, '
                 'huber_delta => 100, seed => 7, target_bound => $1))) FROM wild_targets', clipped)
    INTO r USING target_bound;
  RETURN r;
END $$;
-- (target_bound NULL: not given, the default 1)
SELECT near(huber_coefs(NULL, 't'), huber_coefs(NULL, 'c1')) AS clipped_to_default_bound,
       near(huber_coefs(10, 't'), huber_coefs(10, 'c10')) AS clipped_to_given_bound,
       near(huber_coefs(NULL, 't'), huber_coefs(10, 't')) AS bound_ignored;

-- NULL rows (features or label) are kept, never skipped: n counts every row
SELECT (dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 1, seed => 7))::jsonb->>'n')::int AS n
  FROM (VALUES (ARRAY[0.1, 0.2]::float8[], true), (NULL, true), (ARRAY[0.1, 0.2], NULL), (ARRAY[0.3, 0.1], false)) v(f, y);
-- NULL features are the zero vector and a NULL logistic label is negative:
-- the model equals the one trained on those rows written out
SELECT near((SELECT coefs(dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 1, seed => 7)))
          FROM (VALUES (ARRAY[0.1, 0.2]::float8[], true), (NULL, true), (ARRAY[0.1, 0.2], NULL)) v(f, y))
     , (SELECT coefs(dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 1, seed => 7)))
          FROM (VALUES (ARRAY[0.1, 0.2]::float8[], true), (ARRAY[0, 0], true), (ARRAY[0.1, 0.2], false)) v(f, y))) AS nulls_imputed;
-- empty input releases nothing: NULL, and no ledger row
SELECT count(*) AS ledger_before FROM dperm.ledger \gset
SELECT dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1)) IS NULL AS empty_is_null FROM clean WHERE false;
SELECT count(*) = :ledger_before AS nothing_charged FROM dperm.ledger;
-- only-NULL input is a release like any other (every row is kept): n = 1,
-- d = 0 (no features value to take d from, none declared), and charged
SELECT m->>'n' AS n, m->>'d' AS d
  FROM (SELECT dp_huber(f, t, dp_options(algorithm => 'output_gd', epsilon => 1))::jsonb AS m
          FROM (VALUES (NULL::float8[], 1.0::float8)) v(f, t)) s;
SELECT count(*) - :ledger_before AS charged FROM dperm.ledger;
-- n = 1 works: the model is mostly noise, and its sensitivity is
-- 2L/(n mu) (1 - (1 - eta mu)^T) with n = 1, L = sqrt 2, mu = 1 (plus the
-- snapping's rounding term)
SELECT (m::jsonb->>'n')::int AS n, (m::jsonb->'plan'->>'iterations')::int AS iterations,
       abs((m::jsonb->>'sensitivity')::float8 - (m::jsonb->'plan'->>'rounding_inflation')::float8
           - 2 * sqrt(2.0::float8) * (1 - (1 - (m::jsonb->'plan'->>'step_size')::float8) ^ (m::jsonb->'plan'->>'iterations')::int)) < 1e-12 AS sensitivity_ok
  FROM (SELECT dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 1, seed => 7)) m FROM clean) s;
-- zero features, intercept only: a private estimate of the log-odds
SELECT jsonb_array_length(m::jsonb->'coefficients') AS d, m::jsonb->'intercept' IS NOT NULL AS has_intercept
  FROM (SELECT dp_logreg('{}'::float8[], y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 1, seed => 7)) m FROM clean) s;
