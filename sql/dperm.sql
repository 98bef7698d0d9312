-- dperm, complete: what CREATE EXTENSION dperm installs (the build writes
-- this file to sql/dperm--<default_version>.sql through sql/gen_sql, which
-- puts what the core's tables generate in place of its markers). Older
-- databases reach the same catalog through sql/dperm--0.1.0.sql and the
-- upgrade scripts; test/upgrade.sh checks that both give the same objects (a
-- change to the current version goes into this file AND into the latest
-- upgrade script, sql/upgrade/dperm--<previous>--<default_version>.sql.in).
\echo Use "CREATE EXTENSION dperm" to load this file. \quit

CREATE SCHEMA dperm;
COMMENT ON SCHEMA dperm IS 'dperm catalog: privacy budgets and the ledger of releases';

-- ---------------------------------------------------------------- options

CREATE FUNCTION dperm.check_options(options jsonb) RETURNS jsonb
  AS 'MODULE_PATHNAME', 'dperm_check_options'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.check_options(jsonb) IS 'validates dperm options and returns them';

-- The option table, for docs/sql-reference.md (scripts/gen_sql_reference.py).
CREATE FUNCTION dperm.option_reference()
  RETURNS TABLE(key text, sql_type text, "values" text, "default" text, meaning text)
  AS 'MODULE_PATHNAME', 'dperm_option_reference'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.option_reference() IS 'the option table: every key dp_options and the jsonb options take, its SQL type, its values, its default and its meaning';

-- dp_options(epsilon, delta, algorithm, l2, ...) builds the options of a
-- release with named arguments (NULL means default); its overload takes
-- l2 => 'auto'.
@DP_OPTIONS@

-- ---------------------------------------------------------------- dp_model

CREATE TYPE dp_model;
CREATE FUNCTION dp_model_in(cstring) RETURNS dp_model
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_model_in(cstring) IS 'the text input of dp_model: a model''s JSON, checked field by field';
CREATE FUNCTION dp_model_out(dp_model) RETURNS cstring
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_model_out(dp_model) IS 'the text output of dp_model: the model''s JSON';
CREATE FUNCTION dp_model_recv(internal) RETURNS dp_model
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_model_recv(internal) IS 'the binary input of dp_model, checked field by field';
CREATE FUNCTION dp_model_send(dp_model) RETURNS bytea
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_model_send(dp_model) IS 'the binary output of dp_model';
CREATE TYPE dp_model (
  INPUT = dp_model_in, OUTPUT = dp_model_out,
  RECEIVE = dp_model_recv, SEND = dp_model_send,
  INTERNALLENGTH = VARIABLE, ALIGNMENT = double, STORAGE = extended);
COMMENT ON TYPE dp_model IS 'a released differentially private model; its text form is JSON';

CREATE CAST (dp_model AS jsonb) WITH INOUT AS ASSIGNMENT;
CREATE CAST (jsonb AS dp_model) WITH INOUT;

-- Probability (logistic) or prediction (Huber), with training's clipping.
CREATE FUNCTION dp_predict(model dp_model, features float8[]) RETURNS float8
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_predict(dp_model, float8[]) IS 'the probability (logistic) or prediction (Huber) of a model for a feature vector, with training''s clipping (a NULL element counts as 0, as in training); an error for softmax models';

-- One row per coefficient: intercept first, then x1.. or the feature names;
-- softmax models list class 0's rows, then class 1's, ...
CREATE FUNCTION dp_coefficients(model dp_model, OUT term text, OUT coefficient float8, OUT class int)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE ROWS 50;
COMMENT ON FUNCTION dp_coefficients(dp_model) IS 'one row per coefficient: intercept, then x1 ... or the feature names; softmax models list class 0''s rows, then class 1''s';

-- The most likely class: argmax of the class probabilities (binary logistic
-- models: 1 when p > 0.5, else 0), with training's clipping.
CREATE FUNCTION dp_predict_class(model dp_model, features float8[]) RETURNS int
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_predict_class IS 'the most likely class of a softmax or logistic model (a NULL feature element counts as 0, as in training)';

-- The class probabilities, class 0 first (binary logistic models: {1 - p, p}).
CREATE FUNCTION dp_predict_proba(model dp_model, features float8[]) RETURNS float8[]
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_predict_proba IS 'the class probabilities of a softmax or logistic model (a NULL feature element counts as 0, as in training)';

-- The plan of a release, without reading any data.
CREATE FUNCTION dp_explain(loss text, n bigint, d int, options jsonb) RETURNS jsonb
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_explain(text, bigint, int, jsonb) IS 'the plan of a release (algorithm, iterations, noise, accounting, memory) for a loss, n, d and options, without reading any data';

-- ---------------------------------------------------------------- aggregates

CREATE FUNCTION dperm.logreg_bool_transition(internal, float8[], boolean, jsonb)
  RETURNS internal AS 'MODULE_PATHNAME', 'dperm_logreg_bool_transition'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.logreg_bool_transition(internal, float8[], boolean, jsonb) IS 'internal: dp_logreg''s transition (boolean labels); buffers one clipped row';
CREATE FUNCTION dperm.logreg_float_transition(internal, float8[], float8, jsonb)
  RETURNS internal AS 'MODULE_PATHNAME', 'dperm_logreg_float_transition'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.logreg_float_transition(internal, float8[], float8, jsonb) IS 'internal: dp_logreg''s transition (float8 labels); buffers one clipped row';
CREATE FUNCTION dperm.huber_transition(internal, float8[], float8, jsonb)
  RETURNS internal AS 'MODULE_PATHNAME', 'dperm_huber_transition'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.huber_transition(internal, float8[], float8, jsonb) IS 'internal: dp_huber''s transition; buffers one clipped row';
CREATE FUNCTION dperm.softmax_transition(internal, float8[], int, jsonb)
  RETURNS internal AS 'MODULE_PATHNAME', 'dperm_softmax_transition'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.softmax_transition(internal, float8[], int, jsonb) IS 'internal: dp_softmax''s transition; buffers one clipped row';
-- The final function charges the ledger (through a background worker) and
-- trains: it is volatile, and runs in the leader only.
CREATE FUNCTION dperm.final(internal) RETURNS dp_model
  AS 'MODULE_PATHNAME', 'dperm_final' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.final(internal) IS 'internal: the training aggregates'' final function; charges the ledger, then trains';

-- The in-memory aggregates stay in the leader: PARALLEL RESTRICTED, and no
-- combine function (shipping buffered rows to the leader made parallel plans
-- slower than serial ones). Their buffer is capped by dperm.max_buffer;
-- larger relations train with dperm.train's streaming mode, whose per-pass
-- aggregates are the parallel ones. Rows whose class is NULL or outside
-- 0 .. K-1 (K = the classes option) are skipped like NULL rows.
CREATE AGGREGATE dp_logreg(features float8[], label boolean, options jsonb) (
  SFUNC = dperm.logreg_bool_transition, STYPE = internal, FINALFUNC = dperm.final,
  PARALLEL = RESTRICTED);
CREATE AGGREGATE dp_logreg(features float8[], label float8, options jsonb) (
  SFUNC = dperm.logreg_float_transition, STYPE = internal, FINALFUNC = dperm.final,
  PARALLEL = RESTRICTED);
CREATE AGGREGATE dp_huber(features float8[], target float8, options jsonb) (
  SFUNC = dperm.huber_transition, STYPE = internal, FINALFUNC = dperm.final,
  PARALLEL = RESTRICTED);
CREATE AGGREGATE dp_softmax(features float8[], class int, options jsonb) (
  SFUNC = dperm.softmax_transition, STYPE = internal, FINALFUNC = dperm.final,
  PARALLEL = RESTRICTED);
COMMENT ON AGGREGATE dp_logreg(float8[], boolean, jsonb) IS 'differentially private logistic regression';
COMMENT ON AGGREGATE dp_logreg(float8[], float8, jsonb) IS 'differentially private logistic regression (label > 0 is positive)';
COMMENT ON AGGREGATE dp_huber(float8[], float8, jsonb) IS 'differentially private Huber regression';
COMMENT ON AGGREGATE dp_softmax(float8[], int, jsonb) IS 'differentially private multinomial (softmax) logistic regression over classes 0 .. K-1';

-- Per-pass aggregates of dperm.train's streaming mode: for a model w and a
-- spec (loss, d, fit_intercept, feature_bound, huber_delta, classes,
-- target_bound) given
-- as constants, one scan returns {rows, loss sum, gradient sum...} over the
-- rows clipped and labelled as dperm.train's in-memory path stores them.
-- A plain float8[] state with an element-wise combine: parallel workers
-- share each pass. They refuse to run outside dperm.train's passes (the
-- superuser-only setting dperm.internal_pass): exact gradients are not
-- private.
CREATE FUNCTION dperm.pass_logreg_bool_step(float8[], float8[], boolean, float8[], float8[])
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_pass_logreg_bool_step'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.pass_logreg_bool_step(float8[], float8[], boolean, float8[], float8[]) IS 'internal: a streaming pass''s transition (logistic, boolean labels); only inside dperm.train';
CREATE FUNCTION dperm.pass_logreg_float_step(float8[], float8[], float8, float8[], float8[])
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_pass_logreg_float_step'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.pass_logreg_float_step(float8[], float8[], float8, float8[], float8[]) IS 'internal: a streaming pass''s transition (logistic, float8 labels); only inside dperm.train';
CREATE FUNCTION dperm.pass_huber_step(float8[], float8[], float8, float8[], float8[])
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_pass_huber_step'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.pass_huber_step(float8[], float8[], float8, float8[], float8[]) IS 'internal: a streaming pass''s transition (Huber); only inside dperm.train';
CREATE FUNCTION dperm.pass_softmax_step(float8[], float8[], int, float8[], float8[])
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_pass_softmax_step'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.pass_softmax_step(float8[], float8[], int, float8[], float8[]) IS 'internal: a streaming pass''s transition (softmax); only inside dperm.train';
CREATE FUNCTION dperm.pass_combine(float8[], float8[]) RETURNS float8[]
  AS 'MODULE_PATHNAME', 'dperm_pass_combine' LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.pass_combine(float8[], float8[]) IS 'internal: adds two streaming pass states element by element (parallel workers, Citus shards)';
