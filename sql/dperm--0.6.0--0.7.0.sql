-- dperm 0.6.0 -> 0.7.0: the guarantee at the database boundary. Each section
-- below belongs to one change; keep them independent (every statement must
-- also run on a fresh 0.1.0 -> 0.7.0 chain). dperm--0.7.0.sql is the complete
-- script of this version (CREATE EXTENSION): what a section adds here goes
-- there too; test/upgrade.sh fails, naming the object, when the two catalogs
-- differ.
\echo Use "ALTER EXTENSION dperm UPDATE TO '0.7.0'" to load this file. \quit

-- ==== declared dimension ====
-- dp_options takes `dimension`, the public d of the features: a release
-- charged to a budgeted or protected relation never reads d from a row.
DROP FUNCTION dp_options(float8, float8, text, float8, float8, boolean, float8, float8, float8,
                         bigint, float8, bigint, float8, text, text, text, bigint, text[], int,
                         float8, text);
DROP FUNCTION dp_options(text, float8, float8, text, float8, boolean, float8, float8, float8,
                         bigint, float8, bigint, float8, text, text, text, bigint, text[], int,
                         float8, text);
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
    intercept text DEFAULT NULL,
    dimension int DEFAULT NULL,
    max_rows_per_unit bigint DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN dperm.check_options(jsonb_strip_nulls(jsonb_build_object(
    'epsilon', epsilon, 'delta', delta, 'algorithm', algorithm, 'l2', l2,
    'l1', l1, 'fit_intercept', fit_intercept, 'feature_bound', feature_bound,
    'huber_delta', huber_delta, 'radius', radius, 'iterations', iterations,
    'step_size', step_size, 'batch_size', batch_size, 'ls_sigma', ls_sigma,
    'accountant', accountant, 'neighbors', neighbors, 'dataset', dataset,
    'seed', seed, 'feature_names', feature_names, 'classes', classes,
    'target_bound', target_bound, 'intercept', intercept,
    'dimension', dimension, 'max_rows_per_unit', max_rows_per_unit)));
COMMENT ON FUNCTION dp_options IS 'options of a private release (epsilon is required)';

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
    intercept text DEFAULT NULL,
    dimension int DEFAULT NULL,
    max_rows_per_unit bigint DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN dperm.check_options(jsonb_strip_nulls(jsonb_build_object(
    'epsilon', epsilon, 'delta', delta, 'algorithm', algorithm, 'l2', l2,
    'l1', l1, 'fit_intercept', fit_intercept, 'feature_bound', feature_bound,
    'huber_delta', huber_delta, 'radius', radius, 'iterations', iterations,
    'step_size', step_size, 'batch_size', batch_size, 'ls_sigma', ls_sigma,
    'accountant', accountant, 'neighbors', neighbors, 'dataset', dataset,
    'seed', seed, 'feature_names', feature_names, 'classes', classes,
    'target_bound', target_bound, 'intercept', intercept,
    'dimension', dimension, 'max_rows_per_unit', max_rows_per_unit)));
COMMENT ON FUNCTION dp_options(text, float8, float8, text, float8, boolean, float8, float8, float8,
                               bigint, float8, bigint, float8, text, text, text, bigint, text[],
                               int, float8, text, int, bigint)
  IS 'options of a private release with l2 => ''auto'' (l2 chosen privately)';


-- ==== budgets follow the data ====
-- Roles by OID (regrole: dumped and restored by name): a role that reuses a
-- dropped role's name is another role. Names are resolved to the role of
-- that name now; a name with no role becomes NULL (the ledger keeps it in
-- role_name). A role that was dropped and re-created under the same name
-- before this update cannot be told apart and keeps the old rows.
ALTER TABLE dperm.budgets
  ALTER COLUMN set_by DROP DEFAULT,
  ALTER COLUMN set_by DROP NOT NULL,
  ALTER COLUMN set_by TYPE regrole USING pg_catalog.to_regrole(pg_catalog.quote_ident(set_by::pg_catalog.text));
