-- The count's share of a unit-level release (planning/unit_count.hpp) and a
-- budget's public number of units (dperm.set_budget(..., units => N)).
SET dperm.allow_seed = on;
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
CREATE ROLE regress_uc_analyst;
-- A fixed cohort: 1000 persons of 2 rows each, a clear linear signal.
CREATE TABLE uc_cohort (person int, features float8[], label boolean);
INSERT INTO uc_cohort
SELECT p, ARRAY[x1, x2], x1 + 0.5 * x2 > 0
  FROM generate_series(1, 1000) p, generate_series(1, 2) r,
       LATERAL (SELECT sin(p * 12.9898 + r * 78.233) * 0.7 AS x1,
                       cos(p * 4.1414 + r * 2.7183) * 0.7 AS x2) x;
GRANT SELECT ON uc_cohort TO regress_uc_analyst;

-- Only the owner declares the number of units public.
\set VERBOSITY terse
SET ROLE regress_uc_analyst;
SELECT dperm.set_budget('uc_cohort', 100, 1e-5, privacy_unit => 'person', max_rows_per_unit => 2,
                        units => 1000);
RESET ROLE;
-- It needs a privacy unit (a budget of the row has n public already), and
-- is at least 1 (0 withdraws it).
CREATE TABLE uc_rows (features float8[], label boolean);
SELECT dperm.set_budget('uc_rows', 10, 1e-5, units => 5);
SELECT dperm.set_budget('uc_cohort', 100, 1e-5, privacy_unit => 'person', max_rows_per_unit => 2,
                        units => -1);
\set VERBOSITY default
SELECT dperm.set_budget('uc_cohort', 100, 1e-5, privacy_unit => 'person', max_rows_per_unit => 2,
                        units => 1000);
SELECT privacy_unit, max_rows_per_unit, public_units FROM dperm.budget_status
 WHERE relation = 'uc_cohort'::regclass;
-- NULL keeps the declaration.
SELECT dperm.set_budget('uc_cohort', 100, 1e-5);
SELECT units FROM dperm.budgets WHERE relation = 'uc_cohort'::regclass;

-- A release reads exactly the 1000 units without a count: the model's
-- epsilon is the whole epsilon, its JSON says the units are public, and the
-- ledger's one row charges the model only (with its per-unit curve, so the
-- budget's RDP accountant reports less than the 4 charged: unit_level.hpp).
CREATE TEMP TABLE uc_m AS
SELECT dperm.train('uc_cohort', 'features', 'label', 'logistic',
                   dp_options(epsilon => 4, delta => 1e-6, dimension => 2, seed => 7)) m;
SELECT m::jsonb->'privacy_unit' AS unit, m::jsonb->'epsilon' AS epsilon, m::jsonb->'n' AS n
  FROM uc_m;
SELECT epsilon, delta, neighbors, mechanism FROM dperm.ledger
 WHERE 'uc_cohort'::regclass = ANY (relations) ORDER BY id DESC LIMIT 1;
SELECT round(epsilon_spent::numeric, 4) AS epsilon_spent, releases FROM dperm.budget_status WHERE relation = 'uc_cohort'::regclass;
-- Still a model: it classifies the cohort well.
SELECT avg(((dp_predict(m, c.features) > 0.5) = c.label)::int) > 0.8 AS accurate
  FROM uc_m, uc_cohort c;

-- A mismatch is refused before the charge (costs nothing): one person more,
-- or one fewer, than declared.
INSERT INTO uc_cohort VALUES (1001, ARRAY[0.1, 0.2], true);
\set VERBOSITY terse
SELECT dperm.train('uc_cohort', 'features', 'label', 'logistic',
                   dp_options(epsilon => 4, dimension => 2, seed => 7)) IS NULL;
DELETE FROM uc_cohort WHERE person IN (1000, 1001);
SELECT dperm.train('uc_cohort', 'features', 'label', 'logistic',
                   dp_options(epsilon => 4, dimension => 2, seed => 7)) IS NULL;
\set VERBOSITY default
SELECT round(epsilon_spent::numeric, 4) AS epsilon_spent, releases FROM dperm.budget_status WHERE relation = 'uc_cohort'::regclass;
-- The owner declares the current number; the release reads 999 units.
SELECT dperm.set_budget('uc_cohort', 100, 1e-5, units => 999);
SELECT (dperm.train('uc_cohort', 'features', 'label', 'logistic',
                    dp_options(epsilon => 4, dimension => 2, seed => 7))::jsonb
        ->'privacy_unit'->'units')::int AS units;
-- Streaming reads the same 999 units.
WITH m AS (SELECT dperm.train('uc_cohort', 'features', 'label', 'logistic',
                              dp_options(epsilon => 4, dimension => 2, seed => 7),
                              'streaming')::jsonb j)
SELECT j->'privacy_unit'->'units' AS units, j->'privacy_unit'->'units_public' AS units_public,
       j->'n' AS n FROM m;

