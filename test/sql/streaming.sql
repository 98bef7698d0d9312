-- dperm.train's streaming mode: one charge, then one pass of a
-- per-pass aggregate per gradient; the seeded model equals the in-memory one.
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE st AS
  SELECT i,
         CASE WHEN i % 97 = 0 THEN NULL
              WHEN i % 89 = 0 THEN ARRAY[NULL, 'NaN', 1e300]::float8[]
              ELSE ARRAY[sin(i), cos(3 * i), 0.5 * sin(7 * i)] END AS f,
         CASE WHEN i % 83 = 0 THEN NULL ELSE sin(i) + cos(3 * i) > 0 END AS y,
         CASE WHEN i % 83 = 0 THEN NULL ELSE sin(i) + 0.3 * cos(3 * i) END AS t,
         CASE WHEN i % 79 = 0 THEN NULL WHEN i % 71 = 0 THEN 9
              ELSE ((sin(i) > 0)::int + (cos(3 * i) > 0)::int) END AS k
    FROM generate_series(1, 3000) i;
ANALYZE st;

-- max |coefficient difference| between two models
CREATE FUNCTION model_gap(a dp_model, b dp_model) RETURNS float8 LANGUAGE sql AS $$
  SELECT max(abs(x.coefficient - y.coefficient))
    FROM dp_coefficients(a) x JOIN dp_coefficients(b) y
      ON x.term = y.term AND x.class IS NOT DISTINCT FROM y.class $$;

-- Same seed, same options: streaming = in memory, for each loss and
-- full-batch algorithm (NULL rows imputed, NaN/huge values clipped alike).
-- Streaming has no private offset (docs/user-guide.md, The intercept): the in-memory
-- side is asked for the same plain intercept.
CREATE TABLE pairs (loss text, label text, options jsonb);
INSERT INTO pairs VALUES
  ('logistic', 'y', dp_options(epsilon => 1, algorithm => 'output_gd', l2 => 0.05, seed => 7, intercept => 'fitted')),
  ('logistic', 'y', dp_options(epsilon => 1, algorithm => 'output_gd', seed => 7, intercept => 'fitted')),
  ('logistic', 'y', dp_options(epsilon => 1, delta => 1e-6, algorithm => 'dp_gd', iterations => 60, seed => 7, intercept => 'fitted')),
  ('logistic', 'y', dp_options(epsilon => 1, delta => 1e-6, algorithm => 'dp_gd', l1 => 0.001, iterations => 40, seed => 7, intercept => 'fitted')),
  ('logistic', 't', dp_options(epsilon => 1, algorithm => 'output_gd', l2 => 0.05, seed => 7, intercept => 'fitted')),
  ('huber', 't', dp_options(epsilon => 1, algorithm => 'output_gd', l2 => 0.05, seed => 7, intercept => 'fitted')),
  ('huber', 't', dp_options(epsilon => 1, delta => 1e-6, algorithm => 'dp_gd', iterations => 60, seed => 7, intercept => 'fitted')),
  ('huber', 't', dp_options(epsilon => 1, delta => 1e-6, algorithm => 'dp_accmd', iterations => 30, seed => 7, intercept => 'fitted')),
  ('softmax', 'k', dp_options(epsilon => 1, algorithm => 'output_gd', l2 => 0.05, classes => 3, seed => 7, intercept => 'fitted')),
  ('softmax', 'k', dp_options(epsilon => 1, delta => 1e-6, algorithm => 'dp_gd', iterations => 40, classes => 3, seed => 7, intercept => 'fitted')),
  ('logistic', 'y', dp_options(epsilon => 1, delta => 1e-6, algorithm => 'dp_newton', seed => 7, intercept => 'fitted'));
SELECT count(*) AS ledger_before FROM dperm.ledger \gset
SELECT loss, label, options->>'algorithm' AS algorithm, m_mem::jsonb->>'n' AS n,
       model_gap(m_mem, m_str) = 0 AS same_model,
       (m_mem::jsonb->'plan'->>'iterations') = (m_str::jsonb->'plan'->>'iterations') AS same_plan
  FROM (SELECT loss, label, options,
               dperm.train('st', 'f', label, loss, options, mode => 'in_memory') AS m_mem,
               dperm.train('st', 'f', label, loss, options, mode => 'streaming') AS m_str
          FROM pairs) r
 ORDER BY 1, 2, 3, options::text;
