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
