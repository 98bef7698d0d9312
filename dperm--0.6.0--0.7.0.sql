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
