-- dp_options: named arguments with defaults, validation of every key.
SELECT dp_options(epsilon => 1);
SELECT dp_options(epsilon => 0.5, delta => 1e-6, l2 => 0.1, fit_intercept => false,
                  feature_bound => 2, huber_delta => 0.5, iterations => 50,
                  step_size => 0.1, accountant => 'paper', neighbors => 'replace_one',
                  feature_names => ARRAY['a', 'b'], target_bound => 10);
-- a literal jsonb is accepted too
SELECT dperm.check_options('{"epsilon": 2, "l2": 0.5}');
-- errors: every option is validated, messages name the key
\set VERBOSITY default
SELECT dp_options(epsilon => 0);
SELECT dp_options(epsilon => -1);
SELECT dp_options(epsilon => 'NaN');
SELECT dp_options(epsilon => 'infinity');
SELECT dp_options(epsilon => NULL);
SELECT dp_options(epsilon => 1, delta => 1);
SELECT dp_options(epsilon => 1, delta => -0.1);
SELECT dp_options(epsilon => 1, l2 => -1);
SELECT dp_options(epsilon => 1, feature_bound => 0);
SELECT dp_options(epsilon => 1, huber_delta => -2);
SELECT dp_options(epsilon => 1, target_bound => -1);
SELECT dp_options(epsilon => 1, target_bound => 0);
SELECT dp_options(epsilon => 1, target_bound => 'NaN');
SELECT dp_options(epsilon => 1, iterations => 0);
SELECT dp_options(epsilon => 1, step_size => 0);
SELECT dp_options(epsilon => 1, algorithm => 'newton');
SELECT dp_options(epsilon => 1, accountant => 'moments');
SELECT dp_options(epsilon => 1, neighbors => 'add_remove');
SELECT dp_options(epsilon => 1, feature_names => ARRAY['intercept']);
SELECT dp_options(epsilon => 1, feature_names => ARRAY['']);
SELECT dp_options(epsilon => 1, dataset => '');
SELECT dp_options(epsilon => 1, bogus => 3);
SELECT dperm.check_options('{"epsilon": 1, "bogus": 3}');
SELECT dperm.check_options('{"epsilon": "1"}');
SELECT dperm.check_options('{"epsilon": 1, "fit_intercept": "yes"}');
SELECT dperm.check_options('{"epsilon": 1, "iterations": 2.5}');
SELECT dperm.check_options('{"epsilon": 1, "feature_names": [1, 2]}');
SELECT dperm.check_options('{"delta": 0.1}');
SELECT dperm.check_options('[1, 2]');
SELECT dperm.check_options('3');
-- dperm.option_reference(): one row per key dp_options takes (the same
-- keys), with the parameter's SQL type; ranges rendered, pipes unescaped
-- (target_bound's meaning has |target|).
SELECT (SELECT array_agg(key ORDER BY key) FROM dperm.option_reference())
       = (SELECT array_agg(a ORDER BY a) FROM pg_proc p, unnest(p.proargnames) a
           WHERE p.proname = 'dp_options' AND p.proargtypes[0] = 'float8'::regtype) AS keys_match;
SELECT count(*) FROM dperm.option_reference() r
  JOIN pg_proc p ON p.proname = 'dp_options' AND p.proargtypes[0] = 'float8'::regtype
  JOIN LATERAL unnest(p.proargnames, p.proargtypes::oid[]) u(name, type) ON u.name = r.key
 WHERE u.type <> r.sql_type::regtype;
SELECT key, sql_type, "values", "default" FROM dperm.option_reference() WHERE key IN ('epsilon', 'delta', 'iterations', 'accountant', 'seed');
SELECT count(*) FROM dperm.option_reference() WHERE meaning LIKE '%|target|%' OR "values" LIKE '%\|%';
SELECT count(*) FROM dperm.option_reference() WHERE meaning LIKE '%algorithms that do not take it refuse it%';
