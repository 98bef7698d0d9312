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

@INCLUDE common/06_totals_keys.sql@

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
