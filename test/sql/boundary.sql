-- The privacy boundary: no outcome of a release charged to a budgeted
-- relation depends on one row except through the noisy model. Each attack
-- compares two neighbouring tables (one row changed), as a DP guarantee
-- does, not the ledger. On dperm 0.6.0 every one of them told the two
-- tables apart with certainty (an error against a model, or a stated n).
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
SET client_min_messages = warning;

CREATE FUNCTION charges() RETURNS bigint LANGUAGE sql AS 'SELECT count(*) FROM dperm.ledger';
-- The outcome of a release, as an attacker sees it: n and d of the model, or the error.
CREATE FUNCTION outcome(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE m jsonb;
BEGIN
  EXECUTE q INTO m;
  RETURN coalesce('model n=' || (m->>'n') || ' d=' || (m->>'d'), 'NULL');
EXCEPTION WHEN OTHERS THEN
  RETURN 'error ' || SQLSTATE;
END $$;

-- Two neighbours: `same` and `odd` differ in row 1 only.
CREATE TABLE same (id int, f float8[], y boolean, c int);
INSERT INTO same SELECT i, ARRAY[0.3 * cos(i), 0.3 * sin(i)], i % 3 = 0, i % 3
  FROM generate_series(1, 300) i;
CREATE TABLE odd (LIKE same);
SELECT dperm.set_budget('same', 1000), dperm.set_budget('odd', 1000);

-- 1. Malformed rows are sanitised, never an error, never dropped: a ragged
-- row (here first in scan order, where 0.6.0 took d from), a 2-D row, an
-- empty one, NULL features, NULL label, a class outside 0 .. K-1.
CREATE FUNCTION neighbour(bad_f float8[], bad_y boolean, bad_c int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE odd;
  INSERT INTO odd VALUES (1, bad_f, bad_y, bad_c);
  INSERT INTO odd SELECT * FROM same WHERE id > 1;
END $$;
CREATE TABLE attacks (name text, f float8[], y boolean, c int);
INSERT INTO attacks VALUES
  ('ragged', '{0.1, 0.2, 0.3}', true, 0),
  ('short', '{0.1}', true, 0),
  ('two_d', '{{0.1, 0.2}, {0.3, 0.4}}', true, 0),
  ('empty', '{}', true, 0),
  ('null_features', NULL, true, 0),
  ('null_label', '{0.1, 0.2}', NULL, NULL),
  ('class_out_of_range', '{0.1, 0.2}', true, 7),
  ('class_negative', '{0.1, 0.2}', true, -1),
  ('nan_huge', '{NaN, 1e308}', true, 0);
SELECT a.name,
       outcome('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2, seed => 1))::jsonb FROM same') AS direct_same,
       (SELECT outcome('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2, seed => 1))::jsonb FROM odd')
          FROM neighbour(a.f, a.y, a.c)) AS direct_odd,
       outcome('SELECT dp_softmax(f, c, dp_options(epsilon => 0.5, l2 => 1, classes => 3, dimension => 2, seed => 1))::jsonb FROM odd') AS softmax_odd,
       outcome($q$SELECT dperm.train('odd', 'f', 'y', 'logistic', dp_options(epsilon => 0.5, l2 => 1, dimension => 2, seed => 1), 'in_memory')::jsonb$q$) AS train_odd,
       outcome($q$SELECT dperm.train('odd', 'f', 'y', 'logistic', dp_options(epsilon => 0.5, l2 => 1, dimension => 2, seed => 1), 'streaming')::jsonb$q$) AS streaming_odd
  FROM attacks a ORDER BY a.name;

-- dp_softmax keeps every row: classes outside 0 .. K-1 are clamped, not
-- dropped (0.6.0: 300 rows with classes 0, 1, 2 and classes => 2 gave n = 200).
SELECT (dp_softmax(f, c, dp_options(epsilon => 0.5, l2 => 1, classes => 2, dimension => 2, seed => 1)))::jsonb->>'n' AS n FROM same;

-- d is declared, never read from a row: without it a release charged to a
-- budget is refused before anything is read or charged.
SELECT charges() AS before \gset
SELECT outcome('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1))::jsonb FROM same') AS undeclared;
SELECT outcome($q$SELECT dperm.train('same', 'f', 'y', 'logistic', dp_options(epsilon => 0.5, l2 => 1))::jsonb$q$) AS undeclared_train;
SELECT charges() - :before AS charged;
\set VERBOSITY terse
SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1)) FROM same;
\set VERBOSITY default
-- feature_names declares d too; a disagreement is an options error.
SELECT (dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, feature_names => '{a, b}', seed => 1)))::jsonb->>'d' AS d FROM same;
SELECT dp_options(epsilon => 1, dimension => 3, feature_names => '{a, b}');

