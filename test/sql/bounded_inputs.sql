-- Issue 44, items 6, 7 and 11: what a role sends bounds no work of the
-- ledger writer or the encoder, and small leaks and name squatting.
SET max_parallel_workers_per_gather = 0;
SET dperm.allow_seed = on;
CREATE ROLE regress_bounded_owner;
CREATE ROLE regress_bounded_scorer;
CREATE ROLE regress_bounded_mallory LOGIN;
GRANT CREATE ON SCHEMA public TO regress_bounded_owner;

-- 6. The ledger row's query text is capped (4096 bytes of whole
-- characters, then a marker with the full length), whatever the client
-- sends: a role with no grants, a release over VALUES, a 1 MB comment.
SET ROLE regress_bounded_mallory;
\set ECHO none
SELECT format('SELECT dp_logreg(x, y, dp_options(epsilon => 1, dimension => 2, seed => 1)) IS NOT NULL AS released /* %s */'
              ' FROM (VALUES (ARRAY[0.1, 0.2]::float8[], true), (ARRAY[0.2, 0.1], false)) v(x, y)',
              repeat('x', 1000000)) \gexec
\set ECHO all
SELECT length(query) AS stored_chars, octet_length(query) <= 4096 + 64 AS capped,
       query LIKE 'SELECT dp_logreg(%' AS starts, query LIKE '%... [dperm: truncated from 1000___ bytes]' AS marked
  FROM dperm.ledger ORDER BY id DESC LIMIT 1;
-- multibyte: cut on a character boundary (the row is valid text)
\set ECHO none
SELECT format('SELECT dp_logreg(x, y, dp_options(epsilon => 1, dimension => 2, seed => 1)) IS NOT NULL AS released /* %s */'
              ' FROM (VALUES (ARRAY[0.1, 0.2]::float8[], true), (ARRAY[0.2, 0.1], false)) v(x, y)',
              repeat('é€', 100000)) \gexec
\set ECHO all
SELECT octet_length(query) <= 4096 + 64 AS capped, convert_to(query, 'UTF8') IS NOT NULL AS valid,
       query ~ '[é€]\.\.\. \[dperm: truncated from 50[0-9]{4} bytes\]$' AS whole_characters
  FROM dperm.ledger ORDER BY id DESC LIMIT 1;
-- a short query is stored as sent
SELECT dp_logreg(x, y, dp_options(epsilon => 1, dimension => 2, seed => 1)) IS NOT NULL AS released /* short */
  FROM (VALUES (ARRAY[0.1, 0.2]::float8[], true), (ARRAY[0.2, 0.1], false)) v(x, y);
SELECT query LIKE '%/* short */%' AND query NOT LIKE '%truncated%' AS verbatim
  FROM dperm.ledger ORDER BY id DESC LIMIT 1;
RESET ROLE;

-- 7. The encoder's time per row does not grow with a value's length: a
-- value longer than every declared category is not read past it, and the
-- categories are searched by an index built once per spec. A 40 MB value
-- against 10000 categories was 10000 strlens of 40 MB (tens of seconds,
-- deaf to cancels: 58.6 s measured); now well within the timeout (0.5 s
-- measured; the timeout leaves room for a loaded machine).
SELECT format('{"c": {"values": [%s]}, "y": {"values": ["no", "yes"], "label": true}}',
              string_agg(format('"v%s"', i), ', ')) AS spec10k
  FROM generate_series(1, 10000) i \gset
SET statement_timeout = '30s';
SELECT e[1] AS first, e[10000] AS last, array_length(e, 1) AS d,
       (SELECT sum(x) FROM unnest(e) x) AS ones
  FROM (SELECT dperm.encode_values(:'spec10k'::jsonb, ARRAY[repeat('v', 40000000)]) e) s;
SELECT dperm.encode_label(:'spec10k'::jsonb, repeat('y', 40000000)) IS NULL AS unknown_label;
-- a numeral is read to 1024 bytes: its value where it matters
SELECT dperm.encode_values('{"x": {"bounds": [-5, 5]}}', ARRAY['2.5' || repeat('0', 40000000)]) AS long_fraction,
       dperm.encode_values('{"x": {"bounds": [-5, 5]}}', ARRAY['1' || repeat('0', 2000)]) AS huge;
-- the matches are still exact
SELECT e[1] AS v1, e[9999] AS v9999, (SELECT sum(x) FROM unnest(e) x) AS ones
  FROM (SELECT dperm.encode_values(:'spec10k'::jsonb, ARRAY['v9999']) e) s;