-- one ledger row per release, streaming or not
SELECT count(*) - :ledger_before AS new_ledger_rows FROM dperm.ledger;
SELECT n, d, algorithm, epsilon, relation_names FROM dperm.ledger ORDER BY id DESC LIMIT 1;

-- auto: in memory while the rows fit in dperm.max_buffer, streaming above;
-- without an algorithm and with l2 > 0 the in-memory default is bolton,
-- which reads rows one by one; streaming's default is output_gd.
SELECT dperm.train('st', 'f', 'y', 'logistic', dp_options(epsilon => 1, l2 => 0.05, seed => 1))::jsonb->>'algorithm' AS fits;
SET dperm.max_buffer = '64kB';  -- 3000 rows x 4 float8 = 94 kB
SELECT dperm.train('st', 'f', 'y', 'logistic', dp_options(epsilon => 1, l2 => 0.05, seed => 1))::jsonb->>'algorithm' AS too_big;
SELECT (dperm.train('st', 'f', 'y', 'logistic', dp_options(epsilon => 1, seed => 1))::jsonb->>'n')::int AS n;
-- streaming defaults need at most 100 passes whatever n. At l2 = 0, delta > 0
-- Theorem 6.3's T for dp_gd grows with n (202 here; 188 in memory, where the
-- offset stage leaves dp_gd epsilon = 1 - 4/sqrt(3000)); above 100 dp_gd runs
-- 100 steps with Nesterov's momentum instead, in memory and streaming alike
-- (dp_newton's 6 passes replace it from 10^5 rows: below, after the
-- parallel passes)
SELECT m->>'algorithm' AS algorithm, m->'plan'->>'iterations' AS passes,
       m->'plan'->>'nesterov' AS nesterov
  FROM (SELECT dperm.train('st', 'f', 'y', 'logistic', dp_options(epsilon => 1, delta => 1e-6, seed => 1))::jsonb AS m) r;
RESET dperm.max_buffer;
SELECT m->>'algorithm' AS algorithm, m->'plan'->>'iterations' AS in_memory_iterations,
       m->'plan'->>'nesterov' AS nesterov
  FROM (SELECT dperm.train('st', 'f', 'y', 'logistic', dp_options(epsilon => 1, delta => 1e-6, l2 => 0, seed => 1))::jsonb AS m) r;
-- with no l2 given the in-memory default takes DefaultL2's sqrt(d)/(n epsilon)
-- = sqrt(3)/3000 = 5.77e-4 (objective); streaming's rule gives 0 (dp_gd above)
SELECT m->>'algorithm' AS algorithm, round((m->'plan'->>'l2')::numeric, 7) AS l2,
       m->'plan'->>'mu' = m->'plan'->>'l2' AS mu_is_l2,
       left(m->'plan'->>'l2_rule', 59) AS l2_rule, m->'options' ? 'l2' AS l2_in_options
  FROM (SELECT dperm.train('st', 'f', 'y', 'logistic', dp_options(epsilon => 1, delta => 1e-6, seed => 1))::jsonb AS m) r;
SET dperm.max_buffer = '64kB';
SELECT m->'plan'->>'l2' AS streaming_l2, left(m->'plan'->>'l2_rule', 27) AS l2_rule
  FROM (SELECT dperm.train('st', 'f', 'y', 'logistic', dp_options(epsilon => 1, delta => 1e-6, seed => 1))::jsonb AS m) r;
-- forcing in_memory past the limit: refused before any row is read, uncharged
SELECT count(*) AS ledger_before FROM dperm.ledger \gset
SELECT dperm.train('st', 'f', 'y', 'logistic', dp_options(epsilon => 1, seed => 1), mode => 'in_memory');
-- an algorithm that reads single rows cannot stream: refused, uncharged
SELECT dperm.train('st', 'f', 'y', 'logistic', dp_options(epsilon => 1, algorithm => 'bolton', l2 => 0.1), mode => 'streaming');
SELECT dperm.train('st', 'f', 'y', 'logistic', dp_options(epsilon => 1), mode => 'fast');
SELECT count(*) = :ledger_before AS nothing_charged FROM dperm.ledger;
RESET dperm.max_buffer;