-- 2. A release charged to a budgeted relation reads every row of it once:
-- a filtered, grouped or joined input would state the exact size of a
-- subset (WHERE id = 7 gave "n": 1 on 0.6.0), and an empty group would
-- give no row where a non-empty one gives a model. Refused, uncharged,
-- empty or not.
SELECT charges() AS before \gset
SELECT q, outcome(q) FROM (VALUES
  ('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2))::jsonb FROM same WHERE id = 7'),
  ('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2))::jsonb FROM same WHERE id = -7'),
  ('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2))::jsonb FROM same GROUP BY id % 2 LIMIT 1'),
  ('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2))::jsonb FROM same WHERE id < 0 GROUP BY id % 2'),
  ('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2)) FILTER (WHERE id > 5)::jsonb FROM same'),
  ('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2))::jsonb FROM same HAVING count(*) > 1'),
  ('SELECT dp_logreg(DISTINCT f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2))::jsonb FROM same'),
  ('SELECT dp_logreg(s.f, s.y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2))::jsonb FROM same s JOIN odd o USING (id)'),
  ('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2))::jsonb FROM (SELECT * FROM same UNION ALL SELECT * FROM same) u'),
  ('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2))::jsonb FROM (SELECT * FROM same LIMIT 10) u'),
  ('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2))::jsonb FROM same TABLESAMPLE SYSTEM (50)'),
  ('SELECT dp_logreg(ARRAY[(SELECT max(id) FROM same)::float8, 0], y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2))::jsonb FROM same'),
  ('SELECT dp_logreg(ARRAY[(SELECT count(*) FROM odd o WHERE o.id = s.id)::float8, 0], y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2))::jsonb FROM same s'),
  ('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2, dataset => ''same''))::jsonb FROM (SELECT * FROM attacks WHERE name = ''ragged'') a'),
  ('WITH w AS (SELECT * FROM same WHERE id = 7) SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2))::jsonb FROM w'),
  ('SELECT (SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2))::jsonb FROM same WHERE same.id = a.c) FROM attacks a LIMIT 1'),
  ('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2)) OVER ()::jsonb FROM same WHERE id = -7')
) v(q);
SELECT charges() - :before AS charged;
\set VERBOSITY terse
SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2)) FROM same WHERE id = 7;
\set VERBOSITY default

-- Partition pruning drops both the partitions and the WHERE clause that
-- pruned them, and a partition read on its own is a subset too: the
-- budgeted parent's rows are read whole or not at all.
CREATE TABLE parted (region int, f float8[], y boolean) PARTITION BY LIST (region);
CREATE TABLE parted_0 PARTITION OF parted FOR VALUES IN (0);
CREATE TABLE parted_1 PARTITION OF parted FOR VALUES IN (1);
INSERT INTO parted SELECT i % 2, ARRAY[0.1, 0.2], i % 3 = 0 FROM generate_series(1, 100) i;
SELECT dperm.set_budget('parted', 100);
SELECT outcome('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2, seed => 1))::jsonb FROM parted') AS whole,
       outcome('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2, seed => 1))::jsonb FROM parted WHERE region = 0') AS pruned,
       outcome('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2, seed => 1))::jsonb FROM parted_1') AS partition;

-- dperm.train of a view that filters a budgeted relation: refused before
-- the count, so before the charge (0.6.0 released n of the subset).
CREATE VIEW same_7 AS SELECT f, y FROM same WHERE id = 7;
SELECT charges() AS before \gset
SELECT outcome($q$SELECT dperm.train('same_7', 'f', 'y', 'logistic', dp_options(epsilon => 0.5, l2 => 1, dimension => 2), 'in_memory')::jsonb$q$) AS view_in_memory,
       outcome($q$SELECT dperm.train('same_7', 'f', 'y', 'logistic', dp_options(epsilon => 0.5, l2 => 1, dimension => 2), 'streaming')::jsonb$q$) AS view_streaming;
SELECT charges() - :before AS charged;

-- The whole relation, and the same statement through a view of it, work.
CREATE VIEW same_all AS SELECT f, y FROM same;
SELECT outcome('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2, seed => 1))::jsonb FROM same') AS whole,
       outcome('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2, seed => 1))::jsonb FROM same_all') AS view,
       outcome($q$SELECT dperm.train('same_all', 'f', 'y', 'logistic', dp_options(epsilon => 0.5, l2 => 1, dimension => 2, seed => 1), 'streaming')::jsonb$q$) AS view_streaming;
-- Without a budget, nothing changes for filtered inputs (no guarantee is
-- claimed for a relation without one: docs/user-guide.md, Trust model).
CREATE TABLE free AS SELECT * FROM same;
SELECT outcome('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, seed => 1))::jsonb FROM free WHERE id <= 10') AS unbudgeted;

-- 3. Errors that need only public inputs cost nothing: the options (0.6.0
-- charged "dp_gd needs delta > 0" for l1 at delta = 0) and options that
-- would differ from row to row.
SELECT charges() AS before \gset
SELECT outcome('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l1 => 0.01, dimension => 2))::jsonb FROM same') AS l1_pure;
SELECT outcome('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5 + id * 0, l2 => 1, dimension => 2))::jsonb FROM same') AS row_options;
SELECT outcome('SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, l2 => 1, dimension => 2, seed => (random() * 10)::int))::jsonb FROM same') AS volatile_options;
SELECT outcome($q$SELECT dperm.train('same', 'f', 'y', 'logistic', dp_options(epsilon => 0.5, l1 => 0.01, dimension => 2))::jsonb$q$) AS l1_pure_train;
SELECT charges() - :before AS charged;

-- dperm.train charges an in-memory release before it reads the first row:
-- an error raised while reading (here a cast in a view, which counting
-- the rows does not evaluate) comes after the charge, and is paid for.
CREATE TABLE castfail (f float8[], y text);
INSERT INTO castfail VALUES ('{0.1, 0.2}', 'true'), ('{0.2, 0.1}', 'not a boolean');
CREATE VIEW castfail_v AS SELECT f, y::boolean AS y FROM castfail;
SELECT dperm.set_budget('castfail', 10);
SELECT charges() AS before \gset
SELECT outcome($q$SELECT dperm.train('castfail_v', 'f', 'y', 'logistic', dp_options(epsilon => 0.5, l2 => 1, dimension => 2), 'in_memory')::jsonb$q$) AS bad_row;
SELECT charges() - :before AS charged;

SELECT count(dperm.retire_budget(r)) FROM unnest(ARRAY['same', 'odd', 'parted', 'castfail']::regclass[]) r;
DROP TABLE same, odd, attacks, parted, free, castfail CASCADE;
DROP FUNCTION charges(), outcome(text), neighbour(float8[], boolean, int);
