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
-- dperm.retired_budgets (created above) is as private as dperm.budgets: a
-- retired budget's row (what every role's releases had spent) shows to
-- members of pg_read_all_stats, to roles with the privileges of the role
-- that set or retired it, and, while the relation exists, to roles
-- dperm.relation_visible admits.
ALTER TABLE dperm.retired_budgets ENABLE ROW LEVEL SECURITY;
CREATE POLICY retired_budgets_visible ON dperm.retired_budgets FOR SELECT USING (
  pg_catalog.pg_has_role('pg_read_all_stats', 'MEMBER')
  OR EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
              WHERE r.oid OPERATOR(pg_catalog.=) ANY (ARRAY[retired_by::pg_catalog.oid, set_by::pg_catalog.oid])
                AND pg_catalog.pg_has_role(r.oid, 'USAGE'))
  OR (EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) relation)
      AND dperm.relation_visible(relation::pg_catalog.regclass)));
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
COMMENT ON FUNCTION dperm.model_owner IS 'the owner of the model a name resolves to for the caller: its own, else by tiers of trust (roles whose privileges it has, not self-granted; then models of their relation''s owner on permanent relations; then any visible); NULL when none; 42725 when the first such tier holds several owners';
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