CREATE AGGREGATE dperm.pass_logreg(features float8[], label boolean, w float8[], spec float8[]) (
  SFUNC = dperm.pass_logreg_bool_step, STYPE = float8[], INITCOND = '{}',
  COMBINEFUNC = dperm.pass_combine, PARALLEL = SAFE);
CREATE AGGREGATE dperm.pass_logreg(features float8[], label float8, w float8[], spec float8[]) (
  SFUNC = dperm.pass_logreg_float_step, STYPE = float8[], INITCOND = '{}',
  COMBINEFUNC = dperm.pass_combine, PARALLEL = SAFE);
CREATE AGGREGATE dperm.pass_huber(features float8[], target float8, w float8[], spec float8[]) (
  SFUNC = dperm.pass_huber_step, STYPE = float8[], INITCOND = '{}',
  COMBINEFUNC = dperm.pass_combine, PARALLEL = SAFE);
CREATE AGGREGATE dperm.pass_softmax(features float8[], class int, w float8[], spec float8[]) (
  SFUNC = dperm.pass_softmax_step, STYPE = float8[], INITCOND = '{}',
  COMBINEFUNC = dperm.pass_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE dperm.pass_logreg(float8[], boolean, float8[], float8[]) IS 'dperm.train internal: one streaming pass (rows, loss sum, gradient sum)';
COMMENT ON AGGREGATE dperm.pass_logreg(float8[], float8, float8[], float8[]) IS 'dperm.train internal: one streaming pass (rows, loss sum, gradient sum)';
COMMENT ON AGGREGATE dperm.pass_huber(float8[], float8, float8[], float8[]) IS 'dperm.train internal: one streaming pass (rows, loss sum, gradient sum)';
COMMENT ON AGGREGATE dperm.pass_softmax(float8[], int, float8[], float8[]) IS 'dperm.train internal: one streaming pass (rows, loss sum, gradient sum)';

-- ------------------------------------------------------------ accountant
-- Poisson sampling, add/remove neighbours, L2 sensitivity 1 (the setting of
-- TensorFlow Privacy, Opacus and dp_accounting), unless stated otherwise.

CREATE FUNCTION dperm.gaussian_sigma(epsilon float8, delta float8, sensitivity float8 DEFAULT 1)
  RETURNS float8 AS 'MODULE_PATHNAME', 'dperm_gaussian_sigma'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.gaussian_sigma IS 'smallest sigma of an (epsilon, delta)-DP Gaussian mechanism (analytic Gaussian, Balle & Wang 2018)';

CREATE FUNCTION dperm.rdp_subsampled_gaussian(q float8, noise_multiplier float8, steps bigint, orders float8[])
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_rdp_subsampled_gaussian'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.rdp_subsampled_gaussian IS 'RDP of steps Poisson-subsampled Gaussian steps at the given orders (Mironov, Talwar, Zhang 2019)';

CREATE FUNCTION dperm.rdp_to_epsilon(orders float8[], rdp float8[], delta float8)
  RETURNS float8 AS 'MODULE_PATHNAME', 'dperm_rdp_to_epsilon'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.rdp_to_epsilon IS 'epsilon at delta of an RDP curve, best order, improved conversion (Balle et al. 2020)';

CREATE FUNCTION dperm.epsilon_subsampled_gaussian(q float8, noise_multiplier float8, steps bigint, delta float8,
                                                   accountant text DEFAULT 'rdp')
  RETURNS float8 AS 'MODULE_PATHNAME', 'dperm_epsilon_subsampled_gaussian'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.epsilon_subsampled_gaussian IS 'epsilon of steps Poisson-subsampled Gaussian steps, by the rdp or pld accountant';

CREATE FUNCTION dperm.calibrate_noise_multiplier(q float8, steps bigint, epsilon float8, delta float8,
                                                  accountant text DEFAULT 'rdp')
  RETURNS float8 AS 'MODULE_PATHNAME', 'dperm_calibrate_noise_multiplier'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.calibrate_noise_multiplier IS 'smallest noise multiplier whose accounted epsilon is at most the target';

-- The fixed grid of Renyi orders of the ledger's curves.
-- What a release that is (epsilon, delta)-DP per privacy unit costs a budget
-- that protects rows (group privacy over the two units a replaced row
-- touches: unit_level.hpp); the ledger writer charges the same.
CREATE FUNCTION dperm.unit_release_at_row(epsilon float8, delta float8,
                                          OUT epsilon float8, OUT delta float8, OUT rdp float8[])
  AS 'MODULE_PATHNAME', 'dperm_unit_release_at_row'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.unit_release_at_row(float8, float8) IS 'what a release that is (epsilon, delta)-DP per privacy unit (its count and model, as the ledger charges them) costs a budget that protects rows: (2 epsilon, delta (1 + e^epsilon)), and the pure curve of 2 epsilon when delta = 0';

CREATE FUNCTION dperm.rdp_orders() RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_rdp_orders'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.rdp_orders IS 'the Renyi orders of the RDP curves in dperm.ledger.rdp';

-- ---------------------------------------------------------------- catalog

CREATE TABLE dperm.budgets (
  relation regclass PRIMARY KEY,
  epsilon float8 NOT NULL CHECK (epsilon >= 0 AND epsilon < 'infinity'),
  delta float8 NOT NULL DEFAULT 0 CHECK (delta >= 0 AND delta < 1),
  set_by regrole,
  set_at timestamptz NOT NULL DEFAULT now(),
  accounting text NOT NULL DEFAULT 'rdp' CHECK (accounting IN ('rdp', 'basic')),
  privacy_unit name,
  max_rows_per_unit int CHECK (max_rows_per_unit BETWEEN 1 AND 100000),
  CHECK ((privacy_unit IS NULL) = (max_rows_per_unit IS NULL)));
COMMENT ON TABLE dperm.budgets IS 'total privacy budget of each relation, set by its owner';
COMMENT ON COLUMN dperm.budgets.privacy_unit IS 'the column naming the unit every release is private for (NULL: the row)';
COMMENT ON COLUMN dperm.budgets.max_rows_per_unit IS 'k: the rows each unit contributes to a release (dperm.train bounds them)';
COMMENT ON COLUMN dperm.budgets.set_by IS 'the role that set the budget, by OID (NULL: a role name dperm 0.7.0''s upgrade found no role for)';

CREATE TABLE dperm.ledger (
  id bigserial PRIMARY KEY,
  released_at timestamptz NOT NULL,
  role regrole,
  relations regclass[] NOT NULL,
  relation_names text[] NOT NULL,
  algorithm text NOT NULL,
  mechanism text NOT NULL,
  loss text NOT NULL,
  neighbors text NOT NULL,
  epsilon float8 NOT NULL,
  delta float8 NOT NULL,
  n bigint NOT NULL,
  d int NOT NULL,
  seeded boolean NOT NULL,
  query text,
  rdp float8[],
  role_name name NOT NULL,
  charged_with bigint);
CREATE INDEX ledger_relations ON dperm.ledger USING gin (relations);
COMMENT ON TABLE dperm.ledger IS 'one row per release, written before the model is returned';
COMMENT ON COLUMN dperm.ledger.rdp IS 'the release''s RDP curve on dperm.rdp_orders(); NULL when none is known';
COMMENT ON COLUMN dperm.ledger.role IS 'the releasing role, by OID: a later role of the same name is another role (NULL: a name dperm 0.7.0''s upgrade found no role for)';
COMMENT ON COLUMN dperm.ledger.role_name IS 'the releasing role''s name at the release (history: a dropped role''s OID has no name)';
COMMENT ON COLUMN dperm.ledger.charged_with IS 'the ledger row of the same release this row accompanies: a unit-level release is charged at the unit to the budgets that name it, and at the row (this row) to every other relation it reads (NULL: none)';

SELECT pg_catalog.pg_extension_config_dump('dperm.budgets', '');
SELECT pg_catalog.pg_extension_config_dump('dperm.ledger', '');
SELECT pg_catalog.pg_extension_config_dump('dperm.ledger_id_seq', '');

-- Whether the current role may see a relation's budget and spend (the
-- totals of every role's releases): a superuser or a member of
-- pg_read_all_stats, a role with the privileges of the owner of the relation
-- or of a parent, or SELECT on one of them, or an analyst of its protection.
CREATE FUNCTION dperm.relation_visible(relation regclass) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dperm_relation_visible'
  LANGUAGE C STRICT STABLE PARALLEL RESTRICTED;
COMMENT ON FUNCTION dperm.relation_visible IS 'whether the current role may see a relation''s privacy budget and spend (its owner''s privileges, SELECT on it or a parent, an analyst of it, or pg_read_all_stats)';

-- Spent epsilon and delta of a relation under an accounting, optionally with
-- one more release. Composes the relation's row of dperm.budget_totals, the
-- sums of every ledger row (the view and the ledger writer need totals, not
-- the caller's own rows), which it reads as the catalog owner: for a caller
-- that dperm.relation_visible admits, 42501 otherwise.
CREATE FUNCTION dperm.budget_spent(relation regclass, accounting text, delta_budget float8,
                                   extra_rdp float8[] DEFAULT NULL, extra_epsilon float8 DEFAULT 0,
                                   extra_delta float8 DEFAULT 0,
                                   OUT epsilon float8, OUT delta float8, OUT releases bigint)
  AS 'MODULE_PATHNAME', 'dperm_budget_spent'
  LANGUAGE C CALLED ON NULL INPUT STABLE
  SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION dperm.budget_spent(regclass, text, float8, float8[], float8, float8) IS 'what a relation has spent under an accounting (what budget_status shows), optionally with one more charge; 42501 unless the caller may see the relation';

-- accounting NULL keeps a budget's accounting ('rdp' for a new budget).
-- delta NULL (the default) keeps a budget's delta (1e-5, the delta the
-- user guide recommends, for a new budget).
-- privacy_unit and max_rows_per_unit NULL keep the budget's unit (the row
-- for a new budget).
CREATE FUNCTION dperm.set_budget(relation regclass, epsilon float8, delta float8 DEFAULT NULL,
                                 accounting text DEFAULT NULL, privacy_unit text DEFAULT NULL,
                                 max_rows_per_unit int DEFAULT NULL)
  RETURNS void AS 'MODULE_PATHNAME', 'dperm_set_budget' LANGUAGE C CALLED ON NULL INPUT VOLATILE;
