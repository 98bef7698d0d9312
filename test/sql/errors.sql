-- Errors of the training aggregates: clear messages, SQLSTATEs, no crash.
SET max_parallel_workers_per_gather = 0;
-- the SQLSTATE of a statement's error
CREATE FUNCTION sqlstate_of(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;
-- rows of different lengths are never an error: truncated or padded with
-- zeros to d (here, unbudgeted, the first row's length); 2-D arrays are read
-- in storage order
SELECT m->>'n' AS n, m->>'d' AS d
  FROM (SELECT dp_logreg(f, true, dp_options(epsilon => 1))::jsonb AS m
          FROM (VALUES (ARRAY[1.0, 2.0]::float8[]), (ARRAY[1.0, 2.0, 3.0]), (ARRAY[1.0])) v(f)) s;
SELECT m->>'n' AS n, m->>'d' AS d
  FROM (SELECT dp_logreg(f, true, dp_options(epsilon => 1))::jsonb AS m FROM (VALUES (ARRAY[[1.0, 2.0]]::float8[])) v(f)) s;
-- options must be the same for every row (refused before any row is read)
-- and not NULL
SELECT dp_logreg(f, true, dperm.check_options(jsonb_build_object('epsilon', e)))
  FROM (VALUES (ARRAY[0.1]::float8[], 1), (ARRAY[0.1], 2)) v(f, e);
SELECT dp_logreg(ARRAY[0.1]::float8[], true, NULL);
-- option errors reach the aggregate too
SELECT dp_logreg(ARRAY[0.1]::float8[], true, '{"epsilon": 1, "bogus": 1}');
-- errors of public inputs are raised before the charge: nothing is charged
SELECT count(*) AS ledger_before FROM dperm.ledger \gset
SELECT dp_logreg(ARRAY[0.1]::float8[], true, dp_options(epsilon => 1, l2 => 0.1, step_size => 100));
SELECT dp_huber(ARRAY[0.1]::float8[], 1.0, dp_options(epsilon => 1, l1 => 0.1));
SELECT count(*) - :ledger_before AS charged FROM dperm.ledger;
-- feature_names declares d: a disagreeing dimension is an options error,
-- and rows are padded to it
SELECT dp_logreg(ARRAY[0.1]::float8[], true, dp_options(epsilon => 1, dimension => 1, feature_names => ARRAY['a', 'b']));
SELECT dp_logreg(ARRAY[0.1]::float8[], true, dp_options(epsilon => 1, feature_names => ARRAY['a', 'b']))::jsonb->>'d' AS d;
SELECT dp_logreg(ARRAY[0.1]::float8[], true, dp_options(epsilon => 1, dataset => 'no_such_table'));
-- seeds need the superuser-only setting
SET dperm.allow_seed = off;
SELECT dp_logreg(ARRAY[0.1]::float8[], true, dp_options(epsilon => 1, seed => 1));
CREATE ROLE regress_dperm_user;
SET ROLE regress_dperm_user;
SET dperm.allow_seed = on;
RESET ROLE;
-- every window frame would be a release of its own
SELECT dp_logreg(ARRAY[0.1]::float8[], true, dp_options(epsilon => 1)) OVER () FROM generate_series(1, 2);
-- the settings namespace is reserved
SET dperm.no_such_setting = 1;

-- SQLSTATEs: rows of another shape are no error; option errors (and an
-- undeclared d on a budgeted relation) invalid_parameter_value (22023), an
-- exhausted budget DP001, seeds without the setting insufficient_privilege
-- (42501), windows and partial reads of a budgeted relation
-- feature_not_supported (0A000).
CREATE TABLE tiny AS SELECT ARRAY[0.1, 0.2]::float8[] AS f, true AS y;
SELECT dperm.set_budget('tiny', 0.5);
SELECT sqlstate_of($$SELECT dp_logreg(f, y, '{"epsilon": 1}') FROM (VALUES (ARRAY[1.0]::float8[], true), (ARRAY[1.0, 2.0], true)) v(f, y)$$) AS ragged,
       sqlstate_of($$SELECT dp_logreg(f, y, '{"epsilon": -1}') FROM tiny$$) AS bad_option,
       sqlstate_of($$SELECT dp_options(epsilon => 1, target_bound => -1)$$) AS bad_target_bound,
       sqlstate_of($$SELECT dp_logreg(f, y, '{"epsilon": 0.1}') FROM tiny$$) AS undeclared_d,
       sqlstate_of($$SELECT dp_logreg(f, y, '{"epsilon": 1, "dimension": 2}') FROM tiny$$) AS budget,
       sqlstate_of($$SELECT dp_logreg(f, y, '{"epsilon": 0.1, "dimension": 2}') FROM tiny WHERE y$$) AS partial_read,
       sqlstate_of($$SELECT dp_logreg(f, y, '{"epsilon": 0.1, "seed": 1, "dimension": 2}') FROM tiny$$) AS seed,
       sqlstate_of($$SELECT dp_logreg(f, y, '{"epsilon": 0.1, "dimension": 2}') OVER () FROM tiny$$) AS window;
