-- dperm 0.6.0 -> 0.7.0: the guarantee at the database boundary. Each section
-- below belongs to one change; keep them independent (every statement must
-- also run on a fresh 0.1.0 -> 0.7.0 chain). dperm--0.7.0.sql is the complete
-- script of this version (CREATE EXTENSION): what a section adds here goes
-- there too; test/upgrade.sh fails, naming the object, when the two catalogs
-- differ.
\echo Use "ALTER EXTENSION dperm UPDATE TO '0.7.0'" to load this file. \quit

-- ==== row-level security, what other roles see, model names per owner ====
-- README "Budgets and the ledger", "Protected relations", "Models in
-- detail". dperm.protect refuses relations with row-level security and
-- dperm.train refuses protected ones that have it (C only, no catalog
-- change).

-- Budgets and their spend are shown only for relations the caller may see.
CREATE FUNCTION dperm.relation_visible(relation regclass) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dperm_relation_visible'
  LANGUAGE C STRICT STABLE PARALLEL RESTRICTED;
COMMENT ON FUNCTION dperm.relation_visible IS 'whether the current role may see a relation''s privacy budget and spend (its owner''s privileges, SELECT on it or a parent, an analyst of it, or pg_read_all_stats)';
-- budget_spent checks its caller (a SECURITY DEFINER function would only
-- see its definer) and reads the totals as the catalog owner itself.
ALTER FUNCTION dperm.budget_spent(regclass, text, float8, float8[], float8, float8) SECURITY INVOKER;
ALTER VIEW dperm.budget_status SET (security_invoker = true);
COMMENT ON VIEW dperm.budget_status IS 'spent and remaining privacy budget per relation the caller may see, under its accounting';
ALTER TABLE dperm.budgets ENABLE ROW LEVEL SECURITY;
CREATE POLICY budgets_visible ON dperm.budgets FOR SELECT
  USING (dperm.relation_visible(relation));

-- Model names per owner, roles by OID. Existing names become the OIDs of the
-- roles of those names now; a model or schedule whose role no longer exists
-- gets 0 ('-', nobody's but a superuser's). Caveat: a role that was dropped
-- and created again under the same name before this update cannot be told
-- apart from the old one, and keeps its models.
DROP POLICY model_schedules_visible ON dperm.model_schedules;
DROP POLICY models_visible ON dperm.models;
ALTER TABLE dperm.models DROP CONSTRAINT models_pkey;
ALTER TABLE dperm.models
  ALTER COLUMN owner TYPE regrole
    USING COALESCE(pg_catalog.to_regrole(pg_catalog.quote_ident(owner)), 0::pg_catalog.oid::pg_catalog.regrole),
  ALTER COLUMN trained_by TYPE regrole
    USING COALESCE(pg_catalog.to_regrole(pg_catalog.quote_ident(trained_by)), 0::pg_catalog.oid::pg_catalog.regrole);
ALTER TABLE dperm.models ADD PRIMARY KEY (owner, name, version);
ALTER TABLE dperm.model_schedules DROP CONSTRAINT model_schedules_pkey;
ALTER TABLE dperm.model_schedules ADD COLUMN owner regrole;
-- 0.6.0's names were global: each schedule's model has one owner
UPDATE dperm.model_schedules s
   SET owner = COALESCE((SELECT m.owner FROM dperm.models m
                          WHERE m.name OPERATOR(pg_catalog.=) s.name LIMIT 1),
                        0::pg_catalog.oid::pg_catalog.regrole);
ALTER TABLE dperm.model_schedules
  ALTER COLUMN owner SET NOT NULL,
  ALTER COLUMN scheduled_by TYPE regrole
    USING COALESCE(pg_catalog.to_regrole(pg_catalog.quote_ident(scheduled_by)), 0::pg_catalog.oid::pg_catalog.regrole);
ALTER TABLE dperm.model_schedules ADD PRIMARY KEY (owner, name);
CREATE POLICY models_visible ON dperm.models FOR SELECT USING (
  owner OPERATOR(pg_catalog.=) (SELECT r.oid FROM pg_catalog.pg_roles r
                                 WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)
  OR pg_catalog.has_table_privilege(relation::pg_catalog.oid, 'SELECT')
  OR EXISTS (SELECT 1 FROM dperm.protected p
              WHERE p.relation OPERATOR(pg_catalog.=) models.relation
                AND (p.analysts IS NULL
                     OR EXISTS (SELECT 1 FROM pg_catalog.unnest(p.analysts) a
                                 WHERE pg_catalog.pg_has_role(a::pg_catalog.oid, 'MEMBER')))));
CREATE POLICY model_schedules_visible ON dperm.model_schedules FOR SELECT USING (
  EXISTS (SELECT 1 FROM dperm.models m WHERE m.owner OPERATOR(pg_catalog.=) model_schedules.owner
                                         AND m.name OPERATOR(pg_catalog.=) model_schedules.name));

CREATE FUNCTION dperm.model_owner(name text)
  RETURNS regrole AS 'MODULE_PATHNAME', 'dperm_model_owner' LANGUAGE C STRICT STABLE;
COMMENT ON FUNCTION dperm.model_owner IS 'the owner of the model a name resolves to for the caller (its own first, else the one visible); NULL when none';
CREATE FUNCTION dperm.retrain(name text, owner regrole)
  RETURNS int AS 'MODULE_PATHNAME', 'dperm_retrain' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.retrain(text, regrole) IS 'dperm.retrain of the given role''s model (checked by OID; what a scheduled job runs)';
COMMENT ON FUNCTION dperm.train_model IS 'trains a new version of the caller''s own named model (dperm.train for protected relations, as the caller otherwise); returns the version';
COMMENT ON FUNCTION dperm.schedule_retraining IS 'a pg_cron job that runs dperm.retrain(name, owner) on a cron schedule; refused when fewer than min_runs runs fit in the budget';
CREATE OR REPLACE FUNCTION dperm.model(name text, version int DEFAULT NULL) RETURNS dperm.models
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
CREATE OR REPLACE FUNCTION dperm.retraining_forecast(name text,
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
  SELECT s.cron_schedule INTO cron_schedule FROM dperm.model_schedules s
   WHERE s.owner = m.owner AND s.name = m.name;
  IF cron_schedule IS NOT NULL THEN
    next_run_at := dperm.cron_next_run(cron_schedule, now(), 1);
    IF runs > 0 THEN
      last_run_at := dperm.cron_next_run(cron_schedule, now(), runs);
    END IF;
  END IF;
END $$;