SELECT dperm.encode_label(:'spec10k'::jsonb, 'yes') AS yes, dperm.encode_label(:'spec10k'::jsonb, 'ye') AS prefix;
-- what a named model stores of a spec and its names is bounded: a value
-- of more than 1024 bytes, a spec of more than 1 MB, a feature name of
-- more than 1088 bytes are refused (22023), before anything is read
\set VERBOSITY terse
SELECT dperm.encode_values(format('{"c": {"values": ["%s"]}}', repeat('v', 1025))::jsonb, ARRAY['v']);
SELECT array_length(dperm.encode_values(format('{"c": {"values": ["%s"]}}', repeat('v', 1024))::jsonb, ARRAY['v']), 1) AS d;
SELECT dperm.encode_values(format('{"c": {"values": [%s]}}',
         (SELECT string_agg(format('"%s%s"', i, repeat('v', 200)), ', ') FROM generate_series(1, 6000) i))::jsonb, ARRAY['v']);
SELECT dp_options(epsilon => 1, feature_names => ARRAY['a', repeat('n', 1089)]);
SELECT jsonb_array_length(dp_options(epsilon => 1, feature_names => ARRAY['a', repeat('n', 1088)])->'feature_names') AS names;
\set VERBOSITY default
-- in training: a 50 MB value in one row of a spec-encoded release
CREATE TABLE bounded_rows AS
SELECT i AS id, 'v' || (1 + i % 10000) AS c, CASE WHEN i % 2 = 0 THEN 'yes' ELSE 'no' END AS y
  FROM generate_series(1, 200) i;
UPDATE bounded_rows SET c = repeat('v', 50000000) WHERE id = 1;
SELECT (dperm.train('bounded_rows', :'spec10k'::jsonb, 'y', 'logistic',
                    dp_options(epsilon => 1, seed => 2))::jsonb->>'d')::int AS trained_d;
RESET statement_timeout;
DROP TABLE bounded_rows;

-- Arrays: an aggregate reads no element past the public d (a row with
-- NULLs and a million elements is read as its first d, as before).
-- (created_at aside: the two releases may straddle a second)
SELECT dp_logreg(x, y, dp_options(epsilon => 1, dimension => 2, seed => 9))::jsonb - 'created_at'
     = (SELECT dp_logreg(x[1:2], y, dp_options(epsilon => 1, dimension => 2, seed => 9))::jsonb - 'created_at'
          FROM (VALUES (ARRAY[0.1, NULL]::float8[] || array_fill(NULL::float8, ARRAY[1000000]), true),
                       (ARRAY[0.2, 0.1] || array_fill(1::float8, ARRAY[1000000]), false)) v(x, y)) AS prefix_only
  FROM (VALUES (ARRAY[0.1, NULL]::float8[] || array_fill(NULL::float8, ARRAY[1000000]), true),
               (ARRAY[0.2, 0.1] || array_fill(1::float8, ARRAY[1000000]), false)) v(x, y);

-- 11a. dperm.retired_budgets is as private as dperm.budgets.
SET ROLE regress_bounded_owner;
CREATE TABLE bounded_retired AS SELECT 1 AS x;
SELECT dperm.set_budget('bounded_retired', 3, 1e-6);
SELECT dperm.retire_budget('bounded_retired');
DROP TABLE bounded_retired;
SELECT relation_name, epsilon, retired_by FROM dperm.retired_budgets WHERE relation_name = 'public.bounded_retired';
RESET ROLE;
SET ROLE regress_bounded_mallory;
SELECT count(*) AS mallory_sees_retired FROM dperm.retired_budgets;
RESET ROLE;
SET ROLE regress_bounded_scorer;
SELECT count(*) AS scorer_sees_retired FROM dperm.retired_budgets;
RESET ROLE;
GRANT pg_read_all_stats TO regress_bounded_scorer;
SET ROLE regress_bounded_scorer;
SELECT count(*) > 0 AS stats_reader_sees_retired FROM dperm.retired_budgets WHERE relation_name = 'public.bounded_retired';
RESET ROLE;
REVOKE pg_read_all_stats FROM regress_bounded_scorer;

-- 11b. A model name resolves to the caller's own model first; a role with
-- no grants that trains a model under another role's name does not change
-- what a scoring role's name resolves to, nor make it fail (42725).
SET ROLE regress_bounded_owner;
CREATE TABLE bounded_churn AS
SELECT ARRAY[sin(i) / 2, cos(i) / 2]::float8[] AS x, sin(3 * i) > 0 AS y FROM generate_series(1, 200) i;
GRANT SELECT ON bounded_churn TO regress_bounded_scorer, PUBLIC;
SELECT dperm.train_model('churn', 'bounded_churn', 'x', 'y', 'logistic',
                         dp_options(epsilon => 1, dimension => 2, seed => 5));
