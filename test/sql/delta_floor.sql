-- The floor on delta (options.hpp kMinDelta; noise.hpp, SAMPLER FAILURE):
-- dperm's Gaussian samplers may fail with probability up to about 1e-55 per
-- draw, so a delta > 0 below 1e-30 would not dominate that. It is refused
-- while the options are read, with 22023, before any charge: no ledger row,
-- nothing spent. delta = 0 (pure epsilon-DP, exact discrete Laplace) and
-- delta >= 1e-30 release as before.
SET max_parallel_workers_per_gather = 0;
CREATE FUNCTION pg_temp.sqlstate_of(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;
CREATE TABLE floor_rows AS
  SELECT i, ARRAY[sin(i) / 2, cos(i) / 2] AS features, sin(3 * i) > 0 AS label
    FROM generate_series(1, 400) i;
SELECT dperm.set_budget('floor_rows', 10, 1e-3);
SELECT count(*) AS ledger_rows_before FROM dperm.ledger \gset

-- dp_options names the floor.
SELECT dp_options(epsilon => 1, delta => 1e-100);
SELECT dp_options(epsilon => 1, delta => 9.99e-31);
-- The same options as plain jsonb reach the aggregate, dperm.train and
-- dp_explain: refused alike, as invalid_parameter_value.
SELECT dp_logreg(features, label, '{"epsilon": 1, "delta": 1e-100}') FROM floor_rows;
SELECT pg_temp.sqlstate_of($$SELECT dp_logreg(features, label, '{"epsilon": 1, "delta": 1e-100, "algorithm": "dp_gd"}') FROM floor_rows$$) AS aggregate,
       pg_temp.sqlstate_of($$SELECT dperm.train('floor_rows', 'features', 'label', 'logistic', '{"epsilon": 1, "delta": 1e-100}')$$) AS train,
       pg_temp.sqlstate_of($$SELECT dperm.train('floor_rows', 'features', 'label', 'logistic', '{"epsilon": 1, "delta": 1e-100}', 'streaming')$$) AS streaming,
       pg_temp.sqlstate_of($$SELECT dp_explain('logistic', 400, 2, '{"epsilon": 1, "delta": 1e-100}')$$) AS explain;
-- Nothing was charged: no ledger row, the budget untouched.
SELECT count(*) = :ledger_rows_before AS no_ledger_row FROM dperm.ledger;
SELECT epsilon_spent, delta_spent, releases
  FROM dperm.budget_status WHERE relation = 'floor_rows'::regclass;

-- At the floor and above, and at delta = 0, releases go on (and are charged).
SELECT (dp_options(epsilon => 1, delta => 1e-30)->>'delta')::float8 AS at_the_floor;
SELECT dp_logreg(features, label, dp_options(epsilon => 0.5, delta => 1e-30, algorithm => 'dp_gd', dimension => 2))
         IS NOT NULL AS released_at_floor,
       dp_logreg(features, label, dp_options(epsilon => 0.5, l2 => 0.1, dimension => 2)) IS NOT NULL AS released_pure
  FROM floor_rows;
SELECT count(*) - :ledger_rows_before AS new_ledger_rows FROM dperm.ledger;
SELECT releases FROM dperm.budget_status WHERE relation = 'floor_rows'::regclass;
SET client_min_messages = warning;
SELECT dperm.retire_budget('floor_rows');
RESET client_min_messages;
DROP TABLE floor_rows;
