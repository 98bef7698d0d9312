-- Parallel query and the in-memory aggregates. The aggregates are
-- PARALLEL RESTRICTED with no combine function: shipping every buffered row
-- from the workers to the leader made parallel plans slower than serial ones,
-- so the aggregate always runs in the leader and is never partial. With the
-- default parallel_tuple_cost the planner keeps the whole plan serial; when
-- told that tuples are free it may still scan in parallel below the
-- aggregate, and the model is the same.
SET dperm.allow_seed = on;
CREATE TABLE par AS
  SELECT i, ARRAY[0.5 * sin(i), 0.5 * cos(5 * i), 0.3 * sin(11 * i)] AS f,
         sin(i) + cos(5 * i) > 0 AS y
    FROM generate_series(1, 200000) i;
ANALYZE par;
SET parallel_setup_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
-- shipping rows costs more than training them in one backend: serial
EXPLAIN (COSTS OFF)
  SELECT dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 0.1, seed => 1)) FROM par;
SET parallel_tuple_cost = 0;
-- free tuples: a parallel scan under the aggregate, never a Partial Aggregate
EXPLAIN (COSTS OFF)
  SELECT dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 0.1, seed => 1)) FROM par;
SELECT p.proname, p.proparallel, a.aggcombinefn
  FROM pg_proc p JOIN pg_aggregate a ON a.aggfnoid = p.oid
 WHERE p.proname IN ('dp_logreg', 'dp_huber', 'dp_softmax') ORDER BY 1, 2;
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
-- the final function, in the leader, charged the ledger from a parallel plan
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

-- dperm.max_buffer caps the in-memory buffer: past it the aggregate refuses
-- cleanly (54000, hint: dperm.train), uncharged, whatever the plan.
SET max_parallel_workers_per_gather = 2;
SHOW dperm.max_buffer;
SET dperm.max_buffer = '4MB';  -- 200000 rows x 4 float8 = 6.1 MB
SELECT count(*) AS ledger_rows_before FROM dperm.ledger \gset
\set VERBOSITY sqlstate
SELECT dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 0.1, seed => 1)) FROM par;
\set VERBOSITY default
SET max_parallel_workers_per_gather = 0;
SELECT dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 0.1, seed => 1)) FROM par;
-- a ragged row does not change the answer (the refusal depends on n and d only)
INSERT INTO par VALUES (0, ARRAY[1, 2], true);
SELECT dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 0.1, seed => 1)) FROM par;
DELETE FROM par WHERE i = 0;
SELECT count(*) = :ledger_rows_before AS nothing_charged FROM dperm.ledger;
-- rows that fit still train
SELECT (dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 0.1, seed => 1))::jsonb->>'n')::int AS n
  FROM par WHERE i <= 100000;
RESET dperm.max_buffer;
-- an analyst cannot raise it
CREATE ROLE regress_buffer_analyst;
SET ROLE regress_buffer_analyst;
SET dperm.max_buffer = '1TB';
RESET ROLE;
DROP ROLE regress_buffer_analyst;

-- dperm.training_threads: in-memory passes over the rows split across
-- threads of the backend (row_parts.hpp). The sums are exact, so the model
-- is the same bits at every setting: the default (dp_gd at delta > 0),
-- objective perturbation, output_gd, Huber and softmax (only created_at differs).
SHOW dperm.training_threads;
SET max_parallel_workers_per_gather = 0;
-- 100,000 rows: logistic's pass (8 units a row) splits into 3 parts at 4
-- threads, 2 at 2 (row_parts.hpp: a part needs 2^18 units)
CREATE TABLE thr AS SELECT * FROM par WHERE i <= 100000;
CREATE TABLE thread_models (threads int, kind text, m text);
DO $$
DECLARE t int;
BEGIN
  FOREACH t IN ARRAY ARRAY[1, 2, 4] LOOP
    PERFORM set_config('dperm.training_threads', t::text, true);
    INSERT INTO thread_models
      SELECT t, 'default', dp_logreg(f, y, dp_options(epsilon => 1, delta => 1e-6, seed => 3)) FROM thr
      UNION ALL
      SELECT t, 'objective', dp_logreg(f, y, dp_options(algorithm => 'objective', epsilon => 1, l2 => 0.01, seed => 3)) FROM thr
      UNION ALL
      SELECT t, 'output_gd', dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 0.1, seed => 3)) FROM thr
      UNION ALL
      SELECT t, 'huber', dp_huber(f, sin(i), dp_options(epsilon => 1, delta => 1e-6, seed => 3)) FROM thr
      UNION ALL
      SELECT t, 'softmax', dp_softmax(f, (i % 3)::int, dp_options(epsilon => 1, delta => 1e-6, classes => 3, seed => 3)) FROM thr;
  END LOOP;
END $$;
SELECT kind, count(*) AS settings, count(DISTINCT m::jsonb - 'created_at') AS distinct_models,
       min(m::jsonb->>'algorithm') AS algorithm
  FROM thread_models GROUP BY kind ORDER BY kind;
-- a cancel during a split pass ends the statement cleanly; the backend goes on
SET dperm.training_threads = 2;
SET statement_timeout = '2s';
\set VERBOSITY sqlstate
SELECT dp_logreg(f, y, dp_options(algorithm => 'output_gd', epsilon => 1, l2 => 0.1,
                                  iterations => 100000000, seed => 1)) FROM par;
\set VERBOSITY default
RESET statement_timeout;
SELECT count(*) FROM par;
-- only a superuser sets it: it is how many cores one backend keeps busy
CREATE ROLE regress_thread_analyst;
SET ROLE regress_thread_analyst;
SET dperm.training_threads = 64;
RESET ROLE;
DROP ROLE regress_thread_analyst;
RESET dperm.training_threads;