COMMENT ON FUNCTION dperm.set_budget IS 'sets the total privacy budget of a relation (its owner or a superuser); delta NULL keeps the budget''s (1e-5 for a new one); accounting rdp (default) or basic; privacy_unit, a column naming the person (default: the row), with max_rows_per_unit, the rows each contributes';

-- security_invoker: the caller reads dperm.budgets, whose row-level
-- security shows it the relations it may see (dperm.relation_visible).
CREATE VIEW dperm.budget_status WITH (security_invoker = true) AS
SELECT b.relation,
       b.accounting,
       b.epsilon AS epsilon_budget,
       b.delta AS delta_budget,
       s.epsilon AS epsilon_spent,
       s.delta AS delta_spent,
       greatest(b.epsilon - s.epsilon, 0) AS epsilon_remaining,
       greatest(b.delta - s.delta, 0) AS delta_remaining,
       s.releases,
       COALESCE(b.privacy_unit::text, 'row') AS privacy_unit,
       b.max_rows_per_unit
  FROM dperm.budgets b,
       LATERAL dperm.budget_spent(b.relation, b.accounting, b.delta) s;
COMMENT ON VIEW dperm.budget_status IS 'spent and remaining privacy budget per relation the caller may see, under its accounting';
COMMENT ON COLUMN dperm.budget_status.epsilon_spent IS 'the composed epsilon of the releases; under rdp accounting at the whole delta budget (the releases are (epsilon_spent, delta_budget)-DP)';
COMMENT ON COLUMN dperm.budget_status.delta_spent IS 'under basic accounting the summed delta; under rdp the delta the releases without an RDP curve took (releases with a curve take none: it is converted at what is left)';
COMMENT ON COLUMN dperm.budget_status.delta_remaining IS 'the delta later releases may still take (under rdp: releases without a curve; a release with a curve needs none)';
GRANT SELECT ON dperm.budget_status TO PUBLIC;

