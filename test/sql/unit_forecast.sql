-- Per-person budgets that last (issue 48): a unit-level release with
-- delta > 0 carries its per-unit RDP curve (unit_level.hpp), so scheduled
-- retrainings compose in the accountant instead of by sums. The forecast
-- counts the runs by that curve, and exactly that many runs fit: the next
-- one is refused, uncharged.
SET dperm.allow_seed = on;
CREATE TABLE uf_panel (person int, year int, features float8[], label boolean);
INSERT INTO uf_panel
SELECT p, y, ARRAY[((p * 7 + y) % 11) / 11.0, ((p + 3 * y) % 5) / 5.0],
       ((p * 7 + y) % 11) > 5
  FROM generate_series(1, 60) p, generate_series(1, 7) y;
SELECT dperm.set_budget('uf_panel', 10, 1e-4, privacy_unit => 'person', max_rows_per_unit => 7);
SELECT dperm.train_model('uf_m', 'uf_panel', 'features', 'label', 'logistic',
                         dp_options(epsilon => 1, delta => 1e-5, algorithm => 'dp_gd',
                                    dimension => 2, seed => 3));
-- The run's charge has a curve; by sums, 9 more runs would fit (10 - 1 at
-- epsilon 1 each; delta 1e-4 / 1e-5 = 10 runs in all).
SELECT rdp IS NOT NULL AS has_curve, epsilon, delta FROM dperm.ledger
 WHERE 'uf_panel'::regclass = ANY (relations) ORDER BY id DESC LIMIT 1;
SELECT runs >= 2 * 9 AS at_least_twice_the_sums, epsilon_per_run, delta_per_run
  FROM dperm.retraining_forecast('uf_m');
SELECT runs AS forecast_runs FROM dperm.retraining_forecast('uf_m') \gset
SELECT :forecast_runs AS forecast_runs;
-- That many retrainings really fit.
SELECT count(dperm.retrain('uf_m')) = :forecast_runs AS all_fit
  FROM generate_series(1, :forecast_runs);
SELECT runs FROM dperm.retraining_forecast('uf_m');
SELECT epsilon_spent <= 10 AS within_budget, releases = :forecast_runs + 1 AS releases_counted
  FROM dperm.budget_status WHERE relation = 'uf_panel'::regclass;
SELECT count(*) AS ledger_rows_before FROM dperm.ledger \gset
-- The next one does not fit: refused (DP001), nothing charged.
\set VERBOSITY terse
SELECT dperm.retrain('uf_m');
\set VERBOSITY default
SELECT count(*) - :ledger_rows_before AS new_ledger_rows FROM dperm.ledger;
