-- Parallel aggregation: the combine, serialise and deserialise functions let
-- workers share the scan, and the parallel model equals the serial one.
SET dperm.allow_seed = on;
CREATE TABLE par AS
  SELECT i, ARRAY[0.5 * sin(i), 0.5 * cos(5 * i), 0.3 * sin(11 * i)] AS f,
         sin(i) + cos(5 * i) > 0 AS y
    FROM generate_series(1, 200000) i;
ANALYZE par;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF)
  SELECT dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 0.1, seed => 1)) FROM par;
-- the workers really run (plan shape alone does not prove it)
CREATE FUNCTION workers_launched(query text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
    IF line ~ 'Workers Launched' THEN RETURN substring(line from '(\d+)')::int; END IF;
  END LOOP;
  RETURN 0;
END $$;
SELECT workers_launched('SELECT dp_logreg(f, y, dp_options(algorithm => ''output_gd'', epsilon => 1, l2 => 0.1, seed => 1)) FROM par') > 0 AS parallel;
CREATE TABLE parallel_model AS
  SELECT dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 0.1, seed => 1)) AS m FROM par;
-- the leader's final function charged the ledger from a parallel plan
SELECT n, epsilon, relation_names FROM dperm.ledger ORDER BY id DESC LIMIT 1;

SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF)
  SELECT dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 0.1, seed => 1)) FROM par;
CREATE TABLE serial_model AS
  SELECT dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 0.1, seed => 1)) AS m FROM par;
-- Same rows, same seed: the models agree up to the order of floating-point
-- sums (row order differs between plans), i.e. as good as each other.
SELECT (p.m::jsonb->>'n')::int AS n,
       (SELECT max(abs(a.coefficient - b.coefficient))
          FROM dp_coefficients(p.m) a JOIN dp_coefficients(s.m) b USING (term)) < 1e-9 AS same_model
  FROM parallel_model p, serial_model s;
-- and the parallel model is accurate
SELECT avg(((dp_predict(m, f) > 0.5) = y)::int) > 0.8 AS accurate FROM par, parallel_model;
