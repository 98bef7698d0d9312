-- dperm 0.5.0 -> 0.6.0. Each section below belongs to one change; keep them
-- independent (every statement must also run on a fresh 0.1.0 -> 0.6.0 chain).
-- dperm--0.6.0.sql is the complete script of this version (CREATE
-- EXTENSION): what a section adds here goes there too; test/upgrade.sh
-- fails, naming the object, when the two catalogs differ.
\echo Use "ALTER EXTENSION dperm UPDATE TO '0.6.0'" to load this file. \quit

-- ==== streaming training ====

-- The in-memory aggregates stay in the leader: PARALLEL RESTRICTED, and no
-- combine function. Shipping every buffered row from the workers to the
-- leader made parallel plans slower than serial ones (1.3-1.8x) and failed
-- once a serialised state passed 1 GB; the buffer is now capped by
-- dperm.max_buffer, and larger relations train with dperm.train's
-- streaming mode, whose per-pass aggregates are the parallel ones.
CREATE OR REPLACE AGGREGATE dp_logreg(features float8[], label boolean, options jsonb) (
  SFUNC = dperm.logreg_bool_transition, STYPE = internal, FINALFUNC = dperm.final,
  PARALLEL = RESTRICTED);
CREATE OR REPLACE AGGREGATE dp_logreg(features float8[], label float8, options jsonb) (
  SFUNC = dperm.logreg_float_transition, STYPE = internal, FINALFUNC = dperm.final,
  PARALLEL = RESTRICTED);
CREATE OR REPLACE AGGREGATE dp_huber(features float8[], target float8, options jsonb) (
  SFUNC = dperm.huber_transition, STYPE = internal, FINALFUNC = dperm.final,
  PARALLEL = RESTRICTED);
CREATE OR REPLACE AGGREGATE dp_softmax(features float8[], class int, options jsonb) (
  SFUNC = dperm.softmax_transition, STYPE = internal, FINALFUNC = dperm.final,
  PARALLEL = RESTRICTED);
DROP FUNCTION dperm.combine(internal, internal);
DROP FUNCTION dperm.serialize(internal);
DROP FUNCTION dperm.deserialize(bytea, internal);

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
CREATE FUNCTION dperm.pass_logreg_float_step(float8[], float8[], float8, float8[], float8[])
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_pass_logreg_float_step'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION dperm.pass_huber_step(float8[], float8[], float8, float8[], float8[])
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_pass_huber_step'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION dperm.pass_softmax_step(float8[], float8[], int, float8[], float8[])
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_pass_softmax_step'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION dperm.pass_combine(float8[], float8[]) RETURNS float8[]
  AS 'MODULE_PATHNAME', 'dperm_pass_combine' LANGUAGE C STRICT PARALLEL SAFE;
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

-- dperm.train reads any relation the caller may read (protected ones as
-- their owner), and takes a mode: 'auto' (the 5-argument form: stream when
-- the rows would pass dperm.max_buffer), 'in_memory' or 'streaming'.
CREATE FUNCTION dperm.train(relation regclass, features text, label text, loss text, options jsonb,
                            mode text)
  RETURNS dp_model AS 'MODULE_PATHNAME', 'dperm_train' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.train(regclass, text, text, text, jsonb) IS 'a private model from a relation the caller may read, or a protected one they are an analyst of (columns by name; loss logistic, huber or softmax), charged to it; streams when the rows pass dperm.max_buffer';
COMMENT ON FUNCTION dperm.train(regclass, text, text, text, jsonb, text) IS 'dperm.train with a mode: auto, in_memory or streaming';
-- ==== progress of releases ====
-- One row per backend training a release (dperm.train, or dp_logreg,
-- dp_huber and dp_softmax called directly), updated per pass and every
-- 100000 rows read; from the backends' progress slots, which no
-- pg_stat_progress_* view lists (src/pg/progress.cpp). Like
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

-- ==== models and scheduled retraining ====
-- Named models: one row per training run (version), trained or failed,
-- written only by dperm's C functions through the ledger writer (a
-- transaction of its own: a version outlives the caller's rollback, like a
-- charge). README "Retraining on a schedule".
CREATE TABLE dperm.models (
  name text NOT NULL,
  version int NOT NULL,
  status text NOT NULL CHECK (status IN ('trained', 'failed')),
  owner name NOT NULL,
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
  trained_by name NOT NULL,
  trained_at timestamptz NOT NULL,
  error text,
  error_detail text,
  sqlstate text,
  evaluation jsonb,
  PRIMARY KEY (name, version),
  CHECK ((status = 'trained') = (model IS NOT NULL)));