-- Each role reads the budgets of the relations it may see
-- (dperm.relation_visible) and its own ledger rows (members of
-- pg_read_all_stats see all); only the extension writes. The catalog's owner
-- (dperm's own SECURITY DEFINER functions, the ledger writer) bypasses both.
-- Its own ledger rows: its OID (a later role of a dropped role's name is
-- another role) and its name (a dropped role's OID, restored as a number
-- into another cluster, may be another role's there).
ALTER TABLE dperm.budgets ENABLE ROW LEVEL SECURITY;
CREATE POLICY budgets_visible ON dperm.budgets FOR SELECT
  USING (dperm.relation_visible(relation));
ALTER TABLE dperm.ledger ENABLE ROW LEVEL SECURITY;
CREATE POLICY ledger_own_rows ON dperm.ledger FOR SELECT
  USING ((role OPERATOR(pg_catalog.=) (SELECT pg_catalog.to_regrole(pg_catalog.quote_ident(CURRENT_USER)))
          AND role_name OPERATOR(pg_catalog.=) CURRENT_USER)
         OR pg_catalog.pg_has_role('pg_read_all_stats', 'MEMBER'));
GRANT USAGE ON SCHEMA dperm TO PUBLIC;
GRANT SELECT ON dperm.budgets, dperm.ledger TO PUBLIC;

-- ==== running budget totals ====
-- One row per relation that a ledger row names (and '-' for the releases
-- that read none): the sums dperm.budget_spent
-- composes (ComposeTotals, src/core/accounting/budget.cpp), so a budget check reads one
-- row, not every charge. Kept by the ledger's own triggers in the transaction
-- that writes the ledger rows (the ledger writer's, under its budget row
-- locks): an insert adds its rows; an update or delete recounts only the
-- relations whose rows it changed (dperm.move_budget's update: the two
-- relations it moves between, so an open mover's transaction locks no other
-- relation's totals); a truncate recounts every total. Derived data, not
-- dumped: last_id, the highest ledger id a row counts, is the watermark
-- dperm.budget_totals_stale() compares with the ledger, so ledger rows
-- restored without the trigger (pg_restore --data-only --disable-triggers)
-- are never read as unspent: dperm.budget_spent then composes the ledger
-- itself, and the ledger writer recounts the totals before its next check.
CREATE TABLE dperm.budget_totals (
  relation regclass PRIMARY KEY,
  releases bigint NOT NULL,
  epsilon float8 NOT NULL,
  delta float8 NOT NULL,
  plain_epsilon float8 NOT NULL,
  plain_delta float8 NOT NULL,
  curves bigint NOT NULL,
  rdp float8[],
  last_id bigint NOT NULL DEFAULT 0);
CREATE INDEX budget_totals_last_id ON dperm.budget_totals (last_id);
COMMENT ON TABLE dperm.budget_totals IS 'per relation: the sums of its dperm.ledger rows that dperm.budget_spent composes (kept by the ledger''s triggers)';
COMMENT ON COLUMN dperm.budget_totals.plain_epsilon IS 'sum of the epsilon of the rows without a curve (they compose by sums)';
COMMENT ON COLUMN dperm.budget_totals.rdp IS 'order-wise sum of the rows'' RDP curves on dperm.rdp_orders() (NULL: no curve)';
COMMENT ON COLUMN dperm.budget_totals.last_id IS 'the highest dperm.ledger id the row counts (the watermark of dperm.budget_totals_stale())';
-- No grant: the totals count every role's releases, which the ledger's
-- row-level security hides from other roles; dperm.budget_spent (SECURITY
-- DEFINER) and the ledger writer read them.
REVOKE ALL ON dperm.budget_totals FROM PUBLIC;

-- Whether a ledger row's rdp is a curve budget_spent composes (else the row
-- composes by sums): one dimension, no NULL, one value per order.
CREATE FUNCTION dperm.is_ledger_curve(rdp float8[]) RETURNS boolean
  LANGUAGE sql STABLE PARALLEL SAFE
  RETURN coalesce(pg_catalog.array_ndims(rdp) OPERATOR(pg_catalog.=) 1
                  AND pg_catalog.cardinality(rdp) OPERATOR(pg_catalog.=) pg_catalog.cardinality(dperm.rdp_orders())
                  AND pg_catalog.array_position(rdp, NULL) IS NULL, false);
COMMENT ON FUNCTION dperm.is_ledger_curve(float8[]) IS 'whether a ledger row''s rdp is a curve on dperm.rdp_orders() that composes (else the row composes by sums)';

-- Order-wise sum of two curves (NULL is no curve).
CREATE FUNCTION dperm.curve_add(a float8[], b float8[]) RETURNS float8[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a
              ELSE ARRAY(SELECT x OPERATOR(pg_catalog.+) y
                           FROM ROWS FROM (pg_catalog.unnest(a), pg_catalog.unnest(b))
                                WITH ORDINALITY u(x, y, i) ORDER BY i) END;
COMMENT ON FUNCTION dperm.curve_add(float8[], float8[]) IS 'the order-wise sum of two RDP curves (NULL is no curve)';
CREATE AGGREGATE dperm.curve_sum(float8[]) (SFUNC = dperm.curve_add, STYPE = float8[]);
COMMENT ON AGGREGATE dperm.curve_sum(float8[]) IS 'the order-wise sum of RDP curves';

-- The keys a ledger row adds to in dperm.budget_totals: its relations, or
-- the row '-' (relation 0) for a release that read none, so that every
-- ledger row is under some total's watermark (last_id).
CREATE FUNCTION dperm.totals_keys(relations regclass[]) RETURNS regclass[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE WHEN pg_catalog.cardinality(relations) OPERATOR(pg_catalog.>) 0 THEN relations
              ELSE ARRAY[0::pg_catalog.oid::pg_catalog.regclass] END;
COMMENT ON FUNCTION dperm.totals_keys(regclass[]) IS 'internal: the dperm.budget_totals rows a ledger row adds to (its relations; ''-'' for none)';

-- Recounts the totals of `only_relations` (NULL: every relation; '-': the
-- releases that read none) from the ledger: their rows are deleted and
-- summed again.
CREATE FUNCTION dperm.recount_budget_totals(only_relations regclass[]) RETURNS void
  LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  rows_of text := '';
BEGIN
  IF only_relations IS NULL THEN
    DELETE FROM dperm.budget_totals;
  ELSE
    DELETE FROM dperm.budget_totals t WHERE t.relation = ANY (only_relations);
    -- the ledger's GIN index finds the rows; '-' adds the rows without relations
    rows_of := 'WHERE (l.relations && $1'
               || CASE WHEN 0::oid::regclass = ANY (only_relations)
                       THEN ' OR cardinality(l.relations) = 0' ELSE '' END
               || ') AND r.relation = ANY ($1)';
  END IF;
  EXECUTE format($q$
    INSERT INTO dperm.budget_totals
    SELECT r.relation, count(*), sum(l.epsilon), sum(l.delta),
           coalesce(sum(l.epsilon) FILTER (WHERE NOT c.curved), 0),
           coalesce(sum(l.delta) FILTER (WHERE NOT c.curved), 0),
           count(*) FILTER (WHERE c.curved),
           dperm.curve_sum(l.rdp) FILTER (WHERE c.curved),
           max(l.id)
      FROM dperm.ledger l,
           LATERAL (SELECT DISTINCT u FROM unnest(dperm.totals_keys(l.relations)) u) r(relation),
           LATERAL (SELECT dperm.is_ledger_curve(l.rdp)) c(curved)
     %s
     GROUP BY r.relation$q$, rows_of) USING only_relations;
END $$;
COMMENT ON FUNCTION dperm.recount_budget_totals(regclass[]) IS 'internal: sums the dperm.budget_totals rows of these relations (NULL: all) again from the ledger';
REVOKE ALL ON FUNCTION dperm.recount_budget_totals(regclass[]) FROM PUBLIC;

-- Whether the ledger has a row that the totals do not count: one above
-- every total's watermark. Two index probes: the ledger's primary key is
-- searched with the watermark as a constant (a generic plan could scan the
-- whole ledger).
CREATE FUNCTION dperm.budget_totals_stale() RETURNS boolean
  LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  watermark bigint;
  stale boolean;
BEGIN
  SELECT coalesce(max(t.last_id), 0) INTO watermark FROM dperm.budget_totals t;
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM dperm.ledger l WHERE l.id > %s)',
                 watermark) INTO stale;
  RETURN stale;
END $$;
COMMENT ON FUNCTION dperm.budget_totals_stale() IS 'internal: whether dperm.ledger has rows dperm.budget_totals does not count (rows restored without the ledger''s triggers)';
REVOKE ALL ON FUNCTION dperm.budget_totals_stale() FROM PUBLIC;

-- The ledger writer's call before a budget check: recounts every total when
-- they are stale; true when it did. A totals row another transaction holds
-- (an open dperm.move_budget's) is not waited for beyond the writer's
-- lock_timeout: the totals stay stale, and dperm.budget_spent composes the
-- ledger meanwhile.
CREATE FUNCTION dperm.refresh_budget_totals() RETURNS boolean
  LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF NOT dperm.budget_totals_stale() THEN
    RETURN false;
  END IF;
  BEGIN
    PERFORM dperm.recount_budget_totals(NULL);
  EXCEPTION WHEN lock_not_available THEN
    RETURN false;
  END;
  RETURN true;
END $$;
COMMENT ON FUNCTION dperm.refresh_budget_totals() IS 'internal: recounts dperm.budget_totals from the ledger when they are stale (the ledger writer, before a budget check)';
REVOKE ALL ON FUNCTION dperm.refresh_budget_totals() FROM PUBLIC;

CREATE FUNCTION dperm.ledger_totals() RETURNS trigger
  LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  changed regclass[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO dperm.budget_totals AS t
    SELECT r.relation, count(*), sum(l.epsilon), sum(l.delta),
           coalesce(sum(l.epsilon) FILTER (WHERE NOT c.curved), 0),
           coalesce(sum(l.delta) FILTER (WHERE NOT c.curved), 0),
           count(*) FILTER (WHERE c.curved),
           dperm.curve_sum(l.rdp) FILTER (WHERE c.curved),
           max(l.id)
      FROM new_rows l,
           LATERAL (SELECT DISTINCT u FROM unnest(dperm.totals_keys(l.relations)) u) r(relation),
           LATERAL (SELECT dperm.is_ledger_curve(l.rdp)) c(curved)
     GROUP BY r.relation
    ON CONFLICT (relation) DO UPDATE SET
      releases = t.releases + excluded.releases,
      epsilon = t.epsilon + excluded.epsilon,
      delta = t.delta + excluded.delta,
      plain_epsilon = t.plain_epsilon + excluded.plain_epsilon,
      plain_delta = t.plain_delta + excluded.plain_delta,
      curves = t.curves + excluded.curves,
      rdp = dperm.curve_add(t.rdp, excluded.rdp),
      last_id = greatest(t.last_id, excluded.last_id);
  ELSIF TG_OP = 'UPDATE' THEN
    -- The relations whose rows changed: added to or removed from a row, or
    -- named by a row whose id or charge changed.
    SELECT array_agg(DISTINCT u.relation) INTO changed
      FROM old_rows o FULL JOIN new_rows n ON o.id = n.id,
           LATERAL unnest(coalesce(dperm.totals_keys(o.relations), '{}')
                          || coalesce(dperm.totals_keys(n.relations), '{}')) u(relation)
     WHERE o.id IS NULL OR n.id IS NULL
        OR (o.epsilon, o.delta, o.rdp) IS DISTINCT FROM (n.epsilon, n.delta, n.rdp)
        OR NOT (u.relation = ANY (dperm.totals_keys(o.relations))
                AND u.relation = ANY (dperm.totals_keys(n.relations)));
    IF changed IS NOT NULL THEN
      PERFORM dperm.recount_budget_totals(changed);
    END IF;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT array_agg(DISTINCT u.relation) INTO changed
      FROM old_rows o, LATERAL unnest(dperm.totals_keys(o.relations)) u(relation);
    IF changed IS NOT NULL THEN
      PERFORM dperm.recount_budget_totals(changed);
    END IF;
  ELSE
    PERFORM dperm.recount_budget_totals(NULL);
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION dperm.ledger_totals() IS 'internal: the ledger''s trigger that keeps dperm.budget_totals, each relation''s running sums';
CREATE TRIGGER ledger_totals_insert AFTER INSERT ON dperm.ledger
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION dperm.ledger_totals();
CREATE TRIGGER ledger_totals_update AFTER UPDATE ON dperm.ledger
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION dperm.ledger_totals();
CREATE TRIGGER ledger_totals_delete AFTER DELETE ON dperm.ledger
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION dperm.ledger_totals();
CREATE TRIGGER ledger_totals_truncate AFTER TRUNCATE ON dperm.ledger
  FOR EACH STATEMENT EXECUTE FUNCTION dperm.ledger_totals();

-- ---------------------------------------------------------------- protected relations

-- A protected relation: its owner revoked every direct privilege (analysts
-- cannot SELECT it) and lets `analysts` (NULL: every role) train on it
-- through dperm.train, which charges it.
CREATE TABLE dperm.protected (
  relation regclass PRIMARY KEY,
  analysts regrole[],
  protected_by regrole,
  protected_at timestamptz NOT NULL DEFAULT now());
COMMENT ON TABLE dperm.protected IS 'relations readable only through dperm.train';
SELECT pg_catalog.pg_extension_config_dump('dperm.protected', '');
GRANT SELECT ON dperm.protected TO PUBLIC;

CREATE FUNCTION dperm.protect(relation regclass, analysts regrole[] DEFAULT NULL)
  RETURNS void AS 'MODULE_PATHNAME', 'dperm_protect' LANGUAGE C CALLED ON NULL INPUT VOLATILE;
COMMENT ON FUNCTION dperm.protect IS 'the owner revokes direct access to a relation, its partitions and inheritance children; analysts then train through dperm.train';

-- ==== budgets follow the data ====
-- A budget belongs to a relation's OID; nothing but its owner's explicit
-- decision ends it. Renaming, SET SCHEMA, TRUNCATE and reloading keep the
-- OID and so the budget. Dropping a budgeted relation (DROP TABLE, DROP
-- SCHEMA ... CASCADE, DROP OWNED, a partition dropped with its parent) is
-- refused by the event trigger below until the owner moves the budget to the
-- relation that replaces it (dperm.move_budget, the ETL reload) or retires
-- it (dperm.retire_budget). set_budget refuses temporary relations, which
-- end with their session without a DROP.

-- One row per retired budget: the owner's decision, with what had been
-- spent. The ledger keeps the rows charged to the relation.
CREATE TABLE dperm.retired_budgets (
  relation oid NOT NULL,
  relation_name text NOT NULL,
  epsilon float8 NOT NULL,
  delta float8 NOT NULL,
  accounting text NOT NULL,
  epsilon_spent float8,
  delta_spent float8,
  releases bigint NOT NULL,
  set_by regrole,
  retired_by regrole NOT NULL,
  retired_at timestamptz NOT NULL,
  privacy_unit name,
  max_rows_per_unit int);
COMMENT ON TABLE dperm.retired_budgets IS 'budgets their owners retired with dperm.retire_budget (the ledger keeps the charges)';
COMMENT ON COLUMN dperm.retired_budgets.relation IS 'the relation''s OID, as dperm.ledger.relations holds it';
SELECT pg_catalog.pg_extension_config_dump('dperm.retired_budgets', '');
GRANT SELECT ON dperm.retired_budgets TO PUBLIC;
-- As private as dperm.budgets: a retired budget's row (what every role's
-- releases had spent) shows to members of pg_read_all_stats, to roles with
-- the privileges of the role that set or retired it, and, while the
-- relation exists, to roles dperm.relation_visible admits.
ALTER TABLE dperm.retired_budgets ENABLE ROW LEVEL SECURITY;
CREATE POLICY retired_budgets_visible ON dperm.retired_budgets FOR SELECT USING (
  pg_catalog.pg_has_role('pg_read_all_stats', 'MEMBER')
  OR EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
              WHERE r.oid OPERATOR(pg_catalog.=) ANY (ARRAY[retired_by::pg_catalog.oid, set_by::pg_catalog.oid])
                AND pg_catalog.pg_has_role(r.oid, 'USAGE'))
  OR (EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) relation)
      AND dperm.relation_visible(relation::pg_catalog.regclass)));

