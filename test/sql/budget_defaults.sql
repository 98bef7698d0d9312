-- dperm.set_budget's delta: omitted (NULL), it keeps an existing budget's
-- delta and gives a new budget 1e-5 (the user guide's recommendation), so a
-- release at delta > 0 fits a budget set without one. And what
-- dperm.budget_status says under rdp accounting: the epsilon spent at the
-- whole delta budget, the delta taken by the releases without a curve, the
-- rest still available (not "delta exhausted" after one release).
SET dperm.allow_seed = on;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE bd_rows AS
  SELECT i, ARRAY[sin(i) / 2, cos(3 * i) / 2] AS f, sin(i) + cos(3 * i) > 0 AS y
    FROM generate_series(1, 500) i;
CREATE TABLE bd_other AS SELECT * FROM bd_rows;
-- the README's tour, without delta: a new budget gets 1e-5
SELECT dperm.set_budget('bd_rows', epsilon => 3);
SELECT relation, epsilon, delta, accounting FROM dperm.budgets WHERE relation = 'bd_rows'::regclass;
-- a release at delta 1e-6 fits (dperm 0.6.0: refused, the delta budget was 0)
SELECT (dp_logreg(f, y, dp_options(epsilon => 0.5, delta => 1e-6, algorithm => 'dp_gd',
                                   iterations => 10, l2 => 0.1, dimension => 2, seed => 1)))::jsonb->>'n' AS n
  FROM bd_rows;
-- delta omitted or NULL keeps the budget's; a given delta replaces it; 0 is pure
SELECT dperm.set_budget('bd_rows', 4, delta => 2e-5);
SELECT dperm.set_budget('bd_rows', 5);
SELECT epsilon, delta FROM dperm.budgets WHERE relation = 'bd_rows'::regclass;
SELECT dperm.set_budget('bd_rows', 5, NULL, 'rdp');
SELECT epsilon, delta, accounting FROM dperm.budgets WHERE relation = 'bd_rows'::regclass;
SELECT dperm.set_budget('bd_other', 1, delta => 0);
SELECT delta FROM dperm.budgets WHERE relation = 'bd_other'::regclass;
SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, delta => 1e-6, algorithm => 'dp_gd',
                                  iterations => 10, l2 => 0.1, dimension => 2, seed => 1))
  FROM bd_other;
-- still refused: a delta out of range, a NULL epsilon
SELECT dperm.set_budget('bd_rows', 5, 1);
SELECT dperm.set_budget('bd_rows', NULL);

-- budget_status under rdp: after one release with a curve, the epsilon is
-- the conversion at the delta budget (below the budget) and no delta is
-- spent: all of it is left (dperm 0.6.0 read delta_spent = delta_budget,
-- delta_remaining 0)
SELECT relation, accounting, epsilon_budget, delta_budget,
       epsilon_spent > 0 AND epsilon_spent < 5 AS epsilon_spent_in_range,
       delta_spent, delta_remaining, releases
  FROM dperm.budget_status WHERE relation = 'bd_rows'::regclass;
-- a release without a curve (objective_approx) takes its delta from what is left
SELECT (dp_logreg(f, y, dp_options(epsilon => 0.5, delta => 4e-6, algorithm => 'objective_approx',
                                   l2 => 0.1, dimension => 2, seed => 1)))::jsonb->>'n' AS n
  FROM bd_rows;
SELECT rdp IS NULL AS no_curve FROM dperm.ledger ORDER BY id DESC LIMIT 1;
SELECT delta_spent, round(delta_remaining::numeric, 12) AS delta_remaining, releases
  FROM dperm.budget_status WHERE relation = 'bd_rows'::regclass;
-- the ledger writer's test is unchanged: a release without a curve whose
-- delta is more than is left is refused (DP001), one with a curve is not
-- limited by delta
SELECT dp_logreg(f, y, dp_options(epsilon => 0.5, delta => 1.7e-5, algorithm => 'objective_approx',
                                  l2 => 0.1, dimension => 2, seed => 1))
  FROM bd_rows;
SELECT (dp_logreg(f, y, dp_options(epsilon => 0.5, delta => 1.7e-5, algorithm => 'dp_gd',
                                   iterations => 10, l2 => 0.1, dimension => 2, seed => 1)))::jsonb->>'n' AS n
  FROM bd_rows;
SELECT delta_spent, round(delta_remaining::numeric, 12) AS delta_remaining, releases, epsilon_spent < epsilon_budget AS fits
  FROM dperm.budget_status WHERE relation = 'bd_rows'::regclass;
-- retiring records what the view shows
SELECT dperm.retire_budget('bd_rows');
SELECT delta_spent FROM dperm.retired_budgets WHERE relation_name = 'public.bd_rows';
SELECT dperm.retire_budget('bd_other');
