-- Privacy units: a budget names the column that identifies a person and
-- the rows each person contributes; every release charged to the relation
-- is then private per person, not per row.
SET dperm.allow_seed = on;
SET client_min_messages = warning;
CREATE TABLE events (customer_id int, features float8[], label boolean);
-- 60 customers with 1 to 12 rows each.
INSERT INTO events
SELECT c, ARRAY[((c * 7 + r * 3) % 11) / 11.0 - 0.5, ((c * 5 + r) % 13) / 13.0 - 0.5],
       (c + r) % 3 = 0
  FROM generate_series(1, 60) c, generate_series(1, 1 + c % 12) r;

-- The owner declares the unit; wrong declarations cost nothing.
\set VERBOSITY terse
SELECT dperm.set_budget('events', 20, 1e-5, privacy_unit => 'no_such_column', max_rows_per_unit => 4);
SELECT dperm.set_budget('events', 20, 1e-5, privacy_unit => 'customer_id');
SELECT dperm.set_budget('events', 20, 1e-5, max_rows_per_unit => 4);
SELECT dperm.set_budget('events', 20, 1e-5, privacy_unit => 'customer_id', max_rows_per_unit => 0);
SELECT dperm.set_budget('events', 20, 1e-5, privacy_unit => 'customer_id', max_rows_per_unit => 4);
\set VERBOSITY default
SELECT privacy_unit, max_rows_per_unit, releases FROM dperm.budget_status WHERE relation = 'events'::regclass;

-- Nothing but dperm.train bounds a unit's rows: the direct aggregates
-- refuse the relation, however the statement reads it, before any charge.
\set VERBOSITY terse
SELECT dp_logreg(features, label, dp_options(epsilon => 1, dimension => 2)) FROM events;
SELECT dp_logreg(features, label, dp_options(epsilon => 1, dimension => 2))
  FROM (SELECT * FROM events UNION ALL SELECT * FROM events) s;
