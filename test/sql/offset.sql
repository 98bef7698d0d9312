-- The intercept on a private offset (docs/user-guide.md, "The intercept"): a release with
-- fit_intercept spends a share epsilon0 on a noisy base statistic and the rest
-- on the algorithm; the ledger is charged epsilon and delta exactly once, with
-- the algorithm's RDP curve plus epsilon0's.
SET max_parallel_workers_per_gather = 0;
SET dperm.allow_seed = on;
-- 10 % positives; the features carry little signal
CREATE TABLE imbalanced AS
  SELECT i, ARRAY[sin(i) / 2, cos(7 * i) / 2] AS f, i % 10 = 0 AS y FROM generate_series(1, 2000) i;
SELECT dperm.set_budget('imbalanced', 1.0, 1e-6);
CREATE TABLE m AS
  SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, delta => 1e-6, seed => 7, dimension => 2))::jsonb AS j
    FROM imbalanced;
-- one ledger row, charged exactly (0.5, 1e-6)
SELECT count(*) AS releases, sum(epsilon) AS epsilon, sum(delta) AS delta
  FROM dperm.ledger WHERE 'imbalanced'::regclass = ANY (relations);
-- the model states the release's epsilon; the plan splits it exactly:
-- epsilon0 = min(0.5/10, 4/sqrt(2000)) = 0.05, the algorithm 0.45; no
-- decision stage (decision.hpp: n epsilon/20 = 50 < 400)
SELECT j->>'epsilon' AS epsilon, j->'plan'->>'epsilon' AS plan_epsilon,
       j->'plan'->'offset'->>'epsilon' AS epsilon0,
       j->'plan'->'offset'->>'mechanism_epsilon' AS mechanism_epsilon,
       j->'plan'->'decision'->>'epsilon' AS epsilon_t,
       (j->'plan'->'offset'->>'epsilon')::float8 + COALESCE((j->'plan'->'decision'->>'epsilon')::float8, 0)
         + (j->'plan'->'offset'->>'mechanism_epsilon')::float8 = 0.5 AS sums_exactly,
       j->'plan'->'offset'->>'sensitivity' AS sensitivity,
       (j->'plan'->'offset'->>'noise_scale')::float8 = 1 / (j->'plan'->'offset'->>'epsilon')::float8 AS laplace_scale,
       j->'plan'->>'algorithm' AS algorithm
  FROM m;
-- b0 near logit(0.1) = -2.197 (noise 20/2000 on the share), recorded and
-- inside the released intercept
SELECT abs((j->>'offset')::float8 - ln(0.1 / 0.9)) < 0.3 AS offset_near_base_rate,
       abs((j->>'intercept')::float8 - (j->>'offset')::float8) < 3 AS intercept_around_offset
  FROM m;
-- the ledger's curve is dp_explain's (which adds epsilon0's min(e0, alpha e0^2/2))
SELECT l.rdp = ARRAY(SELECT jsonb_array_elements_text(
                       dp_explain('logistic', 2000, 2, dp_options(epsilon => 0.5, delta => 1e-6))
                         ->'accounting'->'rdp')::float8) AS curve_matches_explain
  FROM dperm.ledger l WHERE 'imbalanced'::regclass = ANY (l.relations);
-- the budget: one release of 0.5 leaves 0.5 by plain sums
SELECT releases, epsilon_spent <= 0.5 AS at_most_charged FROM dperm.budget_status
 WHERE relation = 'imbalanced'::regclass;
-- every row is predicted as the majority class
SELECT count(*) FILTER (WHERE dp_predict(j::dp_model, f) < 0.5) AS majority_predictions, count(*) AS rows
  FROM m, imbalanced;
-- fit_intercept => false or intercept => 'fitted': no stage 0, the algorithm
-- gets all of epsilon
SELECT p->'offset' IS NULL AS no_offset, p->>'epsilon' AS epsilon
  FROM (SELECT dp_explain('logistic', 2000, 2, dp_options(epsilon => 0.5, fit_intercept => false)) AS p) e;
SELECT p->'offset' IS NULL AS no_offset, p->>'epsilon' AS epsilon, p->'options'->>'intercept' AS intercept
  FROM (SELECT dp_explain('logistic', 2000, 2, dp_options(epsilon => 0.5, intercept => 'fitted')) AS p) e;
SELECT dp_options(epsilon => 0.5, intercept => 'free');
-- softmax: the class histogram, sensitivity 2; Huber: the clipped sum, 2 target_bound (1 + grid
-- + the exact sum's slack, 2^-45 + n 2^-52)
SELECT p->'offset'->>'sensitivity' AS softmax_sensitivity, p->'offset'->>'epsilon' AS epsilon0
  FROM (SELECT dp_explain('softmax', 1600, 2, dp_options(epsilon => 1, classes => 3)) AS p) e;
SELECT (p->'offset'->>'sensitivity')::float8 BETWEEN 2 * 3 AND 2 * 3 * (1 + 2 ^ -10 + 2 ^ -30) AS huber_sensitivity,
       p->'offset'->>'bound' AS bound
  FROM (SELECT dp_explain('huber', 10000, 2, dp_options(epsilon => 1, target_bound => 3)) AS p) e;
-- a budgeted table is dropped once its budget is retired
SET client_min_messages = warning;
SELECT dperm.retire_budget('imbalanced');
RESET client_min_messages;
DROP TABLE m, imbalanced;

-- Stage 2, the private decision threshold (decision.hpp): at n epsilon/20 >=
-- 400 a logistic release spends epsilon/20 on it; the three shares sum to
-- epsilon exactly, the grid is logit(0.05) .. logit(0.95) with 0 in the
-- middle, the noise is 2/epsilon_t and the head start ceil(40 ln 19) = 118;
-- one row fewer (n epsilon/20 < 400) has no stage 2.
SELECT (j->'decision'->>'epsilon')::float8 AS epsilon_t,
       (j->'decision'->>'epsilon')::float8 + (j->'offset'->>'epsilon')::float8
         + (j->'offset'->>'mechanism_epsilon')::float8 = 1 AS sums_exactly,
       jsonb_array_length(j->'decision'->'thresholds') AS thresholds,
       (j->'decision'->'thresholds'->>9)::float8 AS middle,
       abs((j->'decision'->>'noise_scale')::float8 - 40) < 1e-9 AS scale_2_over_epsilon_t,
       j->'decision'->'bonus' AS bonus,
       dp_explain('logistic', 7999, 3, dp_options(epsilon => 1)) ? 'decision' AS below_has_it
  FROM (SELECT dp_explain('logistic', 8000, 3, dp_options(epsilon => 1)) j) e;
-- dp_huber and dp_softmax have no decision stage
SELECT dp_explain('huber', 100000, 3, dp_options(epsilon => 1)) ? 'decision' AS huber,
       dp_explain('softmax', 100000, 3, dp_options(epsilon => 1, classes => 3)) ? 'decision' AS softmax;