COMMENT ON COLUMN dperm.budgets.set_by IS 'the role that set the budget, by OID (NULL: a role name dperm 0.7.0''s upgrade found no role for)';
ALTER TABLE dperm.protected
  ALTER COLUMN protected_by DROP NOT NULL,
  ALTER COLUMN protected_by TYPE regrole USING pg_catalog.to_regrole(pg_catalog.quote_ident(protected_by::pg_catalog.text));
-- The ledger policy compares the OID (a later role of a dropped role's name
-- is another role) and the name (a dropped role's OID, restored as a number
-- into another cluster, may be another role's there).
DROP POLICY ledger_own_rows ON dperm.ledger;
ALTER TABLE dperm.ledger ADD COLUMN role_name name;
UPDATE dperm.ledger SET role_name = role;
ALTER TABLE dperm.ledger
  ALTER COLUMN role_name SET NOT NULL,
  ALTER COLUMN role DROP NOT NULL,
  ALTER COLUMN role TYPE regrole USING pg_catalog.to_regrole(pg_catalog.quote_ident(role::pg_catalog.text));
COMMENT ON COLUMN dperm.ledger.role IS 'the releasing role, by OID: a later role of the same name is another role (NULL: a name dperm 0.7.0''s upgrade found no role for)';
COMMENT ON COLUMN dperm.ledger.role_name IS 'the releasing role''s name at the release (history: a dropped role''s OID has no name)';
ALTER TABLE dperm.ledger ADD COLUMN charged_with bigint;
COMMENT ON COLUMN dperm.ledger.charged_with IS 'the ledger row of the same release this row accompanies: a unit-level release is charged at the unit to the budgets that name it, and at the row (this row) to every other relation it reads (NULL: none)';
CREATE POLICY ledger_own_rows ON dperm.ledger FOR SELECT
  USING ((role OPERATOR(pg_catalog.=) (SELECT pg_catalog.to_regrole(pg_catalog.quote_ident(CURRENT_USER)))
          AND role_name OPERATOR(pg_catalog.=) CURRENT_USER)
         OR pg_catalog.pg_has_role('pg_read_all_stats', 'MEMBER'));
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
-- ==== running totals: per relation, checked against the ledger ====
-- An update or delete of ledger rows recounts only the relations whose rows
-- changed (dperm.move_budget's open transaction locked every relation's
-- totals); last_id is the watermark dperm.budget_totals_stale() compares
-- with the ledger (rows restored without the trigger are not unspent).
ALTER TABLE dperm.budget_totals ADD COLUMN last_id bigint NOT NULL DEFAULT 0;
CREATE INDEX budget_totals_last_id ON dperm.budget_totals (last_id);
COMMENT ON COLUMN dperm.budget_totals.last_id IS 'the highest dperm.ledger id the row counts (the watermark of dperm.budget_totals_stale())';
DROP TRIGGER ledger_totals_rebuild ON dperm.ledger;
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

CREATE OR REPLACE FUNCTION dperm.ledger_totals() RETURNS trigger
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
CREATE TRIGGER ledger_totals_update AFTER UPDATE ON dperm.ledger
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION dperm.ledger_totals();
CREATE TRIGGER ledger_totals_delete AFTER DELETE ON dperm.ledger
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION dperm.ledger_totals();
CREATE TRIGGER ledger_totals_truncate AFTER TRUNCATE ON dperm.ledger
  FOR EACH STATEMENT EXECUTE FUNCTION dperm.ledger_totals();
SELECT dperm.recount_budget_totals(NULL);

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

-- ==== docs: the option reference, a comment on every object ====

CREATE FUNCTION dperm.option_reference()
  RETURNS TABLE(key text, sql_type text, "values" text, "default" text, meaning text)
  AS 'MODULE_PATHNAME', 'dperm_option_reference'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.option_reference() IS 'the option table: every key dp_options and the jsonb options take, its SQL type, its values, its default and its meaning';

COMMENT ON FUNCTION dp_model_in(cstring) IS 'the text input of dp_model: a model''s JSON, checked field by field';
COMMENT ON FUNCTION dp_model_out(dp_model) IS 'the text output of dp_model: the model''s JSON';
COMMENT ON FUNCTION dp_model_recv(internal) IS 'the binary input of dp_model, checked field by field';
COMMENT ON FUNCTION dp_model_send(dp_model) IS 'the binary output of dp_model';
COMMENT ON FUNCTION dp_predict(dp_model, float8[]) IS 'the probability (logistic) or prediction (Huber) of a model for a feature vector, with training''s clipping; an error for softmax models';
COMMENT ON FUNCTION dp_coefficients(dp_model) IS 'one row per coefficient: intercept, then x1 ... or the feature names; softmax models list class 0''s rows, then class 1''s';
COMMENT ON FUNCTION dp_explain(text, bigint, int, jsonb) IS 'the plan of a release (algorithm, iterations, noise, accounting, memory) for a loss, n, d and options, without reading any data';
COMMENT ON FUNCTION dperm.logreg_bool_transition(internal, float8[], boolean, jsonb) IS 'internal: dp_logreg''s transition (boolean labels); buffers one clipped row';
COMMENT ON FUNCTION dperm.logreg_float_transition(internal, float8[], float8, jsonb) IS 'internal: dp_logreg''s transition (float8 labels); buffers one clipped row';
COMMENT ON FUNCTION dperm.huber_transition(internal, float8[], float8, jsonb) IS 'internal: dp_huber''s transition; buffers one clipped row';
COMMENT ON FUNCTION dperm.softmax_transition(internal, float8[], int, jsonb) IS 'internal: dp_softmax''s transition; buffers one clipped row';
COMMENT ON FUNCTION dperm.final(internal) IS 'internal: the training aggregates'' final function; charges the ledger, then trains';
COMMENT ON FUNCTION dperm.pass_logreg_bool_step(float8[], float8[], boolean, float8[], float8[]) IS 'internal: a streaming pass''s transition (logistic, boolean labels); only inside dperm.train';
COMMENT ON FUNCTION dperm.pass_logreg_float_step(float8[], float8[], float8, float8[], float8[]) IS 'internal: a streaming pass''s transition (logistic, float8 labels); only inside dperm.train';
COMMENT ON FUNCTION dperm.pass_huber_step(float8[], float8[], float8, float8[], float8[]) IS 'internal: a streaming pass''s transition (Huber); only inside dperm.train';
COMMENT ON FUNCTION dperm.pass_softmax_step(float8[], float8[], int, float8[], float8[]) IS 'internal: a streaming pass''s transition (softmax); only inside dperm.train';
COMMENT ON FUNCTION dperm.pass_combine(float8[], float8[]) IS 'internal: adds two streaming pass states element by element (parallel workers, Citus shards)';
COMMENT ON FUNCTION dperm.budget_spent(regclass, text, float8, float8[], float8, float8) IS 'what a relation has spent under an accounting (what budget_status shows), optionally with one more charge; 42501 unless the caller may see the relation';
COMMENT ON FUNCTION dperm.is_ledger_curve(float8[]) IS 'whether a ledger row''s rdp is a curve on dperm.rdp_orders() that composes (else the row composes by sums)';
COMMENT ON FUNCTION dperm.curve_add(float8[], float8[]) IS 'the order-wise sum of two RDP curves (NULL is no curve)';
COMMENT ON AGGREGATE dperm.curve_sum(float8[]) IS 'the order-wise sum of RDP curves';
COMMENT ON FUNCTION dperm.ledger_totals() IS 'internal: the ledger''s trigger that keeps dperm.budget_totals, each relation''s running sums';
COMMENT ON FUNCTION dperm.runs_that_fit(regclass, text, float8, float8, float8[], float8, float8) IS 'how many more copies of a charge (RDP curve, epsilon, delta) fit in a relation''s budget, at most 10^6; 42501 unless the caller may see the relation';
COMMENT ON FUNCTION dperm.charges_fit(regclass, text, float8, float8, float8[], float8, float8, bigint) IS 'whether k more copies of a charge fit in a relation''s budget; 42501 unless the caller may see the relation';

-- ==== privacy units ====
-- A budget names the unit its releases are private for (a column naming
-- the person) and the rows each unit contributes; dperm.train bounds them.
ALTER TABLE dperm.budgets ADD COLUMN privacy_unit name,
  ADD COLUMN max_rows_per_unit int CHECK (max_rows_per_unit BETWEEN 1 AND 100000),
  ADD CHECK ((privacy_unit IS NULL) = (max_rows_per_unit IS NULL));
COMMENT ON COLUMN dperm.budgets.privacy_unit IS 'the column naming the unit every release is private for (NULL: the row)';
COMMENT ON COLUMN dperm.budgets.max_rows_per_unit IS 'k: the rows each unit contributes to a release (dperm.train bounds them)';
DROP FUNCTION dperm.set_budget(regclass, float8, float8, text);
-- delta NULL (the default) keeps a budget's delta (1e-5, the delta the
-- README recommends, for a new budget).
-- privacy_unit and max_rows_per_unit NULL keep the budget's unit (the row
-- for a new budget).
CREATE FUNCTION dperm.set_budget(relation regclass, epsilon float8, delta float8 DEFAULT NULL,
                                 accounting text DEFAULT NULL, privacy_unit text DEFAULT NULL,
                                 max_rows_per_unit int DEFAULT NULL)
  RETURNS void AS 'MODULE_PATHNAME', 'dperm_set_budget' LANGUAGE C CALLED ON NULL INPUT VOLATILE;
