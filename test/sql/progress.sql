-- dperm.progress: one row per backend training a release. Here
-- the backend watches its own release: max() reads this backend's row as
-- dp_logreg reads the rows of the same scan (rows_read moves every 100000
-- rows); test/progress.sh watches releases from another session, through
-- cancels and errors, and across roles.
SET max_parallel_workers_per_gather = 0;
CREATE TABLE pt AS
  SELECT i, ARRAY[sin(i), cos(i)] AS f, sin(i) + cos(i) > 0 AS y FROM generate_series(1, 250000) i;
-- This backend's row without what changes from run to run, read afresh
-- (a statistics snapshot otherwise lasts until the end of the transaction).
CREATE FUNCTION own_progress() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_stat_clear_snapshot();
  RETURN (SELECT format('%s, %s, %s, %s, pass %s of %s, %s rows read, algorithm %s', p.relation,
                        p.loss, p.mode, p.phase, p.pass, p.passes_planned, p.rows_read,
                        coalesce(p.algorithm, '(not chosen yet)'))
            FROM dperm.progress p WHERE p.pid = pg_backend_pid());
END $$;
SELECT count(*) AS rows_before FROM dperm.progress;
SELECT released, unnest(seen) AS seen
  FROM (SELECT dp_logreg(f, y, dp_options(epsilon => 1, l2 => 0.1)) IS NOT NULL AS released,
               array_agg(DISTINCT own_progress()) FILTER (WHERE i % 50000 = 2) AS seen
          FROM pt) r;
-- the row ended with the release
SELECT own_progress() IS NULL AS ended;
-- an algorithm given in the options is shown from the first row
SELECT dp_logreg(f, y, dp_options(epsilon => 1, l2 => 0.1, algorithm => 'output_gd')) IS NOT NULL AS released,
       max(own_progress()) FILTER (WHERE i = 3) AS seen
  FROM pt;
-- dperm.train shows its own row, and ends it too
SELECT dperm.train('pt', 'f', 'y', 'logistic', dp_options(epsilon => 1, l2 => 0.1), mode => 'streaming') IS NOT NULL AS released;
SELECT own_progress() IS NULL AS ended;
-- any role may read the view; it shows only what its role may see
CREATE ROLE regress_progress_viewer;
SET ROLE regress_progress_viewer;
SELECT count(*) AS rows_seen FROM dperm.progress;
RESET ROLE;
DROP ROLE regress_progress_viewer;
SELECT attname, atttypid::regtype FROM pg_attribute
 WHERE attrelid = 'dperm.progress'::regclass AND attnum > 0 ORDER BY attnum;
DROP FUNCTION own_progress();
DROP TABLE pt;
