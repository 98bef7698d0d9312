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
