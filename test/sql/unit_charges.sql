-- What a unit-level release is charged, and when. (1) The whole release
-- (the noisy count of units and the model) is one charge, admitted or
-- refused before anything is spent: a refusal costs nothing (0.7.0 charged
-- the count's tenth of epsilon first, then refused the model). (2) Each
-- budget is charged what the release costs at its own unit: per unit where
-- the budget names the unit, at the row (dperm.unit_release_at_row: group
-- privacy over the two units a replaced row touches) where it names none
-- (0.7.0 charged the per-unit epsilon to both). (3) The forecast counts
-- both.
SET dperm.allow_seed = on;
SET client_min_messages = warning;

-- 30 persons with 1 to 4 rows, in two regions (partitions).
CREATE TABLE uc_visits (person int, region text, features float8[], label boolean)
  PARTITION BY LIST (region);
CREATE TABLE uc_visits_eu PARTITION OF uc_visits FOR VALUES IN ('eu');
CREATE TABLE uc_visits_us PARTITION OF uc_visits FOR VALUES IN ('us');
INSERT INTO uc_visits
SELECT p, CASE WHEN p % 2 = 0 THEN 'eu' ELSE 'us' END,
       ARRAY[((p * 7 + r) % 11) / 11.0 - 0.5, ((p * 3 + r) % 5) / 5.0 - 0.5], (p + r) % 3 = 0
  FROM generate_series(1, 30) p, generate_series(1, 1 + p % 4) r;

-- The parent protects persons; the EU partition's owner protects its rows.
SELECT dperm.set_budget('uc_visits', 10, 1e-5, accounting => 'basic',
                        privacy_unit => 'person', max_rows_per_unit => 2);
SELECT dperm.set_budget('uc_visits_eu', 7, 1e-5, accounting => 'basic');

-- The cost at the row of a release (epsilon, delta) per unit.
SELECT epsilon, delta, rdp IS NULL AS no_curve FROM dperm.unit_release_at_row(1, 0);
SELECT epsilon, abs(delta - 1e-6 * (1 + exp(1))) < 1e-18 AS delta_ok, rdp IS NULL AS no_curve
  FROM dperm.unit_release_at_row(1, 1e-6);
SELECT cardinality(rdp) = cardinality(dperm.rdp_orders()) AS pure_has_curve,
       rdp[1] = least(2.0, (dperm.rdp_orders())[1] * 2.0 * 2.0 / 2) AS first_order_ok
  FROM dperm.unit_release_at_row(1, 0);

-- One release at epsilon = 1 per person, read from the parent (every
-- partition): the parent is charged 1 (the count and the model, one row),
-- the EU partition 2 (one row at the row, charged with the first).
SELECT (j->>'n')::int = 2 * (j->'privacy_unit'->>'units')::int AS n_is_units_times_k, j->'epsilon' AS epsilon
  FROM (SELECT dperm.train('uc_visits', 'features', 'label', 'logistic',
                           dp_options(epsilon => 1, dimension => 2, seed => 3))::jsonb j) m;
SELECT l.relations, l.epsilon, l.delta, l.neighbors, l.charged_with IS NOT NULL AS accompanies
  FROM dperm.ledger l WHERE l.relations && ARRAY['uc_visits', 'uc_visits_eu']::regclass[] ORDER BY l.id;
SELECT relation, epsilon_spent, releases FROM dperm.budget_status
 WHERE relation IN ('uc_visits'::regclass, 'uc_visits_eu'::regclass) ORDER BY relation::text;

-- A refused release costs nothing: epsilon = 3 fits the parent (1 + 3 <=
-- 10) but not the partition at the row (2 + 6 > 7): refused as a whole,
-- before the count.
\set VERBOSITY terse
SELECT dperm.train('uc_visits', 'features', 'label', 'logistic', dp_options(epsilon => 3, dimension => 2));
-- ... and a delta above the budget's.
SELECT dperm.train('uc_visits', 'features', 'label', 'logistic',
                   dp_options(epsilon => 0.5, delta => 1e-3, dimension => 2));
\set VERBOSITY default
SELECT count(*) AS ledger_rows FROM dperm.ledger
 WHERE relations && ARRAY['uc_visits', 'uc_visits_eu']::regclass[];
SELECT relation, epsilon_spent, releases FROM dperm.budget_status
 WHERE relation IN ('uc_visits'::regclass, 'uc_visits_eu'::regclass) ORDER BY relation::text;

-- Named models: the forecast counts a run at the partition's row cost (2
-- per run: 7 - 4 leaves room for 1 more run of epsilon 1, not 3); a refused
-- retrain leaves no version and no charge.
SELECT dperm.train_model('uc_m', 'uc_visits', 'features', 'label', 'logistic',
                         dp_options(epsilon => 1, dimension => 2, seed => 4));
SELECT runs, epsilon_per_run, limiting_relation FROM dperm.retraining_forecast('uc_m');
SELECT count(*) AS ledger_rows_before FROM dperm.ledger \gset
-- The owner lowers the partition's budget to 4.5.
SELECT dperm.set_budget('uc_visits_eu', 4.5, 1e-5, accounting => 'basic');
SELECT relation, epsilon_remaining FROM dperm.budget_status WHERE relation = 'uc_visits_eu'::regclass;
-- 4 spent of 4.5: the next run (2 at the row) is refused, uncharged.
\set VERBOSITY terse
SELECT dperm.retrain('uc_m');
\set VERBOSITY default
SELECT count(*) - :ledger_rows_before AS new_ledger_rows FROM dperm.ledger;
SELECT version, status FROM dperm.models WHERE name = 'uc_m' ORDER BY version;
SELECT runs FROM dperm.retraining_forecast('uc_m');

-- A unit budget alone: an exhausted budget refuses with nothing charged,
-- however often it is asked (0.7.0: 0.1 epsilon per refused call).
CREATE TABLE uc_people (person int, features float8[], label boolean);
INSERT INTO uc_people SELECT p % 20, ARRAY[(p % 7) / 7.0, (p % 3) / 3.0], p % 2 = 0 FROM generate_series(1, 60) p;
SELECT dperm.set_budget('uc_people', 1, 1e-5, privacy_unit => 'person', max_rows_per_unit => 3);
\set VERBOSITY terse
SELECT dperm.train('uc_people', 'features', 'label', 'logistic', dp_options(epsilon => 25, dimension => 2));
SELECT dperm.train('uc_people', 'features', 'label', 'logistic', dp_options(epsilon => 1.5, dimension => 2));
\set VERBOSITY default
SELECT epsilon_spent, releases FROM dperm.budget_status WHERE relation = 'uc_people'::regclass;
