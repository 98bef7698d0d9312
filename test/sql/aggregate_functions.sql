-- The direct aggregates on a budgeted or protected relation follow
-- dperm.train_query's function rule (issue 46, item 3): what they evaluate
-- per row (features, label, a projection below them) may call only
-- immutable functions that cannot fail on a value, or an error on one row
-- would reveal it. Refused with 0A000 before anything is read or charged.
-- On a relation with no budget, nothing changes.
SET max_parallel_workers_per_gather = 0;
SET client_min_messages = warning;
CREATE ROLE regress_af_analyst;
-- x = 0 on every 10th row: 100 / x fails there.
CREATE TABLE af_wages AS
  SELECT i AS id, i % 10 AS x, (i % 10)::float8 AS xf, 500 + (i * 37) % 1000 AS wage,
         i % 3 AS x1, i % 4 AS x2, ARRAY[sin(i) / 2, cos(i) / 2] AS features,
         ARRAY[0.1 * (i % 7), 0.5] AS numeric_features
    FROM generate_series(1, 300) i;
CREATE TABLE af_open AS SELECT * FROM af_wages;
GRANT SELECT ON af_wages, af_open TO regress_af_analyst;
SELECT dperm.set_budget('af_wages', 100, 1e-5);
-- An immutable function that is not LEAKPROOF and raises on one value.
CREATE FUNCTION af_probe(v int) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF v = 7 THEN RAISE EXCEPTION 'found 7'; END IF;
  RETURN v > 3;
END $$;
-- The SQLSTATE and message of a statement, or 'trained'.
CREATE FUNCTION af_try(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE m text;
BEGIN
  EXECUTE q INTO m;
  RETURN CASE WHEN m IS NULL THEN 'no model' ELSE 'trained' END;
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $f$;
SELECT count(*) AS ledger_before FROM dperm.ledger \gset

SET ROLE regress_af_analyst;
-- The planner evaluates a subquery's columns in the scan below the
-- aggregate: the division is there, not in the aggregate's arguments.
EXPLAIN (VERBOSE, COSTS OFF)
SELECT dp_logreg(f, l, dp_options(epsilon => 1, dimension => 2))
  FROM (SELECT features AS f, 100 / x > 1 AS l FROM af_wages OFFSET 0) s;
-- The attack: a label that fails on the rows where x = 0.
SELECT dp_logreg(features, 100 / x > 1, dp_options(epsilon => 1, dimension => 2)) IS NOT NULL
  FROM af_wages;
-- Refused the same way: a float8 division, ln, the analyst's function, a
-- volatile function, a cast through text, an overflowing product, in the
-- features, in an ORDER BY inside the call, in a projection the planner
-- puts below the aggregate, in a UNION ALL branch.
SELECT af_try($$SELECT dp_logreg(features, 100 / xf > 1, dp_options(epsilon => 1, dimension => 2))::text FROM af_wages$$);
SELECT af_try($$SELECT dp_logreg(ARRAY[ln(xf), 1], wage > 1000, dp_options(epsilon => 1, dimension => 2))::text FROM af_wages$$);
SELECT af_try($$SELECT dp_logreg(features, af_probe(x), dp_options(epsilon => 1, dimension => 2))::text FROM af_wages$$);
SELECT af_try($$SELECT dp_logreg(features, random() > 0.5, dp_options(epsilon => 1, dimension => 2))::text FROM af_wages$$);
SELECT af_try($$SELECT dp_logreg(features, x::text::int > 3, dp_options(epsilon => 1, dimension => 2))::text FROM af_wages$$);
SELECT af_try($$SELECT dp_huber(features, wage * 1e300::float8, dp_options(epsilon => 1, dimension => 2))::text FROM af_wages$$);
SELECT af_try($$SELECT dp_logreg(features, wage > 1000, dp_options(epsilon => 1, dimension => 2) ORDER BY 100 / x)::text FROM af_wages$$);
SELECT af_try($$SELECT dp_logreg(f, l, dp_options(epsilon => 1, dimension => 2))::text
                  FROM (SELECT features AS f, 100 / x > 1 AS l FROM af_wages OFFSET 0) s$$);
-- Another aggregate beside it is evaluated on the same rows: its
-- arguments and FILTER follow the rule too.
SELECT af_try($$SELECT dp_logreg(features, wage > 1000, dp_options(epsilon => 1, dimension => 2))::text || sum(100 / x) FROM af_wages$$);
SELECT af_try($$SELECT dp_logreg(features, wage > 1000, dp_options(epsilon => 1, dimension => 2))::text || count(*) FILTER (WHERE 100 / x > 1) FROM af_wages$$);
SELECT af_try($$SELECT dp_logreg(f, l, dp_options(epsilon => 1, dimension => 2))::text
                  FROM (SELECT features AS f, 100 / x > 1 AS l FROM af_wages
                        UNION ALL SELECT features, wage > 1000 FROM af_open) s$$);
-- numeric[] read as float8[]: a numeric beyond 1e308 fails the cast.
SELECT dp_logreg(numeric_features, wage > 1000, dp_options(epsilon => 1, dimension => 2)) IS NOT NULL
  FROM af_wages;
-- So does a named model's run on it (train_model reads it as the aggregate
-- would).
SELECT af_try($$SELECT dperm.train_model('af_num', 'af_wages', 'numeric_features', 'xf', 'huber', dp_options(epsilon => 1, dimension => 2))::text$$);
RESET ROLE;
-- Nothing was charged.
SELECT count(*) - :ledger_before AS new_ledger_rows FROM dperm.ledger;
SELECT releases FROM dperm.budget_status WHERE relation = 'af_wages'::regclass;