-- Relations whose rows a relation held: a partition detached from its parent
-- (DETACH PARTITION), a child disinherited (NO INHERIT), and the old
-- relation of a moved budget (dperm.move_budget) with its partitions keep
-- their old ancestors' budgets and protection: a release that reads them is
-- charged to those budgets too. Recorded by the event trigger
-- dperm.budgeted_alter (before the command runs, in its transaction) and by
-- move_budget; forgotten when either relation is dropped. Dumped (a
-- configuration table, by name): restored with the relations.
CREATE TABLE dperm.lineage (
  relation regclass NOT NULL,
  ancestor regclass NOT NULL,
  recorded_at timestamptz NOT NULL,
  PRIMARY KEY (relation, ancestor));
COMMENT ON TABLE dperm.lineage IS 'relations whose rows a relation held (a detached partition, a disinherited child, a moved budget''s old relation): their budgets and protection still cover it';
SELECT pg_catalog.pg_extension_config_dump('dperm.lineage', '');
GRANT SELECT ON dperm.lineage TO PUBLIC;

CREATE FUNCTION dperm.move_budget(from_relation regclass, to_relation regclass)
  RETURNS void AS 'MODULE_PATHNAME', 'dperm_move_budget' LANGUAGE C CALLED ON NULL INPUT VOLATILE;
COMMENT ON FUNCTION dperm.move_budget IS 'moves a relation''s budget, its ledger charges, its protection and its models to the relation that replaces it (owner of both); then the old one may be dropped';

CREATE FUNCTION dperm.retire_budget(relation regclass)
  RETURNS void AS 'MODULE_PATHNAME', 'dperm_retire_budget' LANGUAGE C CALLED ON NULL INPUT VOLATILE;
COMMENT ON FUNCTION dperm.retire_budget IS 'ends a relation''s budget (its owner), recorded in dperm.retired_budgets; the ledger keeps its charges; then the relation may be dropped';

-- The event trigger's function: refuses a command that drops a relation
-- with a budget (2BP01), and forgets the protection of the relations it
-- drops (a later relation with a reused OID is not protected for the old
-- analysts). SECURITY DEFINER (it deletes from dperm.protected) with every
-- name qualified and search_path pinned: nothing a role defines in pg_temp
-- or elsewhere is resolved.
CREATE FUNCTION dperm.budgeted_drop() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  n bigint;
  names text;
  budgets text;
BEGIN
  SELECT pg_catalog.count(*),
         pg_catalog.string_agg(d.object_identity, ', ' ORDER BY d.object_identity),
         pg_catalog.string_agg(pg_catalog.format('%s has a budget of epsilon = %s and delta = %s (%s accounting), set by %s.',
                                                 d.object_identity, b.epsilon, b.delta, b.accounting,
                                                 COALESCE(b.set_by::pg_catalog.text, 'an unknown role')),
                               ' ' ORDER BY d.object_identity)
    INTO n, names, budgets
    FROM pg_catalog.pg_event_trigger_dropped_objects() d
    JOIN dperm.budgets b ON b.relation::pg_catalog.oid OPERATOR(pg_catalog.=) d.objid
   WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
     AND d.objsubid OPERATOR(pg_catalog.=) 0;
  IF n OPERATOR(pg_catalog.>) 0 THEN
    RAISE EXCEPTION 'cannot drop %: % a dperm privacy budget', names,
                    CASE WHEN n OPERATOR(pg_catalog.=) 1 THEN 'it has' ELSE 'they have' END
      USING ERRCODE = 'dependent_objects_still_exist',
            DETAIL = budgets OPERATOR(pg_catalog.||) ' Dropping would orphan the budget and the ledger rows '
                     'charged to it, and a reload of the data would have no budget.',
            HINT = 'To replace the relation (CREATE TABLE new AS ...; DROP TABLE old; ALTER TABLE new RENAME TO old), '
                   'move the budget first, in the same transaction: SELECT dperm.move_budget(''old'', ''new''). '
                   'To end the budget for good: SELECT dperm.retire_budget(''old''), then drop.';
  END IF;
  -- A dropped column that is a budget's privacy unit (ALTER TABLE ... DROP
  -- COLUMN, DROP TYPE ... CASCADE): the budget would have no unit left.
  SELECT pg_catalog.string_agg(pg_catalog.format('%s (the privacy unit of %s)', d.object_identity, b.relation),
                               ', ' ORDER BY d.object_identity)
    INTO names
    FROM pg_catalog.pg_event_trigger_dropped_objects() d
    JOIN dperm.budgets b ON b.relation::pg_catalog.oid OPERATOR(pg_catalog.=) d.objid
   WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
     AND d.objsubid OPERATOR(pg_catalog.>) 0
     AND d.address_names[pg_catalog.array_upper(d.address_names, 1)]
         OPERATOR(pg_catalog.=) (pg_catalog.to_jsonb(b) OPERATOR(pg_catalog.->>) 'privacy_unit');
  IF names IS NOT NULL THEN
    RAISE EXCEPTION 'cannot drop column %: a dperm privacy budget counts its units', names
      USING ERRCODE = 'dependent_objects_still_exist',
            DETAIL = 'The releases charged to the budget are private per unit of that column; without it '
                     'the budget could not bound the rows of a unit.',
            HINT = 'Keep the column (rename it if needed: the budget follows a RENAME COLUMN), or retire the '
                   'budget with dperm.retire_budget first.';
  END IF;
  DELETE FROM dperm.protected p
   USING pg_catalog.pg_event_trigger_dropped_objects() d
   WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
     AND d.objsubid OPERATOR(pg_catalog.=) 0
     AND p.relation::pg_catalog.oid OPERATOR(pg_catalog.=) d.objid;
  DELETE FROM dperm.lineage l
   USING pg_catalog.pg_event_trigger_dropped_objects() d
   WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
     AND d.objsubid OPERATOR(pg_catalog.=) 0
     AND (l.relation::pg_catalog.oid OPERATOR(pg_catalog.=) d.objid
          OR l.ancestor::pg_catalog.oid OPERATOR(pg_catalog.=) d.objid);
END $$;
COMMENT ON FUNCTION dperm.budgeted_drop() IS 'event trigger: refuses to drop a relation with a privacy budget (see dperm.move_budget, dperm.retire_budget) or a budget''s privacy unit column; forgets the protection and lineage of dropped relations';
CREATE EVENT TRIGGER dperm_budgeted_drop ON sql_drop EXECUTE FUNCTION dperm.budgeted_drop();

-- The event trigger that keeps budgets with the rows through ALTER TABLE
-- (docs/design.md, "Budgets follow the data"): before a DETACH PARTITION or
-- NO INHERIT it records the leaving relation's ancestors in dperm.lineage;
-- ATTACH PARTITION or INHERIT of a protected relation under a parent that is
-- not protected is refused (55000); a RENAME COLUMN of a budget's privacy
-- unit renames the unit with it.
CREATE FUNCTION dperm.budgeted_alter() RETURNS event_trigger
  AS 'MODULE_PATHNAME', 'dperm_budgeted_alter' LANGUAGE C;
