-- dp_explain: the plan from public inputs only, checked against the formulas
-- of output_gd.cpp (tight) and of Zhang et al. 2017 (paper).


-- BANK-sized logistic, strongly convex (l2 = 0.1), no intercept: R = 1,
-- L = 1, beta = 1/4, eta = 2/(beta + 2 mu) = 2/0.45.
WITH p AS (SELECT dp_explain('logistic', 45211, 42,
             dp_options(algorithm => 'output_gd', epsilon => 1, delta => 1e-3, l2 => 0.1, fit_intercept => false)) j)
SELECT j->>'algorithm' AS algorithm, j->>'noise' AS noise, (j->>'L')::float8 AS l,
       (j->>'beta')::float8 AS beta, (j->>'dim')::int AS dim,
       abs((j->>'step_size')::float8 - 2 / 0.45) < 1e-12 AS step_ok,
       -- Delta_T = 2L/(n mu) (1 - (1 - eta mu)^T), before the snapping's
       -- rounding term (checked below)
       abs(((j->>'sensitivity')::float8 - (j->>'rounding_inflation')::float8)
           - 2.0 / (45211 * 0.1) * (1 - (1 - 2 / 0.45 * 0.1) ^ (j->>'iterations')::int)) < 1e-15 AS sensitivity_ok,
       ((j->>'sensitivity')::float8 - (j->>'rounding_inflation')::float8) < 2.0 / (45211 * 0.1) AS below_bound,
       -- noise_scale / Delta: the discrete Gaussian's RDP-calibrated sigma for
       -- (1, 1e-3) and sensitivity 1 (the analytic Gaussian's would be 2.5747)
       round(((j->>'noise_scale')::float8 / (j->>'sensitivity')::float8)::numeric, 4) AS sigma_per_delta,
       (j->>'iterations')::int AS iterations
  FROM p;

-- Snapping (noise.hpp): the release is grid * (round(w/grid) + Z); the grid is
-- a power of two at most Delta/(2^10 sqrt(dim)), and the sensitivity grows by
-- the rounding term sqrt(dim) grid (each coordinate of two rounded vectors
-- moves by at most one grid step more than the vectors do); rounding_inflation
-- also holds the exact sums' own slack, sum_inflation (exact_sum.hpp).
WITH p AS (SELECT dp_explain('logistic', 45211, 42,
             dp_options(algorithm => 'output_gd', epsilon => 1, delta => 1e-3, l2 => 0.1, fit_intercept => false)) j)
SELECT log(2.0, (j->>'grid')::numeric) = round(log(2.0, (j->>'grid')::numeric)) AS grid_power_of_two,
       (j->>'grid')::float8 <= ((j->>'sensitivity')::float8 - (j->>'rounding_inflation')::float8) / (1024 * sqrt(42.0)) AS grid_fine,
       abs((j->>'rounding_inflation')::float8 - (j->>'sum_inflation')::float8 - sqrt(42.0) * (j->>'grid')::float8) < 1e-18 AS inflation_ok,
       (j->>'noise_scale')::float8 / (j->>'grid')::float8 >= 1024 AS sigma_many_steps,
       j->>'sampler' AS sampler
  FROM p;

-- Lemma 3's sensitivity under accountant => 'paper': 5 L (mu + beta_f)/(n mu beta_f),
-- beta_f = beta + mu; the tight one is several times smaller.
WITH t AS (SELECT dp_explain('logistic', 45211, 42, dp_options(algorithm => 'output_gd', epsilon => 1, delta => 1e-3, l2 => 0.1, fit_intercept => false)) j),
     p AS (SELECT dp_explain('logistic', 45211, 42, dp_options(algorithm => 'output_gd', epsilon => 1, delta => 1e-3, l2 => 0.1, fit_intercept => false, accountant => 'paper')) j)
SELECT abs((p.j->>'sensitivity')::float8 - (p.j->>'rounding_inflation')::float8 - 5 * 1 * (0.1 + 0.35) / (45211 * 0.1 * 0.35)) < 1e-15 AS lemma3_ok,
       abs((p.j->>'step_size')::float8 - 1 / (0.1 + 0.35)) < 1e-12 AS paper_step_ok,
       round(((p.j->>'sensitivity')::float8 / (t.j->>'sensitivity')::float8)::numeric, 2) AS paper_over_tight,
       -- Algorithm 1 line 7: sigma = sqrt(2 log(2/delta)) Delta / eps
       abs((p.j->>'noise_scale')::float8 - sqrt(2 * ln(2 / 1e-3)) * (p.j->>'sensitivity')::float8) < 1e-15 AS line7_ok
  FROM t, p;

-- Convex (l2 = 0), intercept: R = sqrt(2), eta = 1/beta = 2, Delta = 2 eta L T / n.
WITH p AS (SELECT dp_explain('logistic', 10000, 5, dp_options(algorithm => 'output_gd', epsilon => 0.5)) j)
SELECT abs((j->>'R')::float8 - sqrt(2.0)) < 1e-12 AS r_ok, (j->>'dim')::int AS dim,
       abs((j->>'step_size')::float8 - 2) < 1e-12 AS step_ok,
       abs(((j->>'sensitivity')::float8 - (j->>'rounding_inflation')::float8) - 2 * 2 * sqrt(2.0) * (j->>'iterations')::int / 10000) < 1e-15 AS sensitivity_ok,
       j->>'noise' AS noise,
       -- per-coordinate discrete Laplace at the L1 sensitivity sqrt(dim) Delta
       -- at the mechanism's share of epsilon = 0.5 (the offset stage takes
       -- epsilon0 = min(0.05, 4/sqrt(10000)) = 0.04)
       abs((j->>'noise_scale')::float8 - sqrt(6.0) * (j->>'sensitivity')::float8 / (j->'offset'->>'mechanism_epsilon')::float8) < 1e-15 AS scale_ok,
       -- E||z||^2 <= 2 dim scale^2 for the discrete Laplace
       abs((j->>'expected_noise_norm_sq')::float8 - 2 * 6 * ((j->>'noise_scale')::float8) ^ 2) < 1e-12 AS moment_ok
  FROM p;

