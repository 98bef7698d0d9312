-- dperm 0.1.0 -> 0.2.0: the privacy accountant in SQL, and a ledger that
-- composes in Renyi DP.
\echo Use "ALTER EXTENSION dperm UPDATE TO '0.2.0'" to load this file. \quit

-- ------------------------------------------------------------ accountant
-- Poisson sampling, add/remove neighbours, L2 sensitivity 1 (the setting of
-- TensorFlow Privacy, Opacus and dp_accounting), unless stated otherwise.

CREATE FUNCTION dperm.gaussian_sigma(epsilon float8, delta float8, sensitivity float8 DEFAULT 1)
  RETURNS float8 AS 'MODULE_PATHNAME', 'dperm_gaussian_sigma'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.gaussian_sigma IS 'smallest sigma of an (epsilon, delta)-DP Gaussian mechanism (analytic Gaussian, Balle & Wang 2018)';

CREATE FUNCTION dperm.rdp_subsampled_gaussian(q float8, noise_multiplier float8, steps bigint, orders float8[])
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_rdp_subsampled_gaussian'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.rdp_subsampled_gaussian IS 'RDP of steps Poisson-subsampled Gaussian steps at the given orders (Mironov, Talwar, Zhang 2019)';

CREATE FUNCTION dperm.rdp_to_epsilon(orders float8[], rdp float8[], delta float8)
  RETURNS float8 AS 'MODULE_PATHNAME', 'dperm_rdp_to_epsilon'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.rdp_to_epsilon IS 'epsilon at delta of an RDP curve, best order, improved conversion (Balle et al. 2020)';

CREATE FUNCTION dperm.epsilon_subsampled_gaussian(q float8, noise_multiplier float8, steps bigint, delta float8,
                                                   accountant text DEFAULT 'rdp')
  RETURNS float8 AS 'MODULE_PATHNAME', 'dperm_epsilon_subsampled_gaussian'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.epsilon_subsampled_gaussian IS 'epsilon of steps Poisson-subsampled Gaussian steps, by the rdp or pld accountant';

CREATE FUNCTION dperm.calibrate_noise_multiplier(q float8, steps bigint, epsilon float8, delta float8,
                                                  accountant text DEFAULT 'rdp')
  RETURNS float8 AS 'MODULE_PATHNAME', 'dperm_calibrate_noise_multiplier'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.calibrate_noise_multiplier IS 'smallest noise multiplier whose accounted epsilon is at most the target';

-- The fixed grid of Renyi orders of the ledger's curves.
CREATE FUNCTION dperm.rdp_orders() RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_rdp_orders'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.rdp_orders IS 'the Renyi orders of the RDP curves in dperm.ledger.rdp';

-- ------------------------------------------------------------ ledger in RDP

ALTER TABLE dperm.ledger ADD COLUMN rdp float8[];
COMMENT ON COLUMN dperm.ledger.rdp IS 'the release''s RDP curve on dperm.rdp_orders(); NULL when none is known';

-- Budgets set before 0.2.0 keep plain sums; new budgets compose in RDP.
ALTER TABLE dperm.budgets ADD COLUMN accounting text NOT NULL DEFAULT 'basic'
  CHECK (accounting IN ('rdp', 'basic'));
ALTER TABLE dperm.budgets ALTER COLUMN accounting SET DEFAULT 'rdp';

-- Spent epsilon and delta of a relation under an accounting, optionally with
-- one more release. Reads every ledger row (the view and the ledger writer
-- need totals, not the caller's own rows).
CREATE FUNCTION dperm.budget_spent(relation regclass, accounting text, delta_budget float8,
                                   extra_rdp float8[] DEFAULT NULL, extra_epsilon float8 DEFAULT 0,
                                   extra_delta float8 DEFAULT 0,
                                   OUT epsilon float8, OUT delta float8, OUT releases bigint)
  AS 'MODULE_PATHNAME', 'dperm_budget_spent'
  LANGUAGE C CALLED ON NULL INPUT STABLE SECURITY DEFINER
  SET search_path = pg_catalog;


DROP FUNCTION dperm.set_budget(regclass, float8, float8);
-- accounting NULL keeps a budget's accounting ('rdp' for a new budget).
CREATE FUNCTION dperm.set_budget(relation regclass, epsilon float8, delta float8 DEFAULT 0,
                                 accounting text DEFAULT NULL)
  RETURNS void AS 'MODULE_PATHNAME', 'dperm_set_budget' LANGUAGE C CALLED ON NULL INPUT VOLATILE;
COMMENT ON FUNCTION dperm.set_budget IS 'sets the total privacy budget of a relation (its owner or a superuser); accounting rdp (default) or basic';

DROP VIEW dperm.budget_status;
CREATE VIEW dperm.budget_status AS
SELECT b.relation,
       b.accounting,
       b.epsilon AS epsilon_budget,
       b.delta AS delta_budget,
       s.epsilon AS epsilon_spent,
       s.delta AS delta_spent,
       greatest(b.epsilon - s.epsilon, 0) AS epsilon_remaining,
       greatest(b.delta - s.delta, 0) AS delta_remaining,
       s.releases
  FROM dperm.budgets b,
       LATERAL dperm.budget_spent(b.relation, b.accounting, b.delta) s;
COMMENT ON VIEW dperm.budget_status IS 'spent and remaining privacy budget per relation, under its accounting';
GRANT SELECT ON dperm.budget_status TO PUBLIC;