-- Parallel passes: the per-pass aggregate combines partial states
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF)
  SELECT dperm.pass_logreg(f, y, '{0,0,0,0}', '{0,3,1,1,1,0}') FROM st;
CREATE TABLE big AS
  SELECT i, ARRAY[sin(i), cos(3 * i), 0.5 * sin(7 * i)] AS f, sin(i) + cos(3 * i) > 0 AS y
    FROM generate_series(1, 200000) i;
ANALYZE big;
SELECT model_gap(dperm.train('big', 'f', 'y', 'logistic', dp_options(epsilon => 1, algorithm => 'output_gd', l2 => 0.05, seed => 3, intercept => 'fitted'), mode => 'streaming'),
                 dperm.train('big', 'f', 'y', 'logistic', dp_options(epsilon => 1, algorithm => 'output_gd', l2 => 0.05, seed => 3, intercept => 'fitted'), mode => 'in_memory'))
       = 0 AS parallel_same_model;
-- dp_newton's curvature passes combine their dim (dim + 3)/2 sums alike
SELECT model_gap(dperm.train('big', 'f', 'y', 'logistic', dp_options(epsilon => 1, delta => 1e-6, algorithm => 'dp_newton', seed => 3, intercept => 'fitted'), mode => 'streaming'),
                 dperm.train('big', 'f', 'y', 'logistic', dp_options(epsilon => 1, delta => 1e-6, algorithm => 'dp_newton', seed => 3, intercept => 'fitted'), mode => 'in_memory'))
       = 0 AS parallel_newton_same_model;
-- the streaming default at l2 = 0, delta > 0 from 10^5 rows with
-- n epsilon/d^2 >= 56 (200000/9 here): dp_newton's 6 passes
SELECT m->>'algorithm' AS algorithm, m->'plan'->>'iterations' AS passes,
       m->'plan'->>'algorithm_rule' LIKE '%n >= 100000, n epsilon/d^2 >= 56 and at most 64 coordinates: dp_newton%' AS rule_says_why
  FROM (SELECT dperm.train('big', 'f', 'y', 'logistic', dp_options(epsilon => 1, delta => 1e-6, seed => 1), mode => 'streaming')::jsonb AS m) r;
SET max_parallel_workers_per_gather = 0;

-- Rows of another shape are no error: padded (or truncated) with zeros to
-- d alike in both modes, counted in n, each release charged once
INSERT INTO st VALUES (0, ARRAY[1, 2], true, 1, 1), (0, ARRAY[[1, 2], [3, 4]], true, 1, 1);
SELECT count(*) AS ledger_before FROM dperm.ledger \gset
SELECT m::jsonb->>'n' AS n, m::jsonb->>'d' AS d,
       model_gap(m, dperm.train('st', 'f', 'y', 'logistic', dp_options(epsilon => 1, algorithm => 'output_gd', seed => 1, intercept => 'fitted'), mode => 'in_memory'))
         = 0 AS ragged_same_model
  FROM dperm.train('st', 'f', 'y', 'logistic', dp_options(epsilon => 1, algorithm => 'output_gd', seed => 1, intercept => 'fitted'), mode => 'streaming') m;
SELECT count(*) - :ledger_before AS charged FROM dperm.ledger;
DELETE FROM st WHERE i = 0;
-- an empty relation releases nothing and charges nothing
CREATE TABLE st_empty (f float8[], y boolean);
SELECT dperm.train('st_empty', 'f', 'y', 'logistic', dp_options(epsilon => 1), mode => 'streaming') IS NULL AS empty;

