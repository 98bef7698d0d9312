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