COMMENT ON FUNCTION dperm.set_budget IS 'sets the total privacy budget of a relation (its owner or a superuser); delta NULL keeps the budget''s (1e-5 for a new one); accounting rdp (default) or basic; privacy_unit, a column naming the person (default: the row), with max_rows_per_unit, the rows each contributes';
CREATE OR REPLACE VIEW dperm.budget_status WITH (security_invoker = true) AS
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

-- ==== scoring at the speed of SQL ====
-- dperm.predict becomes a C function that looks its name up once per
-- statement and decodes the model once (no SET clause: see sql/dperm.sql).
CREATE OR REPLACE FUNCTION dperm.predict(name text, features float8[], version int DEFAULT NULL)
  RETURNS float8 AS 'MODULE_PATHNAME', 'dperm_predict' LANGUAGE C STABLE;

-- ==== models: paused schedules, one specification per name, versions only when charged ====
-- A scheduled run that the budget cannot pay for pauses its schedule
-- (paused_at, paused_reason) instead of adding a failed version; the job
-- runs dperm.retrain_on_schedule, and the forecast says when it is paused.
-- train_model refuses (42710) a name whose versions have another relation,
-- columns or loss; a run refused before its charge leaves no version (C only).
ALTER TABLE dperm.model_schedules ADD COLUMN paused_at timestamptz,
  ADD COLUMN paused_reason text,
  ADD CONSTRAINT model_schedules_paused CHECK ((paused_at IS NULL) = (paused_reason IS NULL));
