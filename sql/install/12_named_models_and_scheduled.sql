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

@INCLUDE common/12_run_charge.sql@

@INCLUDE common/12_retraining_forecast.sql@

CREATE FUNCTION dperm.evaluate(name text, relation regclass, features text, label text,
                               options jsonb)
  RETURNS jsonb AS 'MODULE_PATHNAME', 'dperm_evaluate' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.evaluate(text, regclass, text, text, jsonb) IS 'a private estimate of a model''s accuracy and log-loss (classifiers) or RMSE (Huber) on a relation, charged to it and stored with the version';
