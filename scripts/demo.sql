-- The demo of scripts/demo.sh: a private model of BANK, its ledger row and
-- the remaining budget.
\pset pager off
\echo '== dperm demo: differentially private logistic regression on BANK'
CREATE EXTENSION IF NOT EXISTS dperm;
SELECT count(*) AS rows, max(cardinality(features)) AS features FROM bank;

\echo '== the data owner gives the table a total privacy budget'
SELECT dperm.set_budget('bank', epsilon => 3, delta => 1e-5);

\echo '== what training will do, before reading any data'
SELECT key, value FROM jsonb_each(dp_explain('logistic', 45211, 42,
         dp_options(epsilon => 1, delta => 1e-6, l2 => 0.01)))
 WHERE key IN ('algorithm', 'iterations', 'step_size', 'L', 'beta', 'sensitivity',
               'noise', 'noise_scale', 'epsilon', 'delta');

\echo '== train: one (1, 1e-6)-differentially private release (bank is budgeted: d = 42 is declared)'
CREATE TEMP TABLE model AS
  SELECT dp_logreg(features, label, dp_options(epsilon => 1, delta => 1e-6, l2 => 0.01, dimension => 42)) AS m
    FROM bank;
SELECT jsonb_pretty(m::jsonb - 'plan' - 'coefficients') AS model FROM model;

\echo '== the ten largest coefficients'
SELECT term, round(coefficient::numeric, 4) AS coefficient
  FROM model, dp_coefficients(m) ORDER BY abs(coefficient) DESC LIMIT 10;

\echo '== how well it ranks: AUC on the training rows (an evaluation, itself not private)'
WITH scored AS (SELECT label, rank() OVER (ORDER BY dp_predict(m, features)) AS r FROM bank, model)
SELECT round(((sum(r) FILTER (WHERE label) - count(*) FILTER (WHERE label) * (count(*) FILTER (WHERE label) + 1) / 2.0)
              / (count(*) FILTER (WHERE label) * count(*) FILTER (WHERE NOT label)))::numeric, 4) AS auc
  FROM scored;

\echo '== the ledger row of the release and the budget left'
SELECT id, role, relation_names, algorithm, mechanism, epsilon, delta, n, d, released_at
  FROM dperm.ledger ORDER BY id DESC LIMIT 1;
SELECT * FROM dperm.budget_status;