-- Lemma 2 under 'paper': 3 L T eta / n with eta = 1/beta.
WITH p AS (SELECT dp_explain('logistic', 10000, 5, dp_options(algorithm => 'output_gd', epsilon => 0.5, accountant => 'paper')) j)
SELECT abs(((j->>'sensitivity')::float8 - (j->>'rounding_inflation')::float8) - 3 * sqrt(2.0) * (j->>'iterations')::int * 2 / 10000) < 1e-15 AS lemma2_ok
  FROM p;

-- Huber: L = huber_delta R, beta = R^2.
WITH p AS (SELECT dp_explain('huber', 6497, 12, dp_options(algorithm => 'output_gd', epsilon => 1, delta => 1e-3, l2 => 0.5, huber_delta => 0.5, feature_bound => 2)) j)
SELECT abs((j->>'R')::float8 - sqrt(5.0)) < 1e-12 AS r_ok,
       abs((j->>'L')::float8 - 0.5 * sqrt(5.0)) < 1e-12 AS l_ok,
       abs((j->>'beta')::float8 - 5) < 1e-12 AS beta_ok,
       abs((j->>'step_size')::float8 - 2 / (5 + 2 * 0.5)) < 1e-12 AS step_ok
  FROM p;

-- Given iterations and step size are used, and the sensitivity follows them.
WITH p AS (SELECT dp_explain('logistic', 1000, 3, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 0.1, iterations => 7, step_size => 0.5)) j)
SELECT (j->>'iterations')::int AS iterations, (j->>'step_size')::float8 AS step,
       abs(((j->>'sensitivity')::float8 - (j->>'rounding_inflation')::float8) - 2 * sqrt(2.0) / (1000 * 0.1) * (1 - (1 - 0.5 * 0.1) ^ 7)) < 1e-15 AS sensitivity_ok
  FROM p;