RESET ROLE;
SET ROLE regress_bounded_scorer;
SELECT dperm.model_owner('churn');
SELECT dperm.predict('churn', ARRAY[0.1, 0.2]) AS owner_prediction \gset
RESET ROLE;
-- mallory squats the name: on a TEMP table granted to PUBLIC, and on the
-- owner's table that PUBLIC may read
SET ROLE regress_bounded_mallory;
CREATE TEMP TABLE churn_squat AS
SELECT ARRAY[0.5, 0.5]::float8[] AS x, i % 2 = 0 AS y FROM generate_series(1, 50) i;
GRANT SELECT ON churn_squat TO PUBLIC;
SELECT dperm.train_model('churn', 'churn_squat', 'x', 'y', 'logistic',
                         dp_options(epsilon => 1, dimension => 2, seed => 6));
SELECT dperm.train_model('churn2', 'bounded_churn', 'x', 'y', 'logistic',
                         dp_options(epsilon => 1, dimension => 2, seed => 6));
SELECT dperm.model_owner('churn');
RESET ROLE;
SET ROLE regress_bounded_scorer;
SELECT count(DISTINCT owner) AS owners_visible FROM dperm.models WHERE name = 'churn';
SELECT dperm.model_owner('churn');
SELECT dperm.predict('churn', ARRAY[0.1, 0.2]) = :owner_prediction AS owners_model;
SELECT (dperm.model('churn')).owner;
RESET ROLE;
-- mallory's model on the owner's own relation: still only the data owner's
SET ROLE regress_bounded_owner;
SELECT dperm.train_model('churn2', 'bounded_churn', 'x', 'y', 'logistic',
                         dp_options(epsilon => 1, dimension => 2, seed => 5));
RESET ROLE;
SET ROLE regress_bounded_scorer;
SELECT dperm.model_owner('churn2');
RESET ROLE;
-- a role that grants itself to another (PostgreSQL 15 refuses it; were it
-- allowed, a membership a role granted itself would not count)
SET SESSION AUTHORIZATION regress_bounded_mallory;
GRANT regress_bounded_mallory TO regress_bounded_scorer;
RESET SESSION AUTHORIZATION;
SET ROLE regress_bounded_scorer;
SELECT pg_has_role('regress_bounded_mallory', 'USAGE') AS scorer_has_mallorys_privileges;
SELECT dperm.model_owner('churn'), dperm.model_owner('churn2');
RESET ROLE;
REVOKE regress_bounded_mallory FROM regress_bounded_scorer;
-- a membership an administrator granted is trusted before the data owner
GRANT regress_bounded_mallory TO regress_bounded_scorer;
SET ROLE regress_bounded_scorer;
SELECT dperm.model_owner('churn2');
RESET ROLE;
REVOKE regress_bounded_mallory FROM regress_bounded_scorer;
-- the caller's own model comes first
SET ROLE regress_bounded_scorer;
SELECT dperm.train_model('churn', 'bounded_churn', 'x', 'y', 'logistic',
                         dp_options(epsilon => 1, dimension => 2, seed => 7));
SELECT dperm.model_owner('churn');
RESET ROLE;
-- two data owners' models under one name stay ambiguous (42725)
CREATE ROLE regress_bounded_owner2;
GRANT CREATE ON SCHEMA public TO regress_bounded_owner2;
SET ROLE regress_bounded_owner2;
CREATE TABLE bounded_churn2 AS SELECT * FROM bounded_churn;
GRANT SELECT ON bounded_churn2 TO regress_bounded_scorer;
SELECT dperm.train_model('churn2', 'bounded_churn2', 'x', 'y', 'logistic',
                         dp_options(epsilon => 1, dimension => 2, seed => 5));
RESET ROLE;
SET ROLE regress_bounded_scorer;
SELECT dperm.model_owner('churn2');
RESET ROLE;

DELETE FROM dperm.models WHERE owner::text LIKE 'regress_bounded_%';
DROP TABLE pg_temp.churn_squat;
DROP TABLE bounded_churn, bounded_churn2;
DELETE FROM dperm.retired_budgets WHERE relation_name = 'public.bounded_retired';
REVOKE CREATE ON SCHEMA public FROM regress_bounded_owner, regress_bounded_owner2;
DROP ROLE regress_bounded_owner, regress_bounded_owner2, regress_bounded_scorer, regress_bounded_mallory;