COMMENT ON COLUMN dperm.model_schedules.paused_at IS 'when a scheduled run first found that the budget cannot pay for the next run (NULL: not paused); each scheduled run checks again and resumes once it fits';
COMMENT ON COLUMN dperm.model_schedules.paused_reason IS 'why the schedule is paused: the relation whose budget the next run does not fit in';
COMMENT ON FUNCTION dperm.retrain(text) IS 'trains the next version of a model from its latest specification (owner only); a run that fails after its charge is recorded as a failed version';
COMMENT ON FUNCTION dperm.retrain(text, regrole) IS 'dperm.retrain of the given role''s model (checked by OID)';
CREATE FUNCTION dperm.retrain_on_schedule(name text, owner regrole)
  RETURNS int AS 'MODULE_PATHNAME', 'dperm_retrain_on_schedule' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.retrain_on_schedule IS 'what a scheduled job runs: dperm.retrain(name, owner), or, when the budget cannot pay for the run, NULL and the schedule marked paused (no version, no charge) until a run fits again';
COMMENT ON FUNCTION dperm.schedule_retraining IS 'a pg_cron job that runs dperm.retrain_on_schedule(name, owner) on a cron schedule; refused when fewer than min_runs runs fit in the budget';
COMMENT ON FUNCTION dperm.train_model IS 'trains a new version of the caller''s own named model (dperm.train for protected relations, as the caller otherwise); returns the version; 42710 when the name''s versions have another relation, columns or loss';
-- (Replaces 0.6.0's forecast: the model by owner, as dperm.model reads it, and
-- the schedule's pause.)
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

DROP FUNCTION dperm.retraining_forecast(text);
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

-- ==== feature specs: named models ====
-- A named model may be trained through a feature spec; dperm.predict and
-- dperm.encode then take the raw row.
ALTER TABLE dperm.models ADD COLUMN feature_spec jsonb;
COMMENT ON COLUMN dperm.models.feature_spec IS 'the feature spec the version was trained through (NULL: features names a float8[] column)';
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

-- ==== operator rough edges ====
-- budget_status under rdp accounting: epsilon at the delta budget, delta
-- the releases without a curve took (dperm.budget_spent, ComposeTotals).
COMMENT ON COLUMN dperm.budget_status.epsilon_spent IS 'the composed epsilon of the releases; under rdp accounting at the whole delta budget (the releases are (epsilon_spent, delta_budget)-DP)';
COMMENT ON COLUMN dperm.budget_status.delta_spent IS 'under basic accounting the summed delta; under rdp the delta the releases without an RDP curve took (releases with a curve take none: it is converted at what is left)';
COMMENT ON COLUMN dperm.budget_status.delta_remaining IS 'the delta later releases may still take (under rdp: releases without a curve; a release with a curve needs none)';
-- Scoring imputes a NULL feature element as 0, as training does (documented).
COMMENT ON FUNCTION dp_predict(dp_model, float8[]) IS 'the probability (logistic) or prediction (Huber) of a model for a feature vector, with training''s clipping (a NULL element counts as 0, as in training); an error for softmax models';
COMMENT ON FUNCTION dp_predict_class(dp_model, float8[]) IS 'the most likely class of a softmax or logistic model (a NULL feature element counts as 0, as in training)';
COMMENT ON FUNCTION dp_predict_proba(dp_model, float8[]) IS 'the class probabilities of a softmax or logistic model (a NULL feature element counts as 0, as in training)';
COMMENT ON FUNCTION dperm.predict(text, float8[], int) IS 'prediction of a named model (latest trained version, or a pinned one): probability, Huber prediction or softmax class (a NULL feature element counts as 0, as in training)';
-- dperm.cron_next_run refuses an invalid schedule (22023) instead of NULL.
CREATE OR REPLACE FUNCTION dperm.cron_next_run(cron_schedule text, after timestamptz, k bigint DEFAULT 1)
  RETURNS timestamptz AS 'MODULE_PATHNAME', 'dperm_cron_next_run_checked'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.cron_next_run IS 'the k-th run of a cron schedule after a time (UTC, as pg_cron 1.4); NULL when a valid schedule cannot be forecast (@reboot, N seconds) or never runs; 22023 for an invalid schedule';

-- ==== feature specs: labels ====
-- A spec may mark one column "label": true; dperm.train reads the label
-- through it, and dperm.evaluate(name, relation, options) reads a spec model's
-- raw columns.
CREATE FUNCTION dperm.encode_label(spec jsonb, val text) RETURNS float8
  AS 'MODULE_PATHNAME', 'dperm_encode_label' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.encode_label(jsonb, text) IS 'a label value read through the column a feature spec marks "label": true (values: its index; boolean: 1 or 0; bounds: scaled to [-1, 1]); NULL outside the domain';
CREATE FUNCTION dperm.evaluate(name text, relation regclass, options jsonb)
  RETURNS jsonb AS 'MODULE_PATHNAME', 'dperm_evaluate' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.evaluate(text, regclass, jsonb) IS 'dperm.evaluate of a version trained through a feature spec: its stored spec and label read the relation''s raw columns';

-- What a release that is (epsilon, delta)-DP per privacy unit costs a budget
-- that protects rows (group privacy over the two units a replaced row
-- touches: unit_level.hpp); the ledger writer charges the same.
CREATE FUNCTION dperm.unit_release_at_row(epsilon float8, delta float8,
                                          OUT epsilon float8, OUT delta float8, OUT rdp float8[])
  AS 'MODULE_PATHNAME', 'dperm_unit_release_at_row'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.unit_release_at_row(float8, float8) IS 'what a release that is (epsilon, delta)-DP per privacy unit (its count and model, as the ledger charges them) costs a budget that protects rows: (2 epsilon, delta (1 + e^epsilon)), and the pure curve of 2 epsilon when delta = 0';

