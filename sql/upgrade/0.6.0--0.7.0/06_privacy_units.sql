-- ==== privacy units ====
-- A budget names the unit its releases are private for (a column naming
-- the person) and the rows each unit contributes; dperm.train bounds them.
ALTER TABLE dperm.budgets ADD COLUMN privacy_unit name,
  ADD COLUMN max_rows_per_unit int CHECK (max_rows_per_unit BETWEEN 1 AND 100000),
  ADD CHECK ((privacy_unit IS NULL) = (max_rows_per_unit IS NULL)),
  ADD COLUMN units bigint CONSTRAINT budgets_units_positive CHECK (units >= 1),
  ADD CONSTRAINT budgets_units_need_unit CHECK (units IS NULL OR privacy_unit IS NOT NULL);
COMMENT ON COLUMN dperm.budgets.privacy_unit IS 'the column naming the unit every release is private for (NULL: the row)';
COMMENT ON COLUMN dperm.budgets.max_rows_per_unit IS 'k: the rows each unit contributes to a release (dperm.train bounds them)';
COMMENT ON COLUMN dperm.budgets.units IS 'the number of units the owner declares public (a fixed cohort): dperm.train reads exactly that many and releases no count, private against one unit replaced (NULL: not declared, the count is noisy)';
DROP FUNCTION dperm.set_budget(regclass, float8, float8, text);
-- delta NULL (the default) keeps a budget's delta (1e-5, the delta the
-- README recommends, for a new budget).
-- privacy_unit and max_rows_per_unit NULL keep the budget's unit (the row
-- for a new budget).
-- units NULL keeps the budget's declaration of its number of units (none
-- for a new budget); 0 withdraws it.
CREATE FUNCTION dperm.set_budget(relation regclass, epsilon float8, delta float8 DEFAULT NULL,
                                 accounting text DEFAULT NULL, privacy_unit text DEFAULT NULL,
                                 max_rows_per_unit int DEFAULT NULL, units bigint DEFAULT NULL)
  RETURNS void AS 'MODULE_PATHNAME', 'dperm_set_budget' LANGUAGE C CALLED ON NULL INPUT VOLATILE;
COMMENT ON FUNCTION dperm.set_budget IS 'sets the total privacy budget of a relation (its owner or a superuser); delta NULL keeps the budget''s (1e-5 for a new one); accounting rdp (default) or basic; privacy_unit, a column naming the person (default: the row), with max_rows_per_unit, the rows each contributes; units, the number of units declared public (a fixed cohort: no noisy count; 0 withdraws it)';
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
       b.max_rows_per_unit,
       b.units AS public_units
  FROM dperm.budgets b,
       LATERAL dperm.budget_spent(b.relation, b.accounting, b.delta) s;
COMMENT ON COLUMN dperm.budget_status.public_units IS 'the number of units the owner declared public (dperm.set_budget units): releases read exactly that many, with no noisy count (NULL: not declared)';
