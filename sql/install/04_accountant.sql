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
-- What a release that is (epsilon, delta)-DP per privacy unit costs a budget
-- that protects rows (group privacy over the two units a replaced row
-- touches: unit_level.hpp); the ledger writer charges the same.
CREATE FUNCTION dperm.unit_release_at_row(epsilon float8, delta float8,
                                          OUT epsilon float8, OUT delta float8, OUT rdp float8[])
  AS 'MODULE_PATHNAME', 'dperm_unit_release_at_row'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.unit_release_at_row(float8, float8) IS 'what a release that is (epsilon, delta)-DP per privacy unit (its count and model, as the ledger charges them) costs a budget that protects rows: (2 epsilon, delta (1 + e^epsilon)), and the pure curve of 2 epsilon when delta = 0';

CREATE FUNCTION dperm.rdp_orders() RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_rdp_orders'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.rdp_orders IS 'the Renyi orders of the RDP curves in dperm.ledger.rdp';
