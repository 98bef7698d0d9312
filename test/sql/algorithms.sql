-- The stochastic-gradient family on real data: dp_sgd (ANSGD),
-- rrpsgd, dp_lssgd and bolton, on BANK (logistic, n = 45211, d = 42) and
-- WINE (Huber, n = 6497, d = 12), epsilon = 1, delta = 1e-3, l2 = 0.1, no
-- intercept, huber_delta = 1 (wine_risk's objective), a few seeds each
-- (alg_list.seeds). Thresholds come from measured means with a
-- margin (bench/reports/algorithms.md has the full tables); a lower bound checks
-- the noise is there.
--
-- Seeds: the checks hold for the mean over alg_list.seeds seeds, so each
-- threshold must sit many standard errors (per-seed sd / sqrt(seeds)) from
-- the measured mean. Per-seed mean and sd from results/algorithms_figures.txt
-- (written by this file, printed by scripts/test.sh) when all ran 5 seeds:
--   dp_sgd   BANK 3.80e-5 sd 1.9e-6, WINE 4.64e-5 sd 1.2e-5 (max 2e-4, 6e-4)
--   rrpsgd   BANK 3.73e-3 sd 1.0e-3, WINE 2.59e-3 sd 9.5e-4 (max 1.5e-2 both)
--   dp_lssgd BANK 1.78e-3 sd 2.6e-5, WINE 2.60e-4 sd 3.0e-5 (max 5e-3, 1.5e-3)
--   bolton   BANK 4.18e-6 sd 7.2e-7, WINE 1.29e-4 sd 1.25e-4 (max 1e-5, 4e-4)
-- rrpsgd (452110 exact-sampler steps per BANK release, the cost of this
-- file) runs 2 seeds: BANK's max is (1.5e-2 - 3.73e-3) / (1.0e-3 / sqrt 2)
-- = 16 standard errors above the mean, WINE's 18. dp_sgd and dp_lssgd run 3:
-- the nearest threshold is 71 standard errors away (WINE dp_lssgd).
-- bolton keeps 5 (cheap; WINE's sd is its mean: 4.9 standard errors). The
-- lower bounds (max / 1000) lie 77 to 418 times below the means; the excess
-- is nonnegative, so a mean that low needs every seed that low. The
-- thresholds are unchanged from the 5-seed file.
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE alg_bank (features float8[], label boolean);
\copy alg_bank FROM PROGRAM 'python3 bench/load_datasets.py --copy bank'
CREATE TABLE alg_wine (features float8[], label float8);
\copy alg_wine FROM PROGRAM 'python3 bench/load_datasets.py --copy wine'

-- F(w) = 1/n sum loss + 0.1/2 ||w||^2, from dp_predict.
CREATE FUNCTION bank_risk(m dp_model) RETURNS float8 LANGUAGE sql AS $$
  SELECT avg(CASE WHEN label THEN -ln(p) ELSE -ln(1 - p) END)
         + 0.1 / 2 * (SELECT sum(coefficient ^ 2) FROM dp_coefficients(m))
    FROM (SELECT label, dp_predict(m, features) AS p FROM alg_bank) s $$;
CREATE FUNCTION wine_risk(m dp_model) RETURNS float8 LANGUAGE sql AS $$
  SELECT avg(CASE WHEN abs(r) <= 1 THEN r * r / 2 ELSE abs(r) - 0.5 END)
         + 0.1 / 2 * (SELECT sum(coefficient ^ 2) FROM dp_coefficients(m))
    FROM (SELECT dp_predict(m, features) - label AS r FROM alg_wine) s $$;

-- Non-private optima, by output_gd at epsilon = 1e9 (noise ~1e-12).
CREATE TABLE alg_optima AS
  SELECT 'bank' AS data, bank_risk((SELECT dp_logreg(features, label, dp_options(algorithm => 'output_gd', epsilon => 1e9, delta => 1e-3, l2 => 0.1, fit_intercept => false, seed => 0)) FROM alg_bank)) AS f
  UNION ALL
  SELECT 'wine', wine_risk((SELECT dp_huber(features, label, dp_options(huber_delta => 1, algorithm => 'output_gd', epsilon => 1e9, delta => 1e-3, l2 => 0.1, fit_intercept => false, seed => 0)) FROM alg_wine));

CREATE TABLE alg_list (algorithm text, bank_max float8, wine_max float8, seeds int);
INSERT INTO alg_list VALUES
  ('dp_sgd', 2e-4, 6e-4, 3),
  ('rrpsgd', 1.5e-2, 1.5e-2, 2),
  ('dp_lssgd', 5e-3, 1.5e-3, 3),
  ('bolton', 1e-5, 4e-4, 5);

CREATE TABLE alg_runs AS
  SELECT a.algorithm, s,
         bank_risk((SELECT dp_logreg(features, label, dp_options(epsilon => 1, delta => 1e-3, l2 => 0.1, fit_intercept => false, algorithm => a.algorithm, seed => s)) FROM alg_bank))
           - (SELECT f FROM alg_optima WHERE data = 'bank') AS bank_excess,
         wine_risk((SELECT dp_huber(features, label, dp_options(huber_delta => 1, epsilon => 1, delta => 1e-3, l2 => 0.1, fit_intercept => false, algorithm => a.algorithm, seed => s)) FROM alg_wine))
           - (SELECT f FROM alg_optima WHERE data = 'wine') AS wine_excess
    FROM alg_list a, generate_series(1, a.seeds) s;
SELECT r.algorithm, count(*) AS seeds,
       min(bank_excess) >= -1e-12 AND min(wine_excess) >= -1e-12 AS optimum_is_minimum,
       avg(bank_excess) < a.bank_max AS bank_below, avg(wine_excess) < a.wine_max AS wine_below,
       avg(bank_excess) > a.bank_max / 1000 AS bank_noisy, avg(wine_excess) > a.wine_max / 1000 AS wine_noisy
  FROM alg_runs r JOIN alg_list a USING (algorithm) GROUP BY r.algorithm, a.bank_max, a.wine_max ORDER BY r.algorithm;

-- Every release left a ledger row with its Renyi curve, charged at (1, 1e-3).
SELECT algorithm, count(*) AS releases, bool_and(rdp IS NOT NULL) AS has_curve,
       bool_and(epsilon = 1 AND delta = 1e-3) AS charged
  FROM dperm.ledger WHERE algorithm IN (SELECT algorithm FROM alg_list) AND relation_names && ARRAY['public.alg_bank', 'public.alg_wine']
  GROUP BY algorithm ORDER BY algorithm;

-- figures for the record, outside the compared output
\o results/algorithms_figures.txt
SELECT algorithm, avg(bank_excess) AS bank_mean, stddev(bank_excess) AS bank_sd,
       avg(wine_excess) AS wine_mean, stddev(wine_excess) AS wine_sd
  FROM alg_runs GROUP BY algorithm ORDER BY algorithm;
\o

-- dp_softmax on real data: BANK as two classes, l2 = 0.1, epsilon = 1, with
-- every algorithm of this file and output_gd. The mean cross-entropy (from
-- dp_predict_proba) must beat the zero model's ln 2 = 0.693 by a margin;
-- the threshold is the largest measured mean (0.407, dp_lssgd) plus 0.02.
-- 3 seeds each, rrpsgd 1 (its release costs 5x the others'): measured per
-- seed (results/algorithms_softmax_figures.txt, 3 seeds each) rrpsgd 0.3972 sd
-- 0.0058, so one seed is (0.43 - 0.3972) / 0.0058 = 5.7 sd below the
-- threshold; the others' sd are below 2.4e-4.
CREATE FUNCTION bank_xent(m dp_model) RETURNS float8 LANGUAGE sql AS $$
  SELECT avg(-ln((dp_predict_proba(m, features))[label::int + 1])) FROM alg_bank $$;
CREATE TABLE alg_softmax AS
  SELECT a, s, bank_xent((SELECT dp_softmax(features, label::int, dp_options(epsilon => 1, delta => 1e-3, l2 => 0.1, classes => 2, fit_intercept => false, algorithm => a, seed => s)) FROM alg_bank)) AS xent
    FROM (VALUES ('output_gd', 3), ('dp_sgd', 3), ('rrpsgd', 1), ('dp_lssgd', 3), ('bolton', 3)) v(a, seeds),
         generate_series(1, v.seeds) s;
SELECT a AS algorithm, count(*) AS seeds, avg(xent) < 0.43 AS beats_zero_model
  FROM alg_softmax GROUP BY a ORDER BY a;
\o results/algorithms_softmax_figures.txt
SELECT a AS algorithm, avg(xent), stddev(xent) FROM alg_softmax GROUP BY a ORDER BY a;
\o