COMMENT ON TABLE dperm.models IS 'one row per training run of a named model: its specification, the released model or the error, and the ledger row it was charged by';
COMMENT ON COLUMN dperm.models.owner IS 'the role the model belongs to (who created it with dperm.train_model)';
COMMENT ON COLUMN dperm.models.ledger_id IS 'the dperm.ledger row of the run''s charge (NULL: not charged)';
COMMENT ON COLUMN dperm.models.rdp IS 'the charge''s RDP curve, epsilon, delta and relations, copied from the ledger row (dperm.retraining_forecast composes them)';
COMMENT ON COLUMN dperm.models.evaluation IS 'private evaluations (dperm.evaluate), newest first';
SELECT pg_catalog.pg_extension_config_dump('dperm.models', '');

-- The dperm side of a pg_cron schedule (the job itself is pg_cron's).
CREATE TABLE dperm.model_schedules (
  name text PRIMARY KEY,
  cron_schedule text NOT NULL,
  jobid bigint,
  min_runs int NOT NULL,
  scheduled_by name NOT NULL,
  scheduled_at timestamptz NOT NULL);
COMMENT ON TABLE dperm.model_schedules IS 'the pg_cron job that retrains each scheduled model';
SELECT pg_catalog.pg_extension_config_dump('dperm.model_schedules', '');

-- Each role sees its own models and those of relations it may train on:
-- relations it can SELECT (owners included) and protected relations it is an
-- analyst of. A schedule is visible with its model.
ALTER TABLE dperm.models ENABLE ROW LEVEL SECURITY;
CREATE POLICY models_visible ON dperm.models FOR SELECT USING (
  owner OPERATOR(pg_catalog.=) CURRENT_USER
  OR pg_catalog.has_table_privilege(relation::pg_catalog.oid, 'SELECT')
  OR EXISTS (SELECT 1 FROM dperm.protected p
              WHERE p.relation OPERATOR(pg_catalog.=) models.relation
                AND (p.analysts IS NULL
                     OR EXISTS (SELECT 1 FROM pg_catalog.unnest(p.analysts) a
                                 WHERE pg_catalog.pg_has_role(a::pg_catalog.oid, 'MEMBER')))));
ALTER TABLE dperm.model_schedules ENABLE ROW LEVEL SECURITY;
CREATE POLICY model_schedules_visible ON dperm.model_schedules FOR SELECT USING (
  EXISTS (SELECT 1 FROM dperm.models m WHERE m.name OPERATOR(pg_catalog.=) model_schedules.name));
GRANT SELECT ON dperm.models, dperm.model_schedules TO PUBLIC;

CREATE FUNCTION dperm.train_model(name text, relation regclass, features text, label text,
                                  loss text, options jsonb)
  RETURNS int AS 'MODULE_PATHNAME', 'dperm_train_model' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.train_model IS 'trains a new version of a named model (dperm.train for protected relations, as the caller otherwise); returns the version';

CREATE FUNCTION dperm.retrain(name text)
  RETURNS int AS 'MODULE_PATHNAME', 'dperm_retrain' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.retrain IS 'trains the next version of a model from its latest specification (owner only); a failed run is recorded as a failed version';

CREATE FUNCTION dperm.drop_model(name text)
  RETURNS void AS 'MODULE_PATHNAME', 'dperm_drop_model' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.drop_model IS 'drops every version of a model and its schedule (owner only); the ledger keeps the charges';

CREATE FUNCTION dperm.schedule_retraining(name text, cron_schedule text, min_runs int DEFAULT 1)
  RETURNS bigint AS 'MODULE_PATHNAME', 'dperm_schedule_retraining' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.schedule_retraining IS 'a pg_cron job that runs dperm.retrain(name) on a cron schedule; refused when fewer than min_runs runs fit in the budget';

CREATE FUNCTION dperm.unschedule_retraining(name text)
  RETURNS void AS 'MODULE_PATHNAME', 'dperm_unschedule_retraining' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.unschedule_retraining IS 'removes a model''s pg_cron job';

CREATE FUNCTION dperm.cron_next_run(cron_schedule text, after timestamptz, k bigint DEFAULT 1)
  RETURNS timestamptz AS 'MODULE_PATHNAME', 'dperm_cron_next_run'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.cron_next_run IS 'the k-th run of a cron schedule after a time (UTC, as pg_cron 1.4); NULL when it cannot be forecast';

-- A version of a model the caller may see: the latest trained one by
-- default, or the given version (trained or failed).
CREATE FUNCTION dperm.model(name text, version int DEFAULT NULL) RETURNS dperm.models
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r dperm.models;
BEGIN
  IF $2 IS NULL THEN
    SELECT * INTO r FROM dperm.models m WHERE m.name = $1 AND m.status = 'trained'
     ORDER BY m.version DESC LIMIT 1;
  ELSE
    SELECT * INTO r FROM dperm.models m WHERE m.name = $1 AND m.version = $2;
  END IF;
  IF FOUND THEN
    RETURN r;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM dperm.models m WHERE m.name = $1) THEN
    RAISE EXCEPTION 'model "%" does not exist', $1 USING ERRCODE = 'undefined_object',
      HINT = 'dperm.train_model creates a model; dperm.models lists the models you may see.';
  ELSIF $2 IS NULL THEN
    RAISE EXCEPTION 'model "%" has no trained version', $1
      USING ERRCODE = 'object_not_in_prerequisite_state',
      HINT = 'Every run failed: see status and error in dperm.models.';
  END IF;
  RAISE EXCEPTION 'model "%" has no version %', $1, $2 USING ERRCODE = 'undefined_object';