COMMENT ON FUNCTION dperm.budgeted_alter() IS 'event trigger: a detached partition or disinherited child keeps its ancestors'' budgets and protection (dperm.lineage); a protected relation joins only a protected parent; a budget''s privacy unit follows a RENAME COLUMN';
CREATE EVENT TRIGGER dperm_budgeted_alter ON ddl_command_start
  WHEN TAG IN ('ALTER TABLE', 'ALTER FOREIGN TABLE', 'ALTER VIEW', 'ALTER MATERIALIZED VIEW')
  EXECUTE FUNCTION dperm.budgeted_alter();

-- dperm.train reads any relation the caller may read (protected ones as
-- their owner), and takes a mode: 'auto' (the 5-argument form: stream when
-- the rows would pass dperm.max_buffer), 'in_memory' or 'streaming'.
CREATE FUNCTION dperm.train(relation regclass, features text, label text, loss text, options jsonb)
  RETURNS dp_model AS 'MODULE_PATHNAME', 'dperm_train' LANGUAGE C STRICT VOLATILE;
CREATE FUNCTION dperm.train(relation regclass, features text, label text, loss text, options jsonb,
                            mode text)
  RETURNS dp_model AS 'MODULE_PATHNAME', 'dperm_train' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.train(regclass, text, text, text, jsonb) IS 'a private model from a relation the caller may read, or a protected one they are an analyst of (columns by name; loss @LOSS_NAMES@), charged to it; streams when the rows pass dperm.max_buffer';
COMMENT ON FUNCTION dperm.train(regclass, text, text, text, jsonb, text) IS 'dperm.train with a mode: auto, in_memory or streaming';

-- ==== training on a query ====
-- dperm.train_query (src/pg/release/train_query.cpp): a query is an input
-- with a noisy size (docs/design.md section 4).
CREATE FUNCTION dperm.train_query(query text, features text, label text, loss text, options jsonb)
  RETURNS dp_model AS 'MODULE_PATHNAME', 'dperm_train_query' LANGUAGE C STRICT VOLATILE;
CREATE FUNCTION dperm.train_query(query text, features text, label text, loss text, options jsonb,
                                  mode text)
  RETURNS dp_model AS 'MODULE_PATHNAME', 'dperm_train_query' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.train_query(text, text, text, text, jsonb) IS 'a private model on the rows a SELECT of one budgeted or protected relation gives (filters, per-row expressions that cannot fail, joins to public lookups on a unique key; features and label name its output columns); its size released noisily with a tenth of epsilon, charged whole to the relation before anything is read';
COMMENT ON FUNCTION dperm.train_query(text, text, text, text, jsonb, text) IS 'dperm.train_query with a mode: auto, in_memory or streaming';

