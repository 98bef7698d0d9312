-- The accountant in SQL (Poisson sampling, add/remove neighbours, L2
-- sensitivity 1). Values are checked against ../shared/accounting reference
-- rows at their stated tolerances; the unit tests check every row.
CREATE FUNCTION rel_err(x float8, ref float8) RETURNS float8 LANGUAGE sql
  AS $$ SELECT abs(x - ref) / abs(ref) $$;

-- analytic_gaussian.csv: eps = 1, delta = 1e-5 and eps = 0.05, delta = 1e-3
SELECT rel_err(dperm.gaussian_sigma(0.05, 1e-3), 30.010328780523466) < 1e-6 AS sigma_ok;
SELECT rel_err(dperm.gaussian_sigma(0.05, 1e-3, 2), 2 * 30.010328780523466) < 1e-6 AS scales_with_sensitivity;

-- rdp_subsampled_gaussian.csv: q = 0.01, sigma = 1, 100 steps
SELECT rel_err(r[1], 0.012725374332744984) < 1e-6 AS order_1_5,
       rel_err(r[2], 0.017181342207454795) < 1e-6 AS order_2,
       rel_err(r[3], 0.052469566733030916) < 1e-6 AS order_5_5,
       rel_err(r[4], 18.83396913795536) < 1e-6 AS order_10_5
  FROM dperm.rdp_subsampled_gaussian(0.01, 1.0, 100, ARRAY[1.5, 2, 5.5, 10.5]) r;
-- q = 1 is the plain Gaussian: alpha / (2 sigma^2) per step
SELECT dperm.rdp_subsampled_gaussian(1, 2, 3, ARRAY[2, 8]) = ARRAY[3 * 2 / 8.0, 3 * 8 / 8.0]::float8[] AS closed_form;

-- rdp_to_eps.csv: q = 0.01, sigma = 1, 10000 steps, delta = 1e-5 on the standard grid
SELECT rel_err(dperm.rdp_to_epsilon(dperm.rdp_orders(),
                 dperm.rdp_subsampled_gaussian(0.01, 1.0, 10000, dperm.rdp_orders()), 1e-5),
               6.719402117939232) < 1e-4 AS improved_conversion;
SELECT rel_err(dperm.epsilon_subsampled_gaussian(0.01, 1.0, 10000, 1e-5), 6.719402117939232) < 1e-4 AS rdp_epsilon;
-- pld_eps.csv: q = 0.01, sigma = 1, 100 steps, delta = 1e-5; PLD is tighter than RDP
SELECT rel_err(dperm.epsilon_subsampled_gaussian(0.01, 1.0, 100, 1e-5, 'pld'), 0.7180367095923873) < 1e-4 AS pld_epsilon,
       dperm.epsilon_subsampled_gaussian(0.01, 1.0, 100, 1e-5, 'pld')
         <= dperm.epsilon_subsampled_gaussian(0.01, 1.0, 100, 1e-5, 'rdp') AS pld_below_rdp;
-- noise_calibration.csv: q = 0.01, 1000 steps, eps = 0.5, delta = 1e-5
SELECT rel_err(dperm.calibrate_noise_multiplier(0.01, 1000, 0.5, 1e-5), 2.585599543604398) < 1e-4 AS calibrated,
       dperm.epsilon_subsampled_gaussian(0.01, dperm.calibrate_noise_multiplier(0.01, 1000, 0.5, 1e-5), 1000, 1e-5) <= 0.5 AS never_above_target;
SELECT dperm.epsilon_subsampled_gaussian(0.01, dperm.calibrate_noise_multiplier(0.01, 100, 1, 1e-5, 'pld'), 100, 1e-5, 'pld') <= 1
       AS pld_calibration_never_above_target;

-- errors
SELECT dperm.gaussian_sigma(0, 1e-5);
SELECT dperm.gaussian_sigma(1, 1);
SELECT dperm.gaussian_sigma(1, 1e-5, -1);
SELECT dperm.rdp_subsampled_gaussian(0, 1, 10, ARRAY[2.0]);
SELECT dperm.rdp_subsampled_gaussian(1.5, 1, 10, ARRAY[2.0]);
SELECT dperm.rdp_subsampled_gaussian(0.1, 0, 10, ARRAY[2.0]);
SELECT dperm.rdp_subsampled_gaussian(0.1, 1, 0, ARRAY[2.0]);
SELECT dperm.rdp_subsampled_gaussian(0.1, 1, 10, ARRAY[1.0]);
SELECT dperm.rdp_subsampled_gaussian(0.1, 1, 10, ARRAY[2, NULL]::float8[]);
SELECT dperm.rdp_to_epsilon(ARRAY[2.0, 3.0], ARRAY[0.1], 1e-5);
SELECT dperm.rdp_to_epsilon(ARRAY[2.0], ARRAY[0.1], 0);
SELECT dperm.epsilon_subsampled_gaussian(0.1, 1, 10, 1e-5, 'moments');
SELECT dperm.calibrate_noise_multiplier(0.1, 10, -1, 1e-5);