SET ROLE regress_af_analyst;
-- A named model on numeric[] of af_open (no budget) trains as before.
SELECT af_try($$SELECT dperm.train_model('af_num_open', 'af_open', 'numeric_features', 'xf', 'huber', dp_options(epsilon => 1, dimension => 2))::text$$);
-- What passes: dperm's total functions, plain columns, comparisons,
-- ARRAY[...] of int and float columns cast to float8[], CASE, COALESCE,
-- widening casts, the same in a projection below the aggregate, and a
-- statement's parameter.
SELECT af_try($$SELECT dp_logreg(features, dperm.div(100, x) > 1, dp_options(epsilon => 1, dimension => 2))::text FROM af_wages$$);
SELECT af_try($$SELECT dp_logreg(features, wage > 1000, dp_options(epsilon => 1, dimension => 2))::text FROM af_wages$$);
SELECT af_try($$SELECT dp_logreg(ARRAY[x1, x2]::float8[], (wage > 1000), dp_options(epsilon => 1, dimension => 2))::text FROM af_wages$$);
SELECT af_try($$SELECT dp_logreg(ARRAY[x1, xf], CASE WHEN x > 4 THEN wage > 900 ELSE coalesce(wage < 600, false) END, dp_options(epsilon => 1, dimension => 2))::text FROM af_wages$$);
SELECT af_try($$SELECT dp_logreg(ARRAY[features[1], -features[2], abs(xf)], x IN (1, 2, 3) AND NOT wage IS NULL, dp_options(epsilon => 1, dimension => 3))::text FROM af_wages$$);
SELECT af_try($$SELECT dp_huber(features, wage::float8, dp_options(epsilon => 1, dimension => 2))::text FROM af_wages$$);
SELECT af_try($$SELECT dp_softmax(features, (wage > 1000)::int, dp_options(epsilon => 1, dimension => 2, classes => 2))::text FROM af_wages$$);
SELECT af_try($$SELECT dp_logreg(f, l, dp_options(epsilon => 1, dimension => 2))::text
                  FROM (SELECT features AS f, dperm.div(100, x) > 1 AS l FROM af_wages OFFSET 0) s$$);
SET plan_cache_mode = force_generic_plan;
PREPARE af_prepared(int) AS
  SELECT dp_logreg(features, wage > $1, dp_options(epsilon => 1, dimension => 2)) IS NOT NULL AS trained FROM af_wages;
EXECUTE af_prepared(1000);
DEALLOCATE af_prepared;
RESET plan_cache_mode;
RESET ROLE;
SELECT count(*) - :ledger_before AS new_ledger_rows FROM dperm.ledger;

-- No budget: behaviour unchanged (the division's own error, and the
-- analyst's function runs).
SET ROLE regress_af_analyst;
SELECT af_try($$SELECT dp_logreg(features, 100 / x > 1, dp_options(epsilon => 1, dimension => 2))::text FROM af_open$$);
SELECT af_try($$SELECT dp_logreg(features, af_probe(x), dp_options(epsilon => 1, dimension => 2))::text FROM af_open$$);
SELECT af_try($$SELECT dp_logreg(features, 100 / (x + 1) > 1, dp_options(epsilon => 1, dimension => 2))::text FROM af_open$$);
RESET ROLE;
