-- dperm 0.4.0 -> 0.5.0: the trust boundary (README "Trust model").
\echo Use "ALTER EXTENSION dperm UPDATE TO '0.5.0'" to load this file. \quit

-- dperm.budget_spent is SECURITY DEFINER (budget_status needs every role's
-- ledger rows). With search_path = pg_catalog alone, PostgreSQL still
-- searches the caller's temporary schema first for types and relations:
-- name it explicitly, last.
ALTER FUNCTION dperm.budget_spent(regclass, text, float8, float8[], float8, float8)
  SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION dperm.protect IS 'the owner revokes direct access to a relation, its partitions and inheritance children; analysts then train through dperm.train';
COMMENT ON FUNCTION dperm.train IS 'a private model from a protected relation, read as its owner (columns by name; loss logistic, huber or softmax), charged to it and its ancestors';