-- A named model's run is the same release; the forecast composes its
-- charge (the model's epsilon only, no count): at least the runs the sum
-- rule fits.
SELECT dperm.train_model('uc_model', 'uc_cohort', 'features', 'label', 'logistic',
                         dp_options(epsilon => 4, dimension => 2, seed => 7)) AS version;
SELECT f.epsilon_per_run, f.delta_per_run,
       f.runs >= floor((b.epsilon_budget - b.epsilon_spent) / 4) AS runs_at_least_the_sum
  FROM dperm.retraining_forecast('uc_model') f, dperm.budget_status b
 WHERE b.relation = 'uc_cohort'::regclass;
SELECT epsilon, neighbors FROM dperm.ledger
 WHERE 'uc_cohort'::regclass = ANY (relations) ORDER BY id DESC LIMIT 1;

-- A query (a filter) still releases a noisy count, at the count's share.
WITH m AS (SELECT dperm.train_query($$SELECT features, label FROM uc_cohort WHERE person > 10$$,
                                    'features', 'label', 'logistic',
                                    dp_options(epsilon => 4, dimension => 2, seed => 7))::jsonb j)
SELECT j->'privacy_unit'->'units_public' AS units_public,
       j->'privacy_unit'->'units_epsilon' AS units_epsilon FROM m;

-- units => 0 withdraws the declaration: the count is noisy again, at a
-- tenth of epsilon without an estimate ...
SELECT dperm.set_budget('uc_cohort', 100, 1e-5, units => 0);
SELECT public_units FROM dperm.budget_status WHERE relation = 'uc_cohort'::regclass;
WITH m AS (SELECT dperm.train('uc_cohort', 'features', 'label', 'logistic',
                              dp_options(epsilon => 4, dimension => 2, seed => 7))::jsonb j)
SELECT j->'privacy_unit'->'units_public' AS units_public,
       j->'privacy_unit'->'units_epsilon' AS units_epsilon, j->'epsilon' AS epsilon FROM m;
-- ... and, with a public estimate, at min(eps/10, max(eps/100, 100 sqrt 2 / N)).
WITH m AS (SELECT dperm.train('uc_cohort', 'features', 'label', 'logistic',
                              dp_options(epsilon => 4, dimension => 2, seed => 7,
                                         units_estimate => 1000))::jsonb j)
SELECT abs((j->'privacy_unit'->>'units_epsilon')::float8
           - least(0.4, greatest(0.04, 100 * sqrt(2) / 1000))) < 1e-12 AS rule,
       (j->'privacy_unit'->>'units_epsilon')::float8 < 0.4 AS below_a_tenth,
       j->'epsilon' AS epsilon FROM m;
SELECT epsilon, neighbors FROM dperm.ledger
 WHERE 'uc_cohort'::regclass = ANY (relations) ORDER BY id DESC LIMIT 1;

-- A large table without a unit (dperm.train_query: the row is the unit):
-- 20000 rows, n_epsilon at the floor, a hundredth of epsilon; explain_query
-- says the same with the same options.
CREATE TABLE uc_large (id int, features float8[], label boolean);
INSERT INTO uc_large
SELECT i, ARRAY[sin(i * 1.3) * 0.7, cos(i * 0.7) * 0.7], sin(i * 1.3) + 0.5 * cos(i * 0.7) > 0
  FROM generate_series(1, 20000) i;
SELECT dperm.set_budget('uc_large', 100, 1e-5);
WITH m AS (SELECT dperm.train_query($$SELECT features, label FROM uc_large WHERE id > 0$$,
                                    'features', 'label', 'logistic',
                                    dp_options(epsilon => 1, dimension => 2, seed => 7,
                                               units_estimate => 20000))::jsonb j),
     e AS (SELECT dperm.explain_query($$SELECT features, label FROM uc_large WHERE id > 0$$,
                                      'features', 'label', 'logistic',
                                      dp_options(epsilon => 1, dimension => 2,
                                                 units_estimate => 20000), 20000) x)
SELECT abs((j->>'n_epsilon')::float8 - greatest(0.01, 100 * sqrt(2) / 20000)) < 1e-12 AS at_the_floor,
       (j->>'n_epsilon')::float8 < 0.1 AS below_a_tenth,
       (x->'epsilon'->>'count')::float8 = (j->>'n_epsilon')::float8 AS explain_agrees,
       x->'count'->>'rule' AS rule, x->'count'->'units_estimate' AS units_estimate,
       abs((j->>'n')::int - 20000) < 1000 AS n_near
  FROM m, e;
-- Without an estimate, a tenth, as before.
SELECT dperm.explain_query($$SELECT features, label FROM uc_large WHERE id > 0$$,
                           'features', 'label', 'logistic',
                           dp_options(epsilon => 1, dimension => 2), 20000)->'epsilon' AS split;