-- errors
SELECT dp_explain('logistic', 1000, 3, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 0.1, step_size => 10));
SELECT dp_explain('logistic', 1000, 3, dp_options(algorithm => 'output_gd', epsilon => 1, step_size => 4.5));
SELECT dp_explain('logistic', 1000, 3, dp_options(algorithm => 'output_gd', epsilon => 1, accountant => 'paper', step_size => 2.5));
SELECT dp_explain('logistic', 1000, 3, dp_options(algorithm => 'output_gd', epsilon => 1, l1 => 0.1));
SELECT dp_explain('logistic', 1000, 3, dp_options(algorithm => 'output_gd', epsilon => 1, radius => 3));
SELECT dp_explain('logistic', 1000, 3, dp_options(algorithm => 'output_gd', epsilon => 1, batch_size => 3));
SELECT dp_explain('logistic', 1000, 3, dp_options(algorithm => 'output_gd', epsilon => 1, ls_sigma => 1));
SELECT dp_explain('softmax', 1000, 3, dp_options(algorithm => 'output_gd', epsilon => 1));
SELECT dp_explain('logistic', 0, 3, dp_options(algorithm => 'output_gd', epsilon => 1));
SELECT dp_explain('logistic', 10, -1, dp_options(algorithm => 'output_gd', epsilon => 1));
SELECT dp_explain('logistic', 10, 0, dp_options(algorithm => 'output_gd', epsilon => 1, fit_intercept => false));
SELECT dp_explain('logistic', 1, 3, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 1, accountant => 'paper'));

-- The accounting section: epsilon at the requested delta, the noise
-- multiplier sigma / Delta, and the RDP curve. A snapped release (discrete
-- Gaussian) is calibrated by its RDP curve alpha / (2 z^2) alone; the
-- analytic Gaussian and PLD figures, exact for the continuous law only, are
-- not quoted, and z is above the analytic Gaussian's.
-- (the mechanism alone: intercept => 'fitted', no offset stage)
WITH p AS (SELECT dp_explain('logistic', 45211, 42, dp_options(algorithm => 'output_gd', epsilon => 1, delta => 1e-6, l2 => 0.1, intercept => 'fitted')) j)
SELECT j->'accounting'->'epsilon_at_delta' ? 'analytic' AS analytic_quoted,
       j->'accounting'->'epsilon_at_delta' ? 'pld' AS pld_quoted,
       (j->'accounting'->'epsilon_at_delta'->>'rdp')::float8 BETWEEN 0.999 AND 1 + 1e-12 AS rdp_calibrated,
       abs((j->'accounting'->>'noise_multiplier')::float8
           - (j->>'noise_scale')::float8 / (j->>'sensitivity')::float8) < 1e-12 AS multiplier_ok,
       (j->'accounting'->>'noise_multiplier')::float8 > dperm.gaussian_sigma(1, 1e-6) AS above_analytic,
       jsonb_array_length(j->'accounting'->'rdp') = cardinality(dperm.rdp_orders()) AS curve_on_grid,
       abs((j->'accounting'->'rdp'->>3)::float8 - 2 / (2 * (j->'accounting'->>'noise_multiplier')::float8 ^ 2)) < 1e-12 AS curve_ok
  FROM p;
-- the paper's noise over-protects: its epsilon is below the requested one
WITH p AS (SELECT dp_explain('logistic', 45211, 42, dp_options(algorithm => 'output_gd', epsilon => 1, delta => 1e-6, l2 => 0.1, accountant => 'paper')) j)
SELECT (j->'accounting'->'epsilon_at_delta'->>'rdp')::float8 < 0.9 AS paper_over_protects
  FROM p;
