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
-- rows of different lengths: the message names both dimensions
SELECT dp_logreg(f, true, dp_options(epsilon => 1)) FROM (VALUES (ARRAY[1.0, 2.0]::float8[]), (ARRAY[1.0, 2.0, 3.0])) v(f);
SELECT dp_logreg(f, true, dp_options(epsilon => 1)) FROM (VALUES (ARRAY[[1.0, 2.0]]::float8[])) v(f);
-- options must be constant and not NULL
SELECT dp_logreg(f, true, dperm.check_options(jsonb_build_object('epsilon', e)))
  FROM (VALUES (ARRAY[0.1]::float8[], 1), (ARRAY[0.1], 2)) v(f, e);
SELECT dp_logreg(ARRAY[0.1]::float8[], true, NULL);
-- option errors reach the aggregate too
SELECT dp_logreg(ARRAY[0.1]::float8[], true, '{"epsilon": 1, "bogus": 1}');
SELECT dp_logreg(ARRAY[0.1]::float8[], true, dp_options(epsilon => 1, l2 => 0.1, step_size => 100));
SELECT dp_huber(ARRAY[0.1]::float8[], 1.0, dp_options(epsilon => 1, l1 => 0.1));
SELECT dp_logreg(ARRAY[0.1]::float8[], true, dp_options(epsilon => 1, feature_names => ARRAY['a', 'b']));
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

-- SQLSTATEs: shape errors are array_subscript_error (2202E), option errors
-- invalid_parameter_value (22023), an exhausted budget DP001, seeds without
-- the setting insufficient_privilege (42501), windows feature_not_supported.
CREATE TABLE tiny AS SELECT ARRAY[0.1, 0.2]::float8[] AS f, true AS y;
SELECT dperm.set_budget('tiny', 0.5);
SELECT sqlstate_of($$SELECT dp_logreg(f, y, '{"epsilon": 1}') FROM (VALUES (ARRAY[1.0]::float8[], true), (ARRAY[1.0, 2.0], true)) v(f, y)$$) AS dimension,
       sqlstate_of($$SELECT dp_logreg(f, y, '{"epsilon": -1}') FROM tiny$$) AS bad_option,
       sqlstate_of($$SELECT dp_options(epsilon => 1, target_bound => -1)$$) AS bad_target_bound,
       sqlstate_of($$SELECT dp_logreg(f, y, '{"epsilon": 1}') FROM tiny$$) AS budget,
       sqlstate_of($$SELECT dp_logreg(f, y, '{"epsilon": 0.1, "seed": 1}') FROM tiny$$) AS seed,
       sqlstate_of($$SELECT dp_logreg(f, y, '{"epsilon": 0.1}') OVER () FROM tiny$$) AS window;
