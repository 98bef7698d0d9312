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