-- pure epsilon-DP: min(eps, alpha eps^2 / 2) on the grid, summed over the
-- offset stage (epsilon0 = min(0.1, 4/sqrt(1000)) = 0.1) and the algorithm
-- (0.9; no decision stage at n epsilon/20 = 50 < 400): 1.25 (0.9^2 + 0.1^2) / 2
-- = 0.5125 at alpha = 1.25
SELECT j->'accounting'->'epsilon_at_delta' AS epsilon_at_delta, j->'accounting'->'rdp'->0 AS rdp_at_1_25
  FROM (SELECT dp_explain('logistic', 1000, 3, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 0.1)) j) p;

-- Without `algorithm`, dperm picks by regulariser and delta (docs/user-guide.md,
-- "Choosing an algorithm"), and the plan says why; a named one is kept.
-- (l2 = 0.1 at n = 1000: n l2 = 100, objective perturbation, at delta = 0
-- with the Gamma-norm b.)
SELECT l2, l1, delta, j->>'algorithm' AS algorithm, j->>'algorithm_rule' LIKE 'default for logistic with %' AS says_why
  FROM (VALUES (0.1, 0, 1e-3), (0.1, 0, 0), (0, 0, 1e-3), (0, 0, 0), (0.1, 0.01, 1e-3)) v(l2, l1, delta),
       LATERAL (SELECT dp_explain('logistic', 1000, 3, dp_options(epsilon => 1, delta => delta, l2 => l2, l1 => l1)) j) p;
SELECT dp_explain('logistic', 1000, 3, dp_options(epsilon => 1, delta => 1e-3, algorithm => 'dp_sgd')) ? 'algorithm_rule' AS named_has_rule;

-- Without `l2` (and `algorithm`), DefaultL2 (docs/user-guide.md, "Choosing l2") sets l2
-- from n, d, epsilon and delta, and the plan shows it and how; `l2 => 0`
-- asks for none. BANK's shape, n = 31648, d = 42: at delta > 0
-- sqrt(42)/31648 = 2.048e-4 (objective); at epsilon = 0.1 that would be
-- 2.048e-3 > 1e-3, so 0 (dp_gd); at delta = 0 0.2 * 42/31648 = 2.654e-4
-- (objective); at delta = 0 and epsilon = 0.1, n epsilon = 3164.8 < 100 d
-- = 4200: the window rule 4.5 sqrt(42)/3164.8 = 9.2149e-3 (objective); at
-- epsilon = 0.004, n epsilon = 126.6 < 5 d = 210: bolton's
-- min(150/126.6, 1) = 1, n l2 = 31648 above objective's cap (bolton); at
-- epsilon = 0.2, n epsilon = 6329.6 = 150.7 d, between 100 d and 300 d: the
-- blend, t = ln(6329.6/4200)/ln 3 = 0.373337, (4.5 sqrt(42))^(1 - t)
-- (0.2 * 42)^t = 18.32428, l2 = 18.32428/6329.6 = 2.8950e-3 (objective).
-- The window and the blend fit the intercept as a coordinate (no stage 0).
SELECT eps, delta, given_l2, j->>'algorithm' AS algorithm, round((j->>'mu')::numeric, 7) AS mu,
       round((j->>'l2')::numeric, 7) AS l2, left(j->>'l2_rule', 48) AS l2_rule,
       substring(j->>'l2_rule' from '\((objective|bolton|dp_gd)') AS rule_for,
       j->'options_given' ? 'l2' AS l2_given, j->'offset' IS NOT NULL AS stage0
  FROM (VALUES (1, 1e-6, NULL), (1, 1e-6, 0), (0.1, 1e-6, NULL), (1, 0, NULL), (1, 0, 0), (0.1, 0, NULL),
               (0.004, 0, NULL), (0.2, 0, NULL))
         v(eps, delta, given_l2),
       LATERAL (SELECT dp_explain('logistic', 31648, 42,
                                  dp_options(epsilon => eps, delta => delta, l2 => given_l2)) j) p;