CREATE VIEW events_view AS SELECT customer_id, features, label FROM events;
SELECT dp_logreg(features, label, dp_options(epsilon => 1, dimension => 2)) FROM events_view;
-- ... nor train a view of it (its rows need not map to the table's units).
SELECT dperm.train('events_view', 'features', 'label', 'logistic', dp_options(epsilon => 1, dimension => 2));
-- max_rows_per_unit is the budget's: another value is refused, and a
-- release that bounds nothing cannot claim it.
SELECT dperm.train('events', 'features', 'label', 'logistic',
                   dp_options(epsilon => 1, dimension => 2, max_rows_per_unit => 7));
CREATE TABLE plain (features float8[], label boolean);
INSERT INTO plain VALUES (ARRAY[0.1, 0.2], true), (ARRAY[-0.1, 0.3], false);
SELECT dp_logreg(features, label, dp_options(epsilon => 1, max_rows_per_unit => 2)) FROM plain;
\set VERBOSITY default
SELECT count(*) AS ledger_rows FROM dperm.ledger WHERE 'events'::regclass = ANY (relations);

-- dperm.train: the number of units is released first (a tenth of epsilon,
-- discrete Laplace: a unit added or removed moves it by one), then that
-- many units are read as exactly k = 4 row slots each, n = units * 4. With
-- delta > 0 the model is charged by its per-unit curve alpha rho
-- (unit_level.hpp): rho = unit_zcdp is the largest whose curve converts to
-- the model's 0.9 at 1e-6, and the row-level plan's own curve times k^2 = 16
-- stays under it. (seed: the same noisy count every run.)
WITH m AS (SELECT dperm.train('events', 'features', 'label', 'logistic',
                              dp_options(epsilon => 1, delta => 1e-6, dimension => 2, seed => 5))::jsonb j),
     r AS (SELECT j, (j->'plan'->'privacy_unit'->>'unit_zcdp')::float8 AS rho FROM m)
SELECT j->'privacy_unit'->>'column' AS unit, j->'privacy_unit'->'max_rows_per_unit' AS k,
       j->'privacy_unit'->'units_epsilon' AS units_epsilon, j->'epsilon' AS epsilon,
       j->'delta' AS delta, (j->>'n')::int = 4 * (j->'privacy_unit'->>'units')::int AS n_is_units_times_k,
       dperm.rdp_to_epsilon(dperm.rdp_orders(), (SELECT array_agg(a * rho) FROM unnest(dperm.rdp_orders()) a), 1e-6) <= 0.9 AS rho_fits,
       dperm.rdp_to_epsilon(dperm.rdp_orders(), (SELECT array_agg(a * rho * 1.001) FROM unnest(dperm.rdp_orders()) a), 1e-6) > 0.9 AS rho_is_largest,
       (j->'plan'->'privacy_unit'->>'row_epsilon')::float8 < 0.9 AS row_plan_below
  FROM r;
-- Streaming reads the same way.
WITH m AS (SELECT dperm.train('events', 'features', 'label', 'logistic',
                              dp_options(epsilon => 1, dimension => 2, seed => 5), 'streaming')::jsonb j)
SELECT (j->>'n')::int = 4 * (j->'privacy_unit'->>'units')::int AS n_is_units_times_k,
       j->'epsilon' AS epsilon FROM m;
-- The ledger states the unit: each release is one row, charged before the
-- count reads anything (n 0; the algorithm the option's, else auto: the
-- default depends on the noisy count), for the count and the model
-- together (epsilon as asked); both carry an RDP curve (delta > 0: the
-- count's plus alpha rho), so they compose in the accountant: less than the
-- sum 2, no delta of their own.
SELECT algorithm, neighbors, epsilon, delta, n > 0 AS has_n, rdp IS NOT NULL AS has_curve,
       mechanism FROM dperm.ledger
 WHERE 'events'::regclass = ANY (relations) ORDER BY id;
SELECT round(epsilon_spent::numeric, 4) AS epsilon_spent, delta_spent, releases FROM dperm.budget_status WHERE relation = 'events'::regclass;
-- l2 => 'auto' picks l2 privately, within the same unit-level release.
WITH m AS (SELECT dperm.train('events', 'features', 'label', 'logistic',
                              dp_options(epsilon => 2, l2 => 'auto', dimension => 2))::jsonb j)
SELECT j->'privacy_unit'->'units' IS NOT NULL AS has_units, j->'epsilon' AS epsilon,
       j ? 'l2_selection' AS selected FROM m;
SELECT neighbors, epsilon FROM dperm.ledger WHERE 'events'::regclass = ANY (relations)
 ORDER BY id DESC LIMIT 1;

-- The attack: two tables that differ only in one customer's rows (1 row,
-- or 300 copies of an extreme row). Every other customer has one row, so
-- with k = 2 each is read twice in both tables, and customer 0 contributes
-- exactly 2 slots either way: with the same seed (the same noisy count, the
-- same units read, the same noise) the two releases differ by at most 2
-- slots' sensitivity. Unbounded, 300 rows would move the model far more
-- (and change n).
CREATE TABLE one_row (customer_id int, features float8[], label boolean);
INSERT INTO one_row SELECT c, ARRAY[(c % 9) / 9.0 - 0.4, (c % 7) / 7.0 - 0.4], c % 4 = 0
  FROM generate_series(1, 200) c;
CREATE TABLE many_rows AS SELECT * FROM one_row;
INSERT INTO one_row VALUES (0, ARRAY[0.1, 0.1], false);
INSERT INTO many_rows SELECT 0, ARRAY[0.7, -0.7], true FROM generate_series(1, 300);
SELECT dperm.set_budget('one_row', 100, 0, privacy_unit => 'customer_id', max_rows_per_unit => 2);
SELECT dperm.set_budget('many_rows', 100, 0, privacy_unit => 'customer_id', max_rows_per_unit => 2);
CREATE FUNCTION coefficients(m jsonb) RETURNS float8[] LANGUAGE sql AS $$
  SELECT array_agg(v::float8) || (m->>'intercept')::float8 FROM jsonb_array_elements_text(m->'coefficients') v $$;
WITH a AS (SELECT dperm.train('one_row', 'features', 'label', 'logistic',
                              dp_options(epsilon => 1, l2 => 0.05, algorithm => 'bolton', dimension => 2, seed => 7))::jsonb j),
     b AS (SELECT dperm.train('many_rows', 'features', 'label', 'logistic',
                              dp_options(epsilon => 1, l2 => 0.05, algorithm => 'bolton', dimension => 2, seed => 7))::jsonb j)
SELECT a.j->'n' = b.j->'n' AS same_n,
       sqrt((SELECT sum((x - y) ^ 2) FROM unnest(coefficients(a.j), coefficients(b.j)) u(x, y)))
         <= 2 * (a.j->>'sensitivity')::float8 AS within_two_slots,
       (a.j->>'sensitivity')::float8 > 0 AS sensitivity_positive
  FROM a, b;

-- The same pair released per row (no unit) is told apart: the 300 rows
-- move the model beyond what two slots can.
CREATE TABLE one_row_plain AS SELECT features, label FROM one_row;
CREATE TABLE many_rows_plain AS SELECT features, label FROM many_rows;
WITH a AS (SELECT dperm.train('one_row_plain', 'features', 'label', 'logistic',
                              dp_options(epsilon => 1, l2 => 0.05, algorithm => 'bolton', dimension => 2, seed => 7))::jsonb j),
     b AS (SELECT dperm.train('many_rows_plain', 'features', 'label', 'logistic',
                              dp_options(epsilon => 1, l2 => 0.05, algorithm => 'bolton', dimension => 2, seed => 7))::jsonb j)
SELECT a.j->'n' AS n_one, b.j->'n' AS n_many,
       sqrt((SELECT sum((x - y) ^ 2) FROM unnest(coefficients(a.j), coefficients(b.j)) u(x, y)))
         > 2 * (a.j->>'sensitivity')::float8 AS beyond_two_slots
  FROM a, b;

-- dp_explain shows a unit-level plan: n counts units.
SELECT e->'n' AS n, e->'epsilon' AS epsilon, e->'privacy_unit'->'units' AS units,
       e->'privacy_unit'->'row_epsilon' AS row_epsilon
  FROM (SELECT dp_explain('logistic', 60, 2, dp_options(epsilon => 1, max_rows_per_unit => 4)) e) s;

-- Named models are unit-level too; dperm.evaluate on a relation with a unit
-- is dperm.evaluate_query's on SELECT * FROM it (each unit bounded to k
-- rows, n released noisily with the metric sums).
SELECT dperm.train_model('per_customer', 'events', 'features', 'label', 'logistic',
                         dp_options(epsilon => 1, dimension => 2));