-- The first pass keeps the rows in a temporary file (dperm.streaming_spill,
-- on by default) and every later pass reads it: the query runs once. A view
-- that counts the rows it returns (a sequence in its WHERE clause) shows
-- how often it ran: once for the count, once for the first pass. Without
-- the file -- turned off, or temp_file_limit too small for n (d + 1) float8
-- values -- every pass runs the query. The model is the same bits.
CREATE SEQUENCE st_reads;
CREATE VIEW st_counted AS SELECT * FROM st WHERE nextval('st_reads') > 0;
CREATE FUNCTION reads_per_row() RETURNS float8 LANGUAGE sql AS $$
  SELECT (SELECT last_value FROM st_reads) / 3000.0 $$;
CREATE TABLE spill_runs (what text, model dp_model, reads float8);
CREATE FUNCTION spill_run(what text, loss text, label text, options jsonb) RETURNS void LANGUAGE sql AS $$
  SELECT setval('st_reads', 1, false);
  INSERT INTO spill_runs
    SELECT what, m, reads_per_row() - 1
      FROM dperm.train('st_counted', 'f', label, loss, options, mode => 'streaming') m $$;
SELECT spill_run('logistic, file', 'logistic', 'y', dp_options(epsilon => 1, delta => 1e-6, algorithm => 'dp_gd', iterations => 60, seed => 7, intercept => 'fitted'));
SET dperm.streaming_spill = off;
SELECT spill_run('logistic, no file', 'logistic', 'y', dp_options(epsilon => 1, delta => 1e-6, algorithm => 'dp_gd', iterations => 60, seed => 7, intercept => 'fitted'));
RESET dperm.streaming_spill;
SET temp_file_limit = '64kB';  -- 3000 rows x 4 float8 = 96 kB: more than half of it
SELECT spill_run('logistic, temp_file_limit', 'logistic', 'y', dp_options(epsilon => 1, delta => 1e-6, algorithm => 'dp_gd', iterations => 60, seed => 7, intercept => 'fitted'));
RESET temp_file_limit;
SELECT spill_run('huber, file', 'huber', 't', dp_options(epsilon => 1, algorithm => 'output_gd', l2 => 0.05, seed => 7, intercept => 'fitted'));
SET dperm.streaming_spill = off;
SELECT spill_run('huber, no file', 'huber', 't', dp_options(epsilon => 1, algorithm => 'output_gd', l2 => 0.05, seed => 7, intercept => 'fitted'));
RESET dperm.streaming_spill;
SELECT spill_run('softmax, file', 'softmax', 'k', dp_options(epsilon => 1, delta => 1e-6, algorithm => 'dp_gd', iterations => 40, classes => 3, seed => 7, intercept => 'fitted'));
SET dperm.streaming_spill = off;
SELECT spill_run('softmax, no file', 'softmax', 'k', dp_options(epsilon => 1, delta => 1e-6, algorithm => 'dp_gd', iterations => 40, classes => 3, seed => 7, intercept => 'fitted'));
RESET dperm.streaming_spill;
-- query_runs: how many times the passes ran the view's query (the count
-- reads it once more, plus one row for d): once with the file, once a pass
-- without it (dp_gd's 60 and 40 iterations, output_gd's T)
SELECT what, floor(reads)::int AS query_runs, r.model::jsonb->'plan'->>'iterations' AS iterations,
       model_gap(model, (SELECT model FROM spill_runs f
                          WHERE f.what = split_part(r.what, ',', 1) || ', file')) = 0 AS same_model_as_file
  FROM spill_runs r ORDER BY what;
-- A view that runs a pass of its own whenever dperm.internal_pass is on:
-- the first pass reads the view's rows into the file with it off (a cursor,
-- as in memory) and the later passes read the file, so nothing the view
-- runs adds to the release's sums; the model is the one of the view's rows.
CREATE TABLE st_small AS SELECT * FROM st WHERE i <= 40;
CREATE FUNCTION nested_pass() RETURNS boolean LANGUAGE sql AS $$
  SELECT current_setting('dperm.internal_pass') = 'off' OR
         (SELECT dperm.pass_logreg(f, y, '{0,0,0,0}', '{0,3,1,1,1,0,1,0,-40,0}') IS NOT NULL
            FROM (SELECT * FROM public.st_small LIMIT 3) s) $$;