END $$;
COMMENT ON FUNCTION dperm.model IS 'a version of a named model: the latest trained one, or the given version';

-- Predictions of a version (the latest trained one by default):
-- logistic: the probability; Huber: the prediction; softmax: the class.
CREATE FUNCTION dperm.predict(name text, features float8[], version int DEFAULT NULL)
  RETURNS float8
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r dperm.models := dperm.model($1, $3);
BEGIN
  IF r.status <> 'trained' THEN
    RAISE EXCEPTION 'version % of model "%" failed: %', r.version, $1, r.error
      USING ERRCODE = 'object_not_in_prerequisite_state';
  END IF;
  IF r.loss = 'softmax' THEN
    RETURN @extschema@.dp_predict_class(r.model, $2);
  END IF;
  RETURN @extschema@.dp_predict(r.model, $2);
END $$;
COMMENT ON FUNCTION dperm.predict IS 'prediction of a named model (latest trained version, or a pinned one): probability, Huber prediction or softmax class';

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

CREATE FUNCTION dperm.retraining_forecast(name text,
    OUT runs bigint, OUT last_run_at timestamptz, OUT next_run_at timestamptz,
    OUT cron_schedule text, OUT limiting_relation regclass, OUT epsilon_per_run float8,
    OUT delta_per_run float8, OUT version int)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  m dperm.models := dperm.model($1);
  b record;
  k bigint;
BEGIN
  epsilon_per_run := m.epsilon;
  delta_per_run := m.delta;
  version := m.version;
  FOR b IN SELECT bu.relation, bu.accounting, bu.epsilon, bu.delta FROM dperm.budgets bu
            WHERE bu.relation = ANY (coalesce(m.relations, ARRAY[m.relation]))
            ORDER BY bu.relation::oid LOOP
    k := dperm.runs_that_fit(b.relation, b.accounting, b.epsilon, b.delta, m.rdp,
                             coalesce(m.epsilon, 0), coalesce(m.delta, 0));
    IF runs IS NULL OR k < runs THEN
      runs := k;
      limiting_relation := b.relation;
    END IF;
  END LOOP;
  SELECT s.cron_schedule INTO cron_schedule FROM dperm.model_schedules s WHERE s.name = $1;
  IF cron_schedule IS NOT NULL THEN
    next_run_at := dperm.cron_next_run(cron_schedule, now(), 1);
    IF runs > 0 THEN
      last_run_at := dperm.cron_next_run(cron_schedule, now(), runs);
    END IF;
  END IF;
END $$;
COMMENT ON FUNCTION dperm.retraining_forecast IS 'how many more retrainings of a model fit in the budgets it is charged to (NULL: no budget limits it), and when a scheduled model''s last one that fits runs';

CREATE FUNCTION dperm.evaluate(name text, relation regclass, features text, label text,
                               options jsonb)
  RETURNS jsonb AS 'MODULE_PATHNAME', 'dperm_evaluate' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.evaluate IS 'a private estimate of a model''s accuracy and log-loss (classifiers) or RMSE (Huber) on a relation, charged to it and stored with the version';