SELECT ((dperm.model('per_customer')).model::jsonb)->'privacy_unit'->>'column' AS model_unit;
\set VERBOSITY terse
SELECT e->'privacy_unit' AS unit, e->'n_noisy' AS n_noisy, e ? 'accuracy' AS has_accuracy
  FROM (SELECT dperm.evaluate('per_customer', 'events', 'features', 'label', '{"epsilon": 1}') e) s;
\set VERBOSITY default
-- (the default algorithm depends on n = units x k, and units is the noisy
-- count of an unseeded release: objective where n times the row-level epsilon
-- is at least 100 d, else bolton)
SELECT ((dperm.model('per_customer')).model::jsonb)->>'algorithm' IN ('objective', 'bolton') AS pure_default,
       neighbors, epsilon FROM dperm.ledger
 WHERE 'events'::regclass = ANY (relations) ORDER BY id DESC LIMIT 1;

-- The unit's column is fixed once a release was charged; k may change
-- (each release bounds its own rows).
\set VERBOSITY terse
SELECT dperm.set_budget('events', 20, 1e-5, privacy_unit => 'label', max_rows_per_unit => 4);
\set VERBOSITY default
SELECT dperm.set_budget('events', 20, 1e-5, max_rows_per_unit => 3);
SELECT privacy_unit, max_rows_per_unit FROM dperm.budget_status WHERE relation = 'events'::regclass;
-- A budget with a unit moves only to a relation that has the column.
CREATE TABLE events_reload (id int, features float8[], label boolean);
\set VERBOSITY terse
SELECT dperm.move_budget('events', 'events_reload');
\set VERBOSITY default
