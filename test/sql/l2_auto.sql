-- l2 => 'auto': dp_options' overload resolution, the
-- explain (grid and cost), one ledger row with the composed curve, seeded
-- reproducibility, the model's record of the choice, refusals by SQLSTATE
-- and an attacker's neighbouring tables.
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
SET extra_float_digits = 0;
CREATE FUNCTION la_sqlstate(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;

-- Resolution: an unknown literal for l2 goes to the text overload, a number
-- and no l2 at all to the float8 one; both build the same jsonb keys.
SELECT dp_options(epsilon => 1, l2 => 'auto') AS auto_named,
       dp_options('auto', 1) AS auto_positional,
       dp_options(epsilon => 1, l2 => 0.01) AS number,
       dp_options(epsilon => 1) AS no_l2,
       dp_options(epsilon => 1, l2 => 'auto', delta => 1e-6, seed => 3) AS auto_with_more;
SELECT p.oid::regprocedure AS resolves_to
  FROM pg_proc p WHERE p.proname = 'dp_options' ORDER BY 1::text;
-- the text overload takes only 'auto' (22023; a quoted number goes there
-- too: pass numbers unquoted); the jsonb form works too
SELECT la_sqlstate($$SELECT dp_options(epsilon => 1, l2 => 'best')$$) AS other_text,
       la_sqlstate($$SELECT dp_options(epsilon => 1, l2 => '0.01')$$) AS quoted_number,
       dp_options(epsilon => 1, l2 => NULL) AS null_l2,
       la_sqlstate($$SELECT dperm.check_options('{"epsilon": 1, "l2": "Auto"}')$$) AS case_matters,
       dperm.check_options('{"epsilon": 1, "l2": "auto"}') AS jsonb_form;

-- dp_explain: the grid, the split, every candidate's plan and one curve
-- that converts to the request.
WITH e AS (SELECT dp_explain('logistic', 5000, 10, dp_options(epsilon => 1, delta => 1e-6, l2 => 'auto')) j)
SELECT j->>'l2' AS l2, j->'selection'->'grid' AS grid,
       j->'selection'->'n_train' AS n_train, j->'selection'->'n_valid' AS n_valid,
       j->'selection'->>'score' AS score,
       jsonb_array_length(j->'candidates') AS candidates,
       (SELECT array_agg((c->'options'->>'l2')::float8 ORDER BY ord)
          FROM jsonb_array_elements(j->'candidates') WITH ORDINALITY AS t(c, ord)) AS candidate_l2,
       (SELECT bool_and((c->>'n')::int = 4000) FROM jsonb_array_elements(j->'candidates') c) AS candidates_on_train_part,
       (j->'selection'->>'candidate_epsilon')::float8 < 1 AS candidates_cost_less,
       dperm.rdp_to_epsilon(dperm.rdp_orders(),
                            ARRAY(SELECT jsonb_array_elements_text(j->'accounting'->'rdp'))::float8[],
                            1e-6) BETWEEN 0.97 AND 1 AS curve_converts_to_request
  FROM e;
-- pure epsilon: G candidates at epsilon/G
WITH e AS (SELECT dp_explain('huber', 1000, 3, dp_options(epsilon => 2, l2 => 'auto')) j)
SELECT (j->'selection'->>'candidate_epsilon')::float8 * jsonb_array_length(j->'selection'->'grid') AS candidates_sum,
       j->'selection'->'score_epsilon' AS score_epsilon, j->'selection'->'score_bound' AS score_bound
  FROM e;

-- A separable problem: the label is the sign of x1 + x2/2.
CREATE TABLE la AS
  SELECT i, ARRAY[sin(i * 1.7) * 0.7, cos(i * 2.3) * 0.7] AS features,
         sin(i * 1.7) + 0.5 * cos(i * 2.3) > 0 AS label
    FROM generate_series(1, 2000) i;
SELECT coalesce(max(id), 0) AS last_id FROM dperm.ledger \gset
CREATE TABLE la_models AS
  SELECT dp_logreg(features, label, dp_options(epsilon => 1, delta => 1e-6, l2 => 'auto', seed => 5)) AS m FROM la;
-- one ledger row: the request's (epsilon, delta), n of the whole table, and
-- a curve that converts to at most the request
SELECT count(*) AS ledger_rows, min(epsilon) AS epsilon, min(delta) AS delta, min(n) AS n,
       bool_and(dperm.rdp_to_epsilon(dperm.rdp_orders(), rdp, 1e-6) <= 1) AS curve_within_request
  FROM dperm.ledger WHERE id > :last_id;
-- the model records the choice, made privately, with the release's epsilon
SELECT m::jsonb->'epsilon' AS epsilon, m::jsonb->'delta' AS delta,
       m::jsonb->'options'->'l2' AS asked,
       (m::jsonb->'l2_selection'->>'chosen_l2')::float8 = (m::jsonb->'plan'->>'mu')::float8 AS chosen_is_trained,
       m::jsonb->'l2_selection'->'private' AS private,
       jsonb_array_length(m::jsonb->'l2_selection'->'noisy_scores') AS scores,
       (m::jsonb->'plan'->>'n')::int AS trained_on
  FROM la_models;
-- it predicts well (in-sample accuracy of the released model)
SELECT avg(((dp_predict(m, features) > 0.5) = label)::int) > 0.8 AS accurate
  FROM la, la_models;
-- seeded: the same model again; another seed, another draw
SELECT (SELECT dp_logreg(features, label, dp_options(epsilon => 1, delta => 1e-6, l2 => 'auto', seed => 5)) FROM la)::jsonb - 'created_at'
       = (SELECT m::jsonb - 'created_at' FROM la_models) AS same_seed_same_model,
       (SELECT dp_logreg(features, label, dp_options(epsilon => 1, delta => 1e-6, l2 => 'auto', seed => 6)) FROM la)::jsonb->'l2_selection'->'noisy_scores'
       <> (SELECT m::jsonb->'l2_selection'->'noisy_scores' FROM la_models) AS other_seed_other_scores;
-- the model's text form reads back (ParseModelJson keeps l2_selection)
SELECT (m::text::dp_model)::jsonb->'l2_selection'->'private' AS round_trip FROM la_models;

-- Huber and softmax take it too
SELECT (dp_huber(features, features[1] + 0.1, dp_options(epsilon => 1, l2 => 'auto', seed => 1))::jsonb->'l2_selection'->'grid') IS NOT NULL AS huber,
       (dp_softmax(features, (i % 3)::int, dp_options(epsilon => 1, delta => 1e-6, l2 => 'auto', classes => 3, seed => 1))::jsonb->'l2_selection'->'grid') IS NOT NULL AS softmax
  FROM la;

-- Refusals: streaming (22023, with a hint; before any row is read),
-- too few rows (22023; n is public, so it is raised before the charge and
-- costs nothing), an algorithm without an RDP curve (22023).
SELECT coalesce(max(id), 0) AS last_id FROM dperm.ledger \gset
SELECT la_sqlstate($$SELECT dperm.train('la', 'features', 'label', 'logistic',
                     dp_options(epsilon => 1, l2 => 'auto'), mode => 'streaming')$$) AS streaming,
       la_sqlstate($$SELECT dp_logreg(features, label, dp_options(epsilon => 1, l2 => 'auto')) FROM la WHERE i <= 10$$) AS ten_rows,
       la_sqlstate($$SELECT dp_explain('logistic', 1000, 2, dp_options(epsilon => 1, delta => 1e-6, l2 => 'auto', algorithm => 'objective_approx'))$$) AS no_curve;
-- in-memory dperm.train takes it
SELECT dperm.train('la', 'features', 'label', 'logistic',
                   dp_options(epsilon => 1, l2 => 'auto', seed => 2), mode => 'in_memory')::jsonb->'l2_selection'->'n_valid' AS train_in_memory;
\set VERBOSITY default
SELECT dperm.train('la', 'features', 'label', 'logistic', dp_options(epsilon => 1, l2 => 'auto'), mode => 'streaming');
\set VERBOSITY terse
-- the refusals charged nothing (the ten rows' too: it needs only n), the
-- in-memory training once
SELECT count(*) AS charged, array_agg(n ORDER BY id) AS ns FROM dperm.ledger WHERE id > :last_id;

-- Attacker: two neighbouring tables (one row's label flipped). What the
-- release shows besides the model -- the ledger row, the number of
-- candidates scored, the grid, the split sizes -- is the same; only the
-- noisy scores and coefficients differ.
CREATE TABLE la_neighbour AS SELECT i, features, CASE WHEN i = 1 THEN NOT label ELSE label END AS label FROM la;
SELECT coalesce(max(id), 0) AS last_id FROM dperm.ledger \gset
WITH a AS (SELECT dp_logreg(features, label, dp_options(epsilon => 1, delta => 1e-6, l2 => 'auto', seed => 9))::jsonb m FROM la),
     b AS (SELECT dp_logreg(features, label, dp_options(epsilon => 1, delta => 1e-6, l2 => 'auto', seed => 9))::jsonb m FROM la_neighbour)
SELECT (a.m->'l2_selection') - 'noisy_scores' - 'chosen_l2' = (b.m->'l2_selection') - 'noisy_scores' - 'chosen_l2' AS same_public_part,
       jsonb_array_length(a.m->'l2_selection'->'noisy_scores') = jsonb_array_length(b.m->'l2_selection'->'noisy_scores') AS same_candidates
  FROM a, b;
SELECT count(*) AS ledger_rows, count(DISTINCT (epsilon, delta, n, d, algorithm, mechanism, rdp)) AS distinct_charges
  FROM dperm.ledger WHERE id > :last_id;