CREATE VIEW st_nested AS SELECT * FROM st_small WHERE nested_pass();
SELECT model_gap(dperm.train('st_nested', 'f', 'y', 'logistic', dp_options(epsilon => 1, algorithm => 'output_gd', l2 => 0.05, seed => 2, intercept => 'fitted'), mode => 'streaming'),
                 dperm.train('st_small', 'f', 'y', 'logistic', dp_options(epsilon => 1, algorithm => 'output_gd', l2 => 0.05, seed => 2, intercept => 'fitted'), mode => 'in_memory'))
       = 0 AS nested_pass_same_model;

-- Attacks: the per-pass aggregates return exact gradients; no role can
-- run them outside dperm.train's passes.
CREATE ROLE regress_stream_eve LOGIN;
GRANT SELECT ON st TO regress_stream_eve;
SET ROLE regress_stream_eve;
SELECT dperm.pass_logreg(f, y, '{0,0,0,0}', '{0,3,1,1,1,0}') FROM st;
SET dperm.internal_pass = on;
SELECT set_config('dperm.internal_pass', 'on', false);
CREATE FUNCTION pg_temp.grads() RETURNS float8[] LANGUAGE sql
  SET dperm.internal_pass = on
  AS $$ SELECT dperm.pass_logreg(f, y, '{0,0,0,0}', '{0,3,1,1,1,0}') FROM public.st $$;
SELECT dperm.pass_logreg_bool_step('{}', ARRAY[1, 2, 3]::float8[], true, '{0,0,0,0}', '{0,3,1,1,1,0}');
-- dperm.train on a relation she can read: with her rights, charged, under her name
SELECT (dperm.train('public.st', 'f', 'y', 'logistic', dp_options(epsilon => 1), mode => 'streaming')::jsonb->>'n')::int AS n;
SELECT role, n, relation_names FROM dperm.ledger ORDER BY id DESC LIMIT 1;
-- ... but not on one she cannot read
SELECT dperm.train('public.big', 'f', 'y', 'logistic', dp_options(epsilon => 1), mode => 'streaming');
RESET ROLE;
-- row-level security as the caller sees it: she trains on her rows only
ALTER TABLE st ENABLE ROW LEVEL SECURITY;
CREATE POLICY eve_rows ON st FOR SELECT TO regress_stream_eve USING (i <= 1000);
SET ROLE regress_stream_eve;
SELECT (dperm.train('public.st', 'f', 'y', 'logistic', dp_options(epsilon => 1), mode => 'streaming')::jsonb->>'n')::int AS n_streaming,
       (dperm.train('public.st', 'f', 'y', 'logistic', dp_options(epsilon => 1), mode => 'in_memory')::jsonb->>'n')::int AS n_in_memory;
RESET ROLE;
ALTER TABLE st DISABLE ROW LEVEL SECURITY;
-- a protected relation streams as its owner, for its analysts
CREATE ROLE regress_stream_owner;
CREATE TABLE prot AS SELECT * FROM st;
ALTER TABLE prot OWNER TO regress_stream_owner;
SET ROLE regress_stream_owner;
SELECT dperm.protect('prot', ARRAY['regress_stream_eve']::regrole[]);
RESET ROLE;
SET ROLE regress_stream_eve;
SELECT * FROM public.prot LIMIT 1;
SELECT model_gap(dperm.train('public.prot', 'f', 'y', 'logistic', dp_options(epsilon => 1, algorithm => 'output_gd', seed => 5, intercept => 'fitted', dimension => 3), mode => 'streaming'),
                 dperm.train('public.prot', 'f', 'y', 'logistic', dp_options(epsilon => 1, algorithm => 'output_gd', seed => 5, intercept => 'fitted', dimension => 3), mode => 'in_memory'))
       = 0 AS protected_same_model;
SELECT dperm.pass_logreg(f, y, '{0,0,0,0}', '{0,3,1,1,1,0}') FROM public.prot;
RESET ROLE;
DELETE FROM dperm.protected WHERE relation = 'prot'::regclass;
DROP TABLE prot;
DROP OWNED BY regress_stream_eve, regress_stream_owner;
DROP ROLE regress_stream_eve, regress_stream_owner;
