-- The ledger in Renyi DP: every release records its RDP curve; a relation
-- with accounting 'rdp' (the default) composes the curves, so many more
-- releases fit into one budget than with plain sums.
SET max_parallel_workers_per_gather = 0;
CREATE TABLE survey AS
  SELECT i, ARRAY[sin(i) / 2, cos(i) / 2] AS f, sin(5 * i) > 0 AS y FROM generate_series(1, 1000) i;
CREATE TABLE survey_copy AS SELECT * FROM survey;
SELECT dperm.set_budget('survey', 1.0, 1e-6);
SELECT dperm.set_budget('survey_copy', 1.0, 1e-6, accounting => 'basic');
SELECT dperm.set_budget('survey', 1.0, 1e-6, accounting => 'zcdp');
SELECT relation, accounting FROM dperm.budgets WHERE relation IN ('survey'::regclass, 'survey_copy'::regclass) ORDER BY 1;

-- Releases at (0.1, 1e-8) until the budget refuses one (SQLSTATE DP001).
CREATE FUNCTION releases_until_refused(rel regclass, cap int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE k int := 0;
BEGIN
  LOOP
    EXIT WHEN k >= cap;
    BEGIN
      EXECUTE format('SELECT dp_logreg(f, y, %L) FROM %s',
                     dp_options(epsilon => 0.1, delta => 1e-8, l2 => 0.1, algorithm => 'bolton', dimension => 2), rel);
    EXCEPTION WHEN SQLSTATE 'DP001' THEN
      RETURN k;
    END;
    k := k + 1;
  END LOOP;
  RETURN k;
END $$;
-- basic composition: 10 x 0.1 = 1.0, and the 11th is refused
SELECT releases_until_refused('survey_copy', 100) AS basic_releases;
-- RDP composition of the same releases: several times more fit
SELECT releases_until_refused('survey', 500) AS rdp_releases \gset
SELECT :rdp_releases > 50 AS many_more, :rdp_releases < 500 AS still_bounded;

-- every release carries its curve on dperm.rdp_orders(): for (discrete)
-- Gaussian noise of scale sigma on sensitivity Delta, alpha Delta^2 / (2 sigma^2),
-- linear in alpha (the pure stage 0 adds alpha e0^2/2 at this small e0 =
-- 0.01), with sigma the smallest that converts to the mechanism's share
-- (0.09, 1e-8): the whole curve converts to at most the release's 0.1
-- (basic composition of the stages would give exactly 0.1)
SELECT cardinality(rdp) = cardinality(dperm.rdp_orders()) AS full_curve,
       abs(rdp[4] / rdp[1] - (dperm.rdp_orders())[4] / (dperm.rdp_orders())[1]) < 1e-12
         AND dperm.rdp_to_epsilon(dperm.rdp_orders(), rdp, 1e-8) BETWEEN 0.09 AND 0.1 * (1 + 1e-12) AS gaussian_curve
  FROM dperm.ledger WHERE 'survey'::regclass = ANY (relations) ORDER BY id LIMIT 1;
-- the status composes the curves: spent epsilon is the RDP conversion at the
-- delta budget, and is at most the budget; the plain sum would be far above;
-- no delta is spent (releases with a curve take none of their own)
SELECT relation, accounting, releases = :rdp_releases AS all_counted,
       epsilon_spent <= 1 AS within_budget, epsilon_spent > 0.9 AS nearly_used,
       round(delta_spent::numeric, 12) AS delta_spent,
       (SELECT sum(epsilon) FROM dperm.ledger WHERE 'survey'::regclass = ANY (relations)) > 5 AS sum_would_be_over
  FROM dperm.budget_status WHERE relation = 'survey'::regclass;
SELECT relation, accounting, releases, round(epsilon_spent::numeric, 12) AS epsilon_spent,
       delta_spent, round(epsilon_remaining::numeric, 12) AS epsilon_remaining
  FROM dperm.budget_status WHERE relation = 'survey_copy'::regclass;
-- the spent epsilon equals dperm.rdp_to_epsilon of the summed curves
SELECT abs((SELECT epsilon_spent FROM dperm.budget_status WHERE relation = 'survey'::regclass)
           - dperm.rdp_to_epsilon(dperm.rdp_orders(),
               (SELECT array_agg(s ORDER BY i) FROM
                  (SELECT i, sum(c) AS s FROM dperm.ledger, unnest(rdp) WITH ORDINALITY u(c, i)
                    WHERE 'survey'::regclass = ANY (relations) GROUP BY i) t), 1e-6)) < 1e-12 AS matches_sql;

-- pure epsilon-DP releases compose in RDP too: min(eps, alpha eps^2 / 2)
CREATE TABLE pure AS SELECT * FROM survey;
SELECT dperm.set_budget('pure', 1.0, 1e-6);
-- (the plain intercept: no offset stage, whose share test/sql/offset.sql checks)
SELECT dp_logreg(f, y, dp_options(epsilon => 0.1, l2 => 0.1, intercept => 'fitted', dimension => 2)) IS NOT NULL AS released FROM pure;
SELECT abs(rdp[1] - 1.25 * 0.01 / 2) < 1e-15 AS zcdp_curve, rdp[24] = 0.1 AS capped_at_epsilon
  FROM dperm.ledger WHERE 'pure'::regclass = ANY (relations);
