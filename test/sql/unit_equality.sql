-- A privacy unit is what the unit column's equality says, in every step of
-- a unit-level release (the noisy count, the ranking, the slots), whatever
-- the caller's settings; dperm's own statements run with every setting that
-- changes a value's text pinned. On 0.7.0 each table below failed after the
-- charge ("counted X rows but read Y"), while its neighbour written the
-- other way did not: an error that depends on one row.
SET dperm.allow_seed = on;
SET client_min_messages = warning;

-- train(rel): a seeded unit-level release; whether it read units * k slots.
CREATE FUNCTION unit_release(rel regclass, extra jsonb DEFAULT '{}') RETURNS boolean
LANGUAGE sql AS $$
  SELECT (j->>'n')::bigint = (j->'privacy_unit'->>'units')::bigint * (j->'privacy_unit'->>'max_rows_per_unit')::bigint
    FROM (SELECT dperm.train(rel, 'features', 'label', 'logistic',
                             dp_options(epsilon => 2, dimension => 2, seed => 11) || extra)::jsonb j) m $$;

-- numeric: 1 and 1.0 are one unit (equal), with different texts.
CREATE TABLE eq_numeric (u numeric, features float8[], label boolean);
INSERT INTO eq_numeric
SELECT CASE WHEN r % 2 = 0 THEN c::numeric ELSE round(c::numeric, 1) END,
       ARRAY[(c % 7) / 7.0, (r % 5) / 5.0], (c + r) % 2 = 0
  FROM generate_series(1, 40) c, generate_series(1, 3) r;
SELECT count(DISTINCT u) AS units, count(DISTINCT u::text) AS texts FROM eq_numeric;
SELECT dperm.set_budget('eq_numeric', 50, 1e-5, privacy_unit => 'u', max_rows_per_unit => 2);
SELECT unit_release('eq_numeric') AS numeric_ok;

-- float8: -0 and 0 are one unit.
CREATE TABLE eq_float (u float8, features float8[], label boolean);
INSERT INTO eq_float
SELECT CASE WHEN c = 1 AND r = 1 THEN '-0'::float8 WHEN c = 1 THEN 0 ELSE c END,
       ARRAY[(c % 7) / 7.0, (r % 5) / 5.0], (c + r) % 2 = 0
  FROM generate_series(1, 30) c, generate_series(1, 3) r;
SELECT dperm.set_budget('eq_float', 50, 1e-5, privacy_unit => 'u', max_rows_per_unit => 2);
SELECT unit_release('eq_float') AS float_zero_ok;

-- float8 units whose texts coincide at extra_float_digits = -15 (two units,
-- one text each way): the caller's setting changes nothing.
CREATE TABLE eq_digits (u float8, features float8[], label boolean);
INSERT INTO eq_digits
SELECT 1 + c * 1e-12, ARRAY[(c % 7) / 7.0, (r % 5) / 5.0], (c + r) % 2 = 0
  FROM generate_series(1, 40) c, generate_series(1, 3) r;
SELECT dperm.set_budget('eq_digits', 50, 1e-5, privacy_unit => 'u', max_rows_per_unit => 2);
SELECT dperm.train('eq_digits', 'features', 'label', 'logistic',
                   dp_options(epsilon => 2, dimension => 2, seed => 11))::jsonb->'coefficients' AS coefficients \gset default_
SET extra_float_digits = -15;
SELECT count(DISTINCT u) AS units, count(DISTINCT u::text) AS texts FROM eq_digits;
-- The same units and slots, so the same seeded model, bit for bit.
SELECT dperm.train('eq_digits', 'features', 'label', 'logistic',
                   dp_options(epsilon => 2, dimension => 2, seed => 11))::jsonb->'coefficients'
       = :'default_coefficients'::jsonb AS same_model_at_minus_15_digits;
RESET extra_float_digits;

-- timestamptz units under another TimeZone and DateStyle: the same model.
CREATE TABLE eq_time (u timestamptz, features float8[], label boolean);
INSERT INTO eq_time
SELECT '2020-01-01 00:00:00+00'::timestamptz + c * interval '1 hour',
       ARRAY[(c % 7) / 7.0, (r % 5) / 5.0], (c + r) % 2 = 0
  FROM generate_series(1, 40) c, generate_series(1, 3) r;
