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
@INCLUDE ../../install/common/08_retired_budgets.sql@

@INCLUDE ../../install/common/08_lineage.sql@
