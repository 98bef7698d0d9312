-- ==== running totals: per relation, checked against the ledger ====
-- An update or delete of ledger rows recounts only the relations whose rows
-- changed (dperm.move_budget's open transaction locked every relation's
-- totals); last_id is the watermark dperm.budget_totals_stale() compares
-- with the ledger (rows restored without the trigger are not unspent).
ALTER TABLE dperm.budget_totals ADD COLUMN last_id bigint NOT NULL DEFAULT 0;
CREATE INDEX budget_totals_last_id ON dperm.budget_totals (last_id);
COMMENT ON COLUMN dperm.budget_totals.last_id IS 'the highest dperm.ledger id the row counts (the watermark of dperm.budget_totals_stale())';
DROP TRIGGER ledger_totals_rebuild ON dperm.ledger;
@INCLUDE ../../install/common/06_totals_keys.sql@

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