-- ==== Huber defaults from public scales ====

-- dp_options gains `target_bound` (B: the public bound on |target|; dp_huber
-- clips targets to [-B, B], and the default huber_delta is 0.1 B) and
-- `intercept` ('offset', the default: the intercept fitted on a private
-- offset; 'fitted': an ordinary coordinate). A new
-- argument changes the signature: drop and re-create (appended last, so
-- positional calls keep their meaning).
DROP FUNCTION dp_options(float8, float8, text, float8, float8, boolean, float8, float8, float8,
                         bigint, float8, bigint, float8, text, text, text, bigint, text[], int);
-- Builds the options of a release with named arguments; NULL means default.
CREATE FUNCTION dp_options(
    epsilon float8,
    delta float8 DEFAULT 0,
    algorithm text DEFAULT NULL,
    l2 float8 DEFAULT NULL,
    l1 float8 DEFAULT NULL,
    fit_intercept boolean DEFAULT NULL,
    feature_bound float8 DEFAULT NULL,
    huber_delta float8 DEFAULT NULL,
    radius float8 DEFAULT NULL,
    iterations bigint DEFAULT NULL,
    step_size float8 DEFAULT NULL,
    batch_size bigint DEFAULT NULL,
    ls_sigma float8 DEFAULT NULL,
    accountant text DEFAULT NULL,
    neighbors text DEFAULT NULL,
    dataset text DEFAULT NULL,
    seed bigint DEFAULT NULL,
    feature_names text[] DEFAULT NULL,
    classes int DEFAULT NULL,
    target_bound float8 DEFAULT NULL,
    intercept text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN dperm.check_options(jsonb_strip_nulls(jsonb_build_object(
    'epsilon', epsilon, 'delta', delta, 'algorithm', algorithm, 'l2', l2,
    'l1', l1, 'fit_intercept', fit_intercept, 'feature_bound', feature_bound,
    'huber_delta', huber_delta, 'radius', radius, 'iterations', iterations,
    'step_size', step_size, 'batch_size', batch_size, 'ls_sigma', ls_sigma,
    'accountant', accountant, 'neighbors', neighbors, 'dataset', dataset,
    'seed', seed, 'feature_names', feature_names, 'classes', classes,
    'target_bound', target_bound, 'intercept', intercept)));
COMMENT ON FUNCTION dp_options IS 'options of a private release (epsilon is required)';

-- ==== running budget totals ====
-- One row per relation that a ledger row names: the sums dperm.budget_spent
-- composes (ComposeTotals, src/core/budget.cpp), so a budget check reads one
-- row, not every charge. Kept by the ledger's own triggers in the transaction
-- that writes the ledger rows (the ledger writer's, under its budget row
-- locks): an insert adds its rows; an update, delete or truncate rebuilds
-- every total from the ledger. Derived data: not a configuration table, since
-- a restore of the ledger's rows fills it through the insert trigger.
CREATE TABLE dperm.budget_totals (
  relation regclass PRIMARY KEY,
  releases bigint NOT NULL,
  epsilon float8 NOT NULL,
  delta float8 NOT NULL,
  plain_epsilon float8 NOT NULL,
  plain_delta float8 NOT NULL,
  curves bigint NOT NULL,
  rdp float8[]);
COMMENT ON TABLE dperm.budget_totals IS 'per relation: the sums of its dperm.ledger rows that dperm.budget_spent composes (kept by the ledger''s triggers)';
COMMENT ON COLUMN dperm.budget_totals.plain_epsilon IS 'sum of the epsilon of the rows without a curve (they compose by sums)';
COMMENT ON COLUMN dperm.budget_totals.rdp IS 'order-wise sum of the rows'' RDP curves on dperm.rdp_orders() (NULL: no curve)';
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

-- Order-wise sum of two curves (NULL is no curve).
CREATE FUNCTION dperm.curve_add(a float8[], b float8[]) RETURNS float8[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a
              ELSE ARRAY(SELECT x OPERATOR(pg_catalog.+) y
                           FROM ROWS FROM (pg_catalog.unnest(a), pg_catalog.unnest(b))
                                WITH ORDINALITY u(x, y, i) ORDER BY i) END;
CREATE AGGREGATE dperm.curve_sum(float8[]) (SFUNC = dperm.curve_add, STYPE = float8[]);

CREATE FUNCTION dperm.ledger_totals() RETURNS trigger
  LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  source text := 'new_rows';
BEGIN
  IF TG_OP <> 'INSERT' THEN
    DELETE FROM dperm.budget_totals;
    source := 'dperm.ledger';
  END IF;
  EXECUTE format($q$
    INSERT INTO dperm.budget_totals AS t
    SELECT r.relation, count(*), sum(l.epsilon), sum(l.delta),
           coalesce(sum(l.epsilon) FILTER (WHERE NOT c.curved), 0),
           coalesce(sum(l.delta) FILTER (WHERE NOT c.curved), 0),
           count(*) FILTER (WHERE c.curved),
           dperm.curve_sum(l.rdp) FILTER (WHERE c.curved)
      FROM %s l,
           LATERAL (SELECT DISTINCT u FROM unnest(l.relations) u) r(relation),
           LATERAL (SELECT dperm.is_ledger_curve(l.rdp)) c(curved)
     GROUP BY r.relation
    ON CONFLICT (relation) DO UPDATE SET
      releases = t.releases + excluded.releases,
      epsilon = t.epsilon + excluded.epsilon,
      delta = t.delta + excluded.delta,
      plain_epsilon = t.plain_epsilon + excluded.plain_epsilon,
      plain_delta = t.plain_delta + excluded.plain_delta,
      curves = t.curves + excluded.curves,
      rdp = dperm.curve_add(t.rdp, excluded.rdp)$q$, source);
  RETURN NULL;
END $$;
CREATE TRIGGER ledger_totals_insert AFTER INSERT ON dperm.ledger
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION dperm.ledger_totals();
CREATE TRIGGER ledger_totals_rebuild AFTER UPDATE OR DELETE OR TRUNCATE ON dperm.ledger
  FOR EACH STATEMENT EXECUTE FUNCTION dperm.ledger_totals();
-- Fill the totals from the ledger: a statement that changes no row fires
-- the rebuild trigger once.
UPDATE dperm.ledger SET id = id WHERE false;

-- ==== l2 => 'auto' ====

-- dp_options with l2 as text, for l2 => 'auto' (dperm picks
-- l2 from a public grid privately). l2 comes first and has no default, so
-- dp_options(epsilon => 1, l2 => 'auto') resolves here (PostgreSQL prefers
-- the string category for an unknown literal) while l2 => 0.01 and calls
-- without l2 resolve to the float8 version. dperm.check_options accepts
-- only 'auto' (22023 otherwise).
CREATE FUNCTION dp_options(
    l2 text,
    epsilon float8,
    delta float8 DEFAULT 0,
    algorithm text DEFAULT NULL,
    l1 float8 DEFAULT NULL,
    fit_intercept boolean DEFAULT NULL,
    feature_bound float8 DEFAULT NULL,
    huber_delta float8 DEFAULT NULL,
    radius float8 DEFAULT NULL,
    iterations bigint DEFAULT NULL,
    step_size float8 DEFAULT NULL,
    batch_size bigint DEFAULT NULL,
    ls_sigma float8 DEFAULT NULL,
    accountant text DEFAULT NULL,
    neighbors text DEFAULT NULL,
    dataset text DEFAULT NULL,
    seed bigint DEFAULT NULL,
    feature_names text[] DEFAULT NULL,
    classes int DEFAULT NULL,
    target_bound float8 DEFAULT NULL,
    intercept text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN dperm.check_options(jsonb_strip_nulls(jsonb_build_object(
    'epsilon', epsilon, 'delta', delta, 'algorithm', algorithm, 'l2', l2,
    'l1', l1, 'fit_intercept', fit_intercept, 'feature_bound', feature_bound,
    'huber_delta', huber_delta, 'radius', radius, 'iterations', iterations,
    'step_size', step_size, 'batch_size', batch_size, 'ls_sigma', ls_sigma,
    'accountant', accountant, 'neighbors', neighbors, 'dataset', dataset,
    'seed', seed, 'feature_names', feature_names, 'classes', classes,
    'target_bound', target_bound, 'intercept', intercept)));
COMMENT ON FUNCTION dp_options(text, float8, float8, text, float8, boolean, float8, float8, float8,
                               bigint, float8, bigint, float8, text, text, text, bigint, text[],
                               int, float8, text)
  IS 'options of a private release with l2 => ''auto'' (l2 chosen privately)';