SELECT dperm.set_budget('eq_time', 50, 1e-5, privacy_unit => 'u', max_rows_per_unit => 2);
SELECT dperm.train('eq_time', 'features', 'label', 'logistic',
                   dp_options(epsilon => 2, dimension => 2, seed => 11))::jsonb->'coefficients' AS coefficients \gset time_
SET TimeZone = 'Asia/Kathmandu';
SET DateStyle = 'SQL, DMY';
SELECT dperm.train('eq_time', 'features', 'label', 'logistic',
                   dp_options(epsilon => 2, dimension => 2, seed => 11))::jsonb->'coefficients'
       = :'time_coefficients'::jsonb AS same_model_in_other_zone;
RESET TimeZone;
RESET DateStyle;

-- interval: '1 day' and '24 hours' are equal.
CREATE TABLE eq_interval (u interval, features float8[], label boolean);
INSERT INTO eq_interval
SELECT CASE WHEN r = 1 THEN c * interval '1 day' ELSE c * interval '24 hours' END,
       ARRAY[(c % 7) / 7.0, (r % 5) / 5.0], (c + r) % 2 = 0
  FROM generate_series(1, 30) c, generate_series(1, 3) r;
SELECT count(DISTINCT u) AS units, count(DISTINCT u::text) AS texts FROM eq_interval;
SELECT dperm.set_budget('eq_interval', 50, 1e-5, privacy_unit => 'u', max_rows_per_unit => 2);
SELECT unit_release('eq_interval') AS interval_ok;

-- A nondeterministic (case-insensitive) collation: 'Ann' and 'ANN' are one
-- person.
CREATE COLLATION eq_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE eq_text (u text COLLATE eq_ci, features float8[], label boolean);
INSERT INTO eq_text
SELECT CASE WHEN r = 2 THEN upper('p' || c) ELSE 'p' || c END,
       ARRAY[(c % 7) / 7.0, (r % 5) / 5.0], (c + r) % 2 = 0
  FROM generate_series(1, 30) c, generate_series(1, 3) r;
SELECT count(DISTINCT u) AS units, count(DISTINCT u::bytea) AS spellings FROM eq_text;
SELECT dperm.set_budget('eq_text', 50, 1e-5, privacy_unit => 'u', max_rows_per_unit => 2);
SELECT unit_release('eq_text') AS collation_ok;
-- ... streaming reads the same way.
SELECT (j->>'n')::bigint = 2 * (j->'privacy_unit'->>'units')::bigint AS collation_streaming_ok
  FROM (SELECT dperm.train('eq_text', 'features', 'label', 'logistic',
                           dp_options(epsilon => 2, dimension => 2, seed => 11), 'streaming')::jsonb j) m;

-- A unit type without a btree order is refused before anything is charged
-- (set_budget refuses one; the column's type may change later).
CREATE TABLE eq_point (u int, features float8[], label boolean);
INSERT INTO eq_point VALUES (1, ARRAY[0.1, 0.2], true);
SELECT dperm.set_budget('eq_point', 50, 1e-5, privacy_unit => 'u', max_rows_per_unit => 2);
ALTER TABLE eq_point ALTER COLUMN u TYPE point USING point(u, u);
\set VERBOSITY terse
SELECT dperm.train('eq_point', 'features', 'label', 'logistic', dp_options(epsilon => 2, dimension => 2));
\set VERBOSITY default
SELECT count(*) AS point_ledger_rows FROM dperm.ledger WHERE 'eq_point'::regclass = ANY (relations);

-- Every release above was charged once per release, and none failed.
SELECT r.relation, s.releases FROM dperm.budget_status s
  JOIN (VALUES ('eq_numeric'::regclass), ('eq_float'), ('eq_digits'), ('eq_time'),
               ('eq_interval'), ('eq_text')) r(relation) ON s.relation = r.relation
 ORDER BY r.relation::text;