-- Total float8 functions (src/pg/types/total_functions.cpp): NULL where the
-- built-in would raise, so a query's input may use them (LEAKPROOF: they
-- cannot fail on a value).
CREATE FUNCTION dperm.div(x float8, y float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dperm_div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION dperm.ln(x float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dperm_ln' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION dperm.log10(x float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dperm_log10' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION dperm.sqrt(x float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dperm_sqrt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION dperm.plus(x float8, y float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dperm_plus' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION dperm.minus(x float8, y float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dperm_minus' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION dperm.times(x float8, y float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dperm_times' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION dperm.div(float8, float8) IS 'x / y, or NULL where float8 division would raise (division by zero, a finite quotient out of range)';
COMMENT ON FUNCTION dperm.ln(float8) IS 'the natural logarithm, or NULL for x <= 0 (where ln raises)';
COMMENT ON FUNCTION dperm.log10(float8) IS 'the base-10 logarithm, or NULL for x <= 0 (where log raises)';
COMMENT ON FUNCTION dperm.sqrt(float8) IS 'the square root, or NULL for x < 0 (where sqrt raises)';
COMMENT ON FUNCTION dperm.plus(float8, float8) IS 'x + y, or NULL where float8 addition would raise (an infinite sum of finite numbers)';
COMMENT ON FUNCTION dperm.minus(float8, float8) IS 'x - y, or NULL where float8 subtraction would raise';
COMMENT ON FUNCTION dperm.times(float8, float8) IS 'x * y, or NULL where float8 multiplication would raise (overflow, or underflow to zero)';

-- ==== feature specs ====
-- Raw columns with public domains (src/core/model/feature_spec.cpp): numbers
-- scaled by declared bounds and clipped, categories one-hot over declared
-- values, booleans 0/1; the same encoder in the training scan and at
-- prediction.
CREATE FUNCTION dperm.encode_values(spec jsonb, vals text[]) RETURNS float8[]
  AS 'MODULE_PATHNAME', 'dperm_encode_values' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.encode_values(jsonb, text[]) IS 'one row encoded by a feature spec: its columns'' values as text, in the spec''s order (NULL for NULL)';
CREATE FUNCTION dperm.train(relation regclass, features jsonb, label text, loss text, options jsonb)
  RETURNS dp_model AS 'MODULE_PATHNAME', 'dperm_train' LANGUAGE C STRICT VOLATILE;
CREATE FUNCTION dperm.train(relation regclass, features jsonb, label text, loss text, options jsonb,
                            mode text)
  RETURNS dp_model AS 'MODULE_PATHNAME', 'dperm_train' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.train(regclass, jsonb, text, text, jsonb) IS 'dperm.train on raw columns through a feature spec (numeric bounds, categorical values, booleans): d, the feature names and the row bound come from the spec';
COMMENT ON FUNCTION dperm.train(regclass, jsonb, text, text, jsonb, text) IS 'dperm.train on raw columns through a feature spec, with a mode';
CREATE FUNCTION dperm.encode_label(spec jsonb, val text) RETURNS float8
  AS 'MODULE_PATHNAME', 'dperm_encode_label' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.encode_label(jsonb, text) IS 'a label value read through the column a feature spec marks "label": true (values: its index; boolean: 1 or 0; bounds: scaled to [-1, 1]); NULL outside the domain';

-- ---------------------------------------------------------------- progress
-- One row per backend training a release (dperm.train, or dp_logreg,
-- dp_huber and dp_softmax called directly), updated per pass and every
-- 100000 rows read; from the backends' progress slots, which no
-- pg_stat_progress_* view lists (src/pg/release/progress.cpp). Like
-- pg_stat_progress_*, a role sees the rows of backends whose role's
-- privileges it has, and pg_read_all_stats sees every row. relation is
-- named in the database it belongs to (relid elsewhere).
CREATE FUNCTION dperm.progress_info(OUT pid int, OUT datid oid, OUT relid oid, OUT loss text,
                                    OUT mode text, OUT algorithm text, OUT phase text,
                                    OUT pass int, OUT passes_planned int, OUT rows_read bigint,
                                    OUT started_at timestamptz)
  RETURNS SETOF record AS 'MODULE_PATHNAME', 'dperm_progress_info'
  LANGUAGE C VOLATILE PARALLEL RESTRICTED;
CREATE VIEW dperm.progress AS
  SELECT p.pid, p.datid, d.datname, p.relid,
         CASE WHEN d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
              THEN p.relid::pg_catalog.regclass END AS relation,
         p.loss, p.mode, p.algorithm, p.phase, p.pass, p.passes_planned, p.rows_read,
         p.started_at
    FROM dperm.progress_info() p
    LEFT JOIN pg_catalog.pg_database d ON d.oid OPERATOR(pg_catalog.=) p.datid;
GRANT SELECT ON dperm.progress TO PUBLIC;
COMMENT ON FUNCTION dperm.progress_info() IS 'the dperm releases in progress that the caller may see (see the view dperm.progress)';
COMMENT ON VIEW dperm.progress IS 'one row per backend training a dperm release: relation, algorithm, phase, pass of passes_planned, rows read';

-- ---------------------------------------------------------------- named models and scheduled retraining
-- Named models: one row per training run (version), trained or failed,
-- written only by dperm's C functions through the ledger writer (a
-- transaction of its own: a version outlives the caller's rollback, like a
-- charge). docs/user-guide.md, "Named models and retraining". Names belong to their owner
-- (key (owner, name, version)); roles are stored by OID (regrole: dumped
-- and restored by name), so a role created under a dropped role's name
-- inherits nothing.
CREATE TABLE dperm.models (
  name text NOT NULL,
  version int NOT NULL,
  status text NOT NULL CHECK (status IN ('trained', 'failed')),
  owner regrole NOT NULL,
  relation regclass NOT NULL,
  relation_name text NOT NULL,
  features text NOT NULL,
  label text NOT NULL,
  loss text NOT NULL,
  options jsonb NOT NULL,
  model dp_model,
  ledger_id bigint,
  epsilon float8,
  delta float8,
  rdp float8[],
  relations regclass[],
  trained_by regrole NOT NULL,
  trained_at timestamptz NOT NULL,
  error text,
  error_detail text,
  sqlstate text,
  evaluation jsonb,
  feature_spec jsonb,
  query text,
  query_canonical text,
  CHECK ((status = 'trained') = (model IS NOT NULL)),
  CONSTRAINT models_query CHECK ((query IS NULL) = (query_canonical IS NULL)),
  PRIMARY KEY (owner, name, version));
COMMENT ON TABLE dperm.models IS 'one row per training run of a named model: its specification, the released model or the error, and the ledger row it was charged by';
COMMENT ON COLUMN dperm.models.owner IS 'the role the model belongs to (who created it with dperm.train_model)';
COMMENT ON COLUMN dperm.models.feature_spec IS 'the feature spec the version was trained through (NULL: features names a float8[] column)';
COMMENT ON COLUMN dperm.models.query IS 'the query the model trains on, as dperm.train_model_query was given it (NULL: on the relation itself)';
COMMENT ON COLUMN dperm.models.query_canonical IS 'the query with every name qualified, as each run (dperm.retrain, a schedule) validates it again and reads it; relation is the private relation it read when recorded';
COMMENT ON COLUMN dperm.models.ledger_id IS 'the dperm.ledger row of the run''s charge (NULL: not charged)';
COMMENT ON COLUMN dperm.models.rdp IS 'the charge''s RDP curve, epsilon, delta and relations, copied from the ledger row (dperm.retraining_forecast composes them)';
COMMENT ON COLUMN dperm.models.evaluation IS 'private evaluations (dperm.evaluate), newest first';
SELECT pg_catalog.pg_extension_config_dump('dperm.models', '');

-- The dperm side of a pg_cron schedule (the job itself is pg_cron's), one
-- per model (owner, name; owner last: the column 0.7.0 added).
CREATE TABLE dperm.model_schedules (
  name text NOT NULL,
  cron_schedule text NOT NULL,
  jobid bigint,
  min_runs int NOT NULL,
  scheduled_by regrole NOT NULL,
  scheduled_at timestamptz NOT NULL,
  owner regrole NOT NULL,
  paused_at timestamptz,
  paused_reason text,
  CONSTRAINT model_schedules_paused CHECK ((paused_at IS NULL) = (paused_reason IS NULL)),
  PRIMARY KEY (owner, name));
COMMENT ON TABLE dperm.model_schedules IS 'the pg_cron job that retrains each scheduled model';
COMMENT ON COLUMN dperm.model_schedules.paused_at IS 'when a scheduled run first found that the budget cannot pay for the next run (NULL: not paused); each scheduled run checks again and resumes once it fits';
COMMENT ON COLUMN dperm.model_schedules.paused_reason IS 'why the schedule is paused: the relation whose budget the next run does not fit in';
SELECT pg_catalog.pg_extension_config_dump('dperm.model_schedules', '');

-- Each role sees its own models and those of relations it may train on:
-- relations it can SELECT (owners included) and protected relations it is an
-- analyst of. A schedule is visible with its model.
ALTER TABLE dperm.models ENABLE ROW LEVEL SECURITY;
CREATE POLICY models_visible ON dperm.models FOR SELECT USING (
  owner OPERATOR(pg_catalog.=) (SELECT r.oid FROM pg_catalog.pg_roles r
                                 WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)
  OR pg_catalog.has_table_privilege(relation::pg_catalog.oid, 'SELECT')
  OR EXISTS (SELECT 1 FROM dperm.protected p
              WHERE p.relation OPERATOR(pg_catalog.=) models.relation
                AND (p.analysts IS NULL
                     OR EXISTS (SELECT 1 FROM pg_catalog.unnest(p.analysts) a
                                 WHERE pg_catalog.pg_has_role(a::pg_catalog.oid, 'MEMBER')))));
ALTER TABLE dperm.model_schedules ENABLE ROW LEVEL SECURITY;
CREATE POLICY model_schedules_visible ON dperm.model_schedules FOR SELECT USING (
  EXISTS (SELECT 1 FROM dperm.models m WHERE m.owner OPERATOR(pg_catalog.=) model_schedules.owner
                                         AND m.name OPERATOR(pg_catalog.=) model_schedules.name));
GRANT SELECT ON dperm.models, dperm.model_schedules TO PUBLIC;

CREATE FUNCTION dperm.train_model(name text, relation regclass, features text, label text,
                                  loss text, options jsonb)
  RETURNS int AS 'MODULE_PATHNAME', 'dperm_train_model' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.train_model IS 'trains a new version of the caller''s own named model (dperm.train for protected relations, as the caller otherwise); returns the version; 42710 when the name''s versions have another relation, columns or loss';

-- dperm.train_model_query (src/pg/models/model_query.cpp): a named model on
-- a query (dperm.train_query); retrain validates its canonical text again.
CREATE FUNCTION dperm.train_model_query(name text, query text, features text, label text,
                                        loss text, options jsonb)
  RETURNS int AS 'MODULE_PATHNAME', 'dperm_train_model_query' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.train_model_query IS 'trains a new version of the caller''s own named model on a query (dperm.train_query: its size released noisily); the version stores the query and its canonical text, which dperm.retrain and schedules validate again and re-run; 42710 when the name''s versions have another query, relation, columns or loss';

-- The owner of the model a name resolves to for the caller: its own model
-- of that name, else the first tier that holds one it may see: roles whose
-- privileges it has (memberships a role granted itself not counted), then
-- models trained by their relation's owner on a permanent relation, then
-- any (src/pg/models/model_registry.cpp, ResolveOwner); NULL when it sees none;
-- 42725 when that tier holds several roles' models.
CREATE FUNCTION dperm.model_owner(name text)
  RETURNS regrole AS 'MODULE_PATHNAME', 'dperm_model_owner' LANGUAGE C STRICT STABLE;
COMMENT ON FUNCTION dperm.model_owner IS 'the owner of the model a name resolves to for the caller: its own, else by tiers of trust (roles whose privileges it has, not self-granted; then models of their relation''s owner on permanent relations; then any visible); NULL when none; 42725 when the first such tier holds several owners';

CREATE FUNCTION dperm.retrain(name text)
  RETURNS int AS 'MODULE_PATHNAME', 'dperm_retrain' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.retrain(text) IS 'trains the next version of a model from its latest specification (owner only); a run that fails after its charge is recorded as a failed version';
CREATE FUNCTION dperm.retrain(name text, owner regrole)
  RETURNS int AS 'MODULE_PATHNAME', 'dperm_retrain' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.retrain(text, regrole) IS 'dperm.retrain of the given role''s model (checked by OID)';
CREATE FUNCTION dperm.retrain_on_schedule(name text, owner regrole)
  RETURNS int AS 'MODULE_PATHNAME', 'dperm_retrain_on_schedule' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.retrain_on_schedule IS 'what a scheduled job runs: dperm.retrain(name, owner), or, when the budget cannot pay for the run, NULL and the schedule marked paused (no version, no charge) until a run fits again';

CREATE FUNCTION dperm.drop_model(name text)
  RETURNS void AS 'MODULE_PATHNAME', 'dperm_drop_model' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.drop_model IS 'drops every version of a model and its schedule (owner only); the ledger keeps the charges';

CREATE FUNCTION dperm.schedule_retraining(name text, cron_schedule text, min_runs int DEFAULT 1)
  RETURNS bigint AS 'MODULE_PATHNAME', 'dperm_schedule_retraining' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.schedule_retraining IS 'a pg_cron job that runs dperm.retrain_on_schedule(name, owner) on a cron schedule; refused when fewer than min_runs runs fit in the budget';

CREATE FUNCTION dperm.unschedule_retraining(name text)
  RETURNS void AS 'MODULE_PATHNAME', 'dperm_unschedule_retraining' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.unschedule_retraining IS 'removes a model''s pg_cron job';

CREATE FUNCTION dperm.cron_next_run(cron_schedule text, after timestamptz, k bigint DEFAULT 1)
  RETURNS timestamptz AS 'MODULE_PATHNAME', 'dperm_cron_next_run_checked'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.cron_next_run IS 'the k-th run of a cron schedule after a time (UTC, as pg_cron 1.4); NULL when a valid schedule cannot be forecast (@reboot, N seconds) or never runs; 22023 for an invalid schedule';

-- A version of a model the caller may see (the one its name resolves to:
-- dperm.model_owner): the latest trained one by default, or the given
-- version (trained or failed).
CREATE FUNCTION dperm.model(name text, version int DEFAULT NULL) RETURNS dperm.models
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r dperm.models;
  o regrole := dperm.model_owner($1);
BEGIN
  IF o IS NULL THEN
    RAISE EXCEPTION 'model "%" does not exist', $1 USING ERRCODE = 'undefined_object',
      HINT = 'dperm.train_model creates a model; dperm.models lists the models you may see.';
  END IF;
  IF $2 IS NULL THEN
    SELECT * INTO r FROM dperm.models m WHERE m.owner = o AND m.name = $1 AND m.status = 'trained'
     ORDER BY m.version DESC LIMIT 1;
  ELSE
    SELECT * INTO r FROM dperm.models m WHERE m.owner = o AND m.name = $1 AND m.version = $2;
  END IF;
  IF FOUND THEN
    RETURN r;
  END IF;
  IF $2 IS NULL THEN
    RAISE EXCEPTION 'model "%" has no trained version', $1
      USING ERRCODE = 'object_not_in_prerequisite_state',
      HINT = 'Every run failed: see status and error in dperm.models.';
  END IF;
  RAISE EXCEPTION 'model "%" has no version %', $1, $2 USING ERRCODE = 'undefined_object';
END $$;
COMMENT ON FUNCTION dperm.model IS 'a version of a named model: the latest trained one, or the given version';

-- Predictions of a version (the latest trained one by default):
-- logistic: the probability; Huber: the prediction; softmax: the class.
-- The version is looked up with dperm.model, as the caller (its errors, and
-- a failed version is 55000), once per statement; the model is decoded once.
-- No SET clause: a function with one runs through PostgreSQL's per-call
-- wrapper; the lookup pins search_path itself and spells its one name with
-- its schema (src/pg/types/model_type.cpp).
CREATE FUNCTION dperm.predict(name text, features float8[], version int DEFAULT NULL)
  RETURNS float8 AS 'MODULE_PATHNAME', 'dperm_predict' LANGUAGE C STABLE;
COMMENT ON FUNCTION dperm.predict IS 'prediction of a named model (latest trained version, or a pinned one): probability, Huber prediction or softmax class (a NULL feature element counts as 0, as in training)';

-- How many more runs with this charge (RDP curve, epsilon, delta) fit in a
-- relation's budget under its accounting: the largest k such that the ledger
-- composed with k copies of the charge (k times the curve, k epsilon, k
-- delta: dperm.budget_spent composes one extra charge, and k identical
-- charges compose to exactly that) stays within the budget, by the ledger
-- writer's own test. Capped at 1000000.
CREATE FUNCTION dperm.runs_that_fit(relation regclass, accounting text, epsilon_budget float8,
                                    delta_budget float8, rdp float8[], epsilon float8,
                                    delta float8)
  RETURNS bigint
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  lo bigint := 0;
  hi bigint := 1;
  mid bigint;
  cap constant bigint := 1000000;
BEGIN
  IF NOT dperm.charges_fit($1, $2, $3, $4, $5, $6, $7, 0) THEN
    RETURN 0;
  END IF;
  WHILE hi < cap AND dperm.charges_fit($1, $2, $3, $4, $5, $6, $7, hi) LOOP
    lo := hi;
    hi := hi * 2;
  END LOOP;
  IF hi >= cap THEN
    IF dperm.charges_fit($1, $2, $3, $4, $5, $6, $7, cap) THEN
      RETURN cap;
    END IF;
    hi := cap;
  END IF;
  -- lo fits, hi does not
  WHILE hi - lo > 1 LOOP
    mid := (lo + hi) / 2;
    IF dperm.charges_fit($1, $2, $3, $4, $5, $6, $7, mid) THEN lo := mid; ELSE hi := mid; END IF;
  END LOOP;
  RETURN lo;
END $$;
COMMENT ON FUNCTION dperm.runs_that_fit(regclass, text, float8, float8, float8[], float8, float8) IS 'how many more copies of a charge (RDP curve, epsilon, delta) fit in a relation''s budget, at most 10^6; 42501 unless the caller may see the relation';

-- Whether k more charges fit (the test of the ledger writer, ledger.cpp
-- WithinBudgets: spent <= budget with a relative slack of 1e-12).
CREATE FUNCTION dperm.charges_fit(relation regclass, accounting text, epsilon_budget float8,
                                  delta_budget float8, rdp float8[], epsilon float8,
                                  delta float8, k bigint)
  RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT s.epsilon <= $3 * (1 + 1e-12) AND s.delta <= $4 * (1 + 1e-12)
    FROM dperm.budget_spent($1, $2, $4,
           (SELECT array_agg(x * $8 ORDER BY i) FROM unnest($5) WITH ORDINALITY u(x, i)),
           $6 * $8, $7 * $8) s
$$;
COMMENT ON FUNCTION dperm.charges_fit(regclass, text, float8, float8, float8[], float8, float8, bigint) IS 'whether k more copies of a charge fit in a relation''s budget; 42501 unless the caller may see the relation';

-- What one more run of a model version costs a budget whose unit is
-- budget_unit (NULL: the row): the version's ledger charge; for a
-- unit-level version and a budget that names no unit, that charge at the
-- row (dperm.unit_release_at_row), as the ledger writer charges it.
CREATE FUNCTION dperm.run_charge(m dperm.models, budget_unit name,
                                 OUT epsilon float8, OUT delta float8, OUT rdp float8[])
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN at_row THEN r.epsilon ELSE coalesce(m.epsilon, 0) END,
         CASE WHEN at_row THEN r.delta ELSE coalesce(m.delta, 0) END,
         CASE WHEN at_row THEN r.rdp ELSE m.rdp END
    FROM (SELECT budget_unit IS NULL
                 AND coalesce(pg_catalog.jsonb_typeof((m.model::pg_catalog.jsonb) OPERATOR(pg_catalog.->) 'privacy_unit')
                              OPERATOR(pg_catalog.=) 'object', false) AS at_row) u,
         dperm.unit_release_at_row(coalesce(m.epsilon, 0), coalesce(m.delta, 0)) r $$;
COMMENT ON FUNCTION dperm.run_charge(dperm.models, name) IS 'what one more run of a model version costs a budget with the given unit (NULL: the row): its ledger charge, or, for a unit-level version and a budget without a unit, that charge at the row';

CREATE FUNCTION dperm.retraining_forecast(name text,
    OUT runs bigint, OUT last_run_at timestamptz, OUT next_run_at timestamptz,
    OUT cron_schedule text, OUT limiting_relation regclass, OUT epsilon_per_run float8,
    OUT delta_per_run float8, OUT version int, OUT paused_at timestamptz,
    OUT paused_reason text)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  m dperm.models := dperm.model($1);
  b record;
  k bigint;
BEGIN
  epsilon_per_run := m.epsilon;
  delta_per_run := m.delta;
  version := m.version;
  FOR b IN SELECT bu.relation, bu.accounting, bu.epsilon, bu.delta, c.epsilon AS run_epsilon,
                  c.delta AS run_delta, c.rdp AS run_rdp
             FROM dperm.budgets bu, dperm.run_charge(m, bu.privacy_unit) c
            WHERE bu.relation = ANY (coalesce(m.relations, ARRAY[m.relation]))
            ORDER BY bu.relation::oid LOOP
    k := dperm.runs_that_fit(b.relation, b.accounting, b.epsilon, b.delta, b.run_rdp,
                             b.run_epsilon, b.run_delta);
    IF runs IS NULL OR k < runs THEN
      runs := k;
      limiting_relation := b.relation;
    END IF;
  END LOOP;
  SELECT s.cron_schedule, s.paused_at, s.paused_reason
    INTO cron_schedule, paused_at, paused_reason
    FROM dperm.model_schedules s
   WHERE s.owner = m.owner AND s.name = m.name;
  IF cron_schedule IS NOT NULL THEN
    next_run_at := dperm.cron_next_run(cron_schedule, now(), 1);
    IF runs > 0 THEN
      last_run_at := dperm.cron_next_run(cron_schedule, now(), runs);
    END IF;
  END IF;
END $$;
COMMENT ON FUNCTION dperm.retraining_forecast IS 'how many more retrainings of a model fit in the budgets it is charged to (NULL: no budget limits it), when a scheduled model''s last one that fits runs, and whether its schedule is paused (paused_at, paused_reason)';

CREATE FUNCTION dperm.evaluate(name text, relation regclass, features text, label text,
                               options jsonb)
  RETURNS jsonb AS 'MODULE_PATHNAME', 'dperm_evaluate' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.evaluate(text, regclass, text, text, jsonb) IS 'a private estimate of a model''s accuracy and log-loss (classifiers) or RMSE (Huber) on a relation, charged to it and stored with the version';

-- ==== feature specs: named models ====
-- A named model may be trained through a feature spec; dperm.predict and
-- dperm.encode then take the raw row.
CREATE FUNCTION dperm.train_model(name text, relation regclass, features jsonb, label text,
                                  loss text, options jsonb)
  RETURNS int AS 'MODULE_PATHNAME', 'dperm_train_model' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.train_model(text, regclass, jsonb, text, text, jsonb) IS 'trains a new version of the caller''s own named model on raw columns through a feature spec; dperm.predict(name, row) and dperm.encode(name, row) apply it';
CREATE FUNCTION dperm.predict(name text, "row" record, version int DEFAULT NULL)
  RETURNS float8 AS 'MODULE_PATHNAME', 'dperm_predict' LANGUAGE C STABLE;
COMMENT ON FUNCTION dperm.predict(text, record, int) IS 'prediction of a named model trained through a feature spec, for a raw row of its relation (the spec''s columns by name)';
CREATE FUNCTION dperm.encode(name text, "row" record, version int DEFAULT NULL)
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_encode' LANGUAGE C STABLE;
COMMENT ON FUNCTION dperm.encode(text, record, int) IS 'the float8[] a named model''s feature spec makes of a raw row (what training and dperm.predict use)';
CREATE FUNCTION dperm.evaluate(name text, relation regclass, options jsonb)
  RETURNS jsonb AS 'MODULE_PATHNAME', 'dperm_evaluate' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.evaluate(text, regclass, jsonb) IS 'dperm.evaluate of a version trained through a feature spec: its stored spec and label read the relation''s raw columns';
