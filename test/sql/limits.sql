-- No role can stall another: bounded work and memory per call
-- (docs/user-guide.md, "No role can stall another"). Timing checks are in test/stall.sh.
SET max_parallel_workers_per_gather = 0;
CREATE FUNCTION pg_temp.sqlstate_of(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- dperm.cron_next_run counts at most 10^6 runs ahead (the cap of
-- dperm.runs_that_fit); more is refused (22023) before any work.
SELECT dperm.cron_next_run('* * * * *', '2026-01-01 00:00+00', 1000000) AS millionth_minute;
SELECT pg_temp.sqlstate_of($$SELECT dperm.cron_next_run('* * * * *', '2026-01-01 00:00+00', 1000000000)$$);
SELECT pg_temp.sqlstate_of($$SELECT dperm.cron_next_run('* * * * *', '2026-01-01 00:00+00', 1000001)$$);
SELECT pg_temp.sqlstate_of($$SELECT dperm.cron_next_run('* * * * *', '2026-01-01 00:00+00', 0)$$);
-- also when the planner folds the constant call (it is IMMUTABLE)
SELECT pg_temp.sqlstate_of($$EXPLAIN SELECT dperm.cron_next_run('* * * * *', '2026-01-01 00:00+00', 1000000000)$$);
-- an impossible date has no forecast, whatever k
SELECT dperm.cron_next_run('0 0 31 2 *', '2026-01-01 00:00+00', 1000000) IS NULL AS never;
SELECT dperm.cron_next_run('0 0 30 2 *', '2026-01-01 00:00+00') IS NULL AS never;
-- a rare schedule (29 February) stops at the year 9999
SELECT dperm.cron_next_run('0 0 29 2 *', '2026-01-01 00:00+00', 1000000) IS NULL AS past_9999,
       dperm.cron_next_run('0 0 29 2 *', '2026-01-01 00:00+00', 3) AS third_leap_day;

-- dperm.max_release_memory: 1GB unless an administrator says otherwise;
-- any role may lower it, only a superuser may raise it.
SHOW dperm.max_release_memory;
CREATE ROLE regress_dperm_limits;
SET ROLE regress_dperm_limits;
SET dperm.max_release_memory = '64MB';
SHOW dperm.max_release_memory;
SET dperm.max_release_memory = '1GB';
SET dperm.max_release_memory = '2GB';
SELECT pg_temp.sqlstate_of($$SET dperm.max_release_memory = '1TB'$$);
SHOW dperm.max_release_memory;
RESET dperm.max_release_memory;
SHOW dperm.max_release_memory;
-- a role's own stored setting is checked when it is stored
ALTER ROLE regress_dperm_limits SET dperm.max_release_memory = '2GB';
RESET ROLE;
SET dperm.max_release_memory = '2GB';
SHOW dperm.max_release_memory;
RESET dperm.max_release_memory;

-- dp_explain shows the estimate: one formula over the algorithm's state
-- (registry.hpp): 8 (V dim + A n + 2^18 + 3 K) + 64 dim bytes.
SELECT a, (dp_explain('logistic', 1000, 3, dp_options(epsilon => 1, delta => 1e-6, l2 => 0.1,
                                                       algorithm => a))->>'memory_bytes')::bigint AS bytes
  FROM unnest(ARRAY['output_gd', 'dp_gd', 'dp_sgd', 'bolton', 'dp_svrg', 'objective']) a;
-- softmax with 99999 classes holds K (d + 1) coefficients per vector; the
-- SVRG family keeps the most vectors
SELECT a, round((dp_explain('softmax', 300, 2, dp_options(epsilon => 1, delta => 1e-6, classes => 99999,
                                                           l2 => 0.01, algorithm => a, iterations => 1))->>'memory_bytes')::numeric / 1048576) AS mb
  FROM unnest(ARRAY['output_gd', 'dp_sgd', 'dp_svrg']) a;
SELECT (dp_explain('logistic', 1000, 3, dp_options(epsilon => 1, delta => 1e-6, l2 => 'auto'))->>'memory_bytes')::bigint > 0
  AS selection_has_estimate;

-- Above the limit a release is refused (54000) before it is charged: the
-- estimate needs n, d and the options only.
CREATE TABLE limits_rows AS
  SELECT ARRAY[sin(i), cos(i)] AS f, i % 3 AS k FROM generate_series(1, 300) i;
SELECT dperm.set_budget('limits_rows', 100, 1e-3);
GRANT SELECT ON limits_rows TO regress_dperm_limits;
SET ROLE regress_dperm_limits;
SET dperm.max_release_memory = '32MB';
SELECT dp_softmax(f, k, dp_options(dimension => 2, epsilon => 1, delta => 1e-6, classes => 99999,
                                   l2 => 0.01, algorithm => 'dp_svrg')) FROM limits_rows;
SELECT pg_temp.sqlstate_of($$SELECT dp_softmax(f, k, dp_options(dimension => 2, epsilon => 1, delta => 1e-6, classes => 99999,
                                   l2 => 0.01, algorithm => 'dp_svrg')) FROM limits_rows$$);
SELECT pg_temp.sqlstate_of($$SELECT dperm.train('limits_rows', 'f', 'k', 'softmax',
         dp_options(dimension => 2, epsilon => 1, delta => 1e-6, classes => 99999, l2 => 0.01, algorithm => 'dp_svrg'))$$);
SELECT pg_temp.sqlstate_of($$SELECT dperm.train('limits_rows', 'f', 'k', 'softmax',
         dp_options(dimension => 2, epsilon => 1, delta => 1e-6, classes => 99999, algorithm => 'dp_gd'), mode => 'streaming')$$);
SELECT count(*) AS charged FROM dperm.ledger WHERE relations @> ARRAY['limits_rows'::regclass];
-- a release within the limit goes through and is charged
SELECT dp_softmax(f, k, dp_options(dimension => 2, epsilon => 1, delta => 1e-6, classes => 3)) IS NOT NULL AS released
  FROM limits_rows;
SELECT count(*) AS charged FROM dperm.ledger WHERE relations @> ARRAY['limits_rows'::regclass];
RESET dperm.max_release_memory;
RESET ROLE;

-- A release charged to a budget this transaction changed and has not
-- committed is refused at once (55P03), uncharged: the ledger writer can
-- never take that row.
BEGIN;
SELECT dperm.set_budget('limits_rows', 200, 1e-3);
SELECT pg_temp.sqlstate_of($$SELECT dp_logreg(f, k > 0, dp_options(dimension => 2, epsilon => 0.1, l2 => 1)) FROM limits_rows$$);
ROLLBACK;
SELECT count(*) AS charged FROM dperm.ledger WHERE relations @> ARRAY['limits_rows'::regclass];
REVOKE SELECT ON limits_rows FROM regress_dperm_limits;
ALTER ROLE regress_dperm_limits RESET ALL;
DROP ROLE regress_dperm_limits;
