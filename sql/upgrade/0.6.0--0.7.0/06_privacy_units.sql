-- ==== privacy units ====
-- A budget names the unit its releases are private for (a column naming
-- the person) and the rows each unit contributes; dperm.train bounds them.
ALTER TABLE dperm.budgets ADD COLUMN privacy_unit name,
  ADD COLUMN max_rows_per_unit int CHECK (max_rows_per_unit BETWEEN 1 AND 100000),
  ADD CHECK ((privacy_unit IS NULL) = (max_rows_per_unit IS NULL));
COMMENT ON COLUMN dperm.budgets.privacy_unit IS 'the column naming the unit every release is private for (NULL: the row)';
COMMENT ON COLUMN dperm.budgets.max_rows_per_unit IS 'k: the rows each unit contributes to a release (dperm.train bounds them)';
DROP FUNCTION dperm.set_budget(regclass, float8, float8, text);
-- delta NULL (the default) keeps a budget's delta (1e-5, the delta the
-- README recommends, for a new budget).
-- privacy_unit and max_rows_per_unit NULL keep the budget's unit (the row
-- for a new budget).
CREATE FUNCTION dperm.set_budget(relation regclass, epsilon float8, delta float8 DEFAULT NULL,
                                 accounting text DEFAULT NULL, privacy_unit text DEFAULT NULL,
                                 max_rows_per_unit int DEFAULT NULL)
  RETURNS void AS 'MODULE_PATHNAME', 'dperm_set_budget' LANGUAGE C CALLED ON NULL INPUT VOLATILE;
COMMENT ON FUNCTION dperm.set_budget IS 'sets the total privacy budget of a relation (its owner or a superuser); delta NULL keeps the budget''s (1e-5 for a new one); accounting rdp (default) or basic; privacy_unit, a column naming the person (default: the row), with max_rows_per_unit, the rows each contributes';
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
       b.max_rows_per_unit
  FROM dperm.budgets b,
       LATERAL dperm.budget_spent(b.relation, b.accounting, b.delta) s;
