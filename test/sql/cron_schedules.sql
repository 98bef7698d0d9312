-- dperm.cron_next_run: an invalid schedule is an error (22023, naming it),
-- never a NULL that reads like "never runs"; valid pg_cron schedules without
-- a forecast (@reboot, "N seconds", a "$" day) and schedules that never run
-- are NULL.
SELECT dperm.cron_next_run('61 * * * *', '2026-01-01 00:00+00');
SELECT dperm.cron_next_run('every day', '2026-01-01 00:00+00');
SELECT dperm.cron_next_run('* * * *', '2026-01-01 00:00+00');
SELECT dperm.cron_next_run('', '2026-01-01 00:00+00');
SELECT dperm.cron_next_run('@rebot', '2026-01-01 00:00+00');
SELECT dperm.cron_next_run('@reboot', '2026-01-01 00:00+00') AS reboot,
       dperm.cron_next_run('30 seconds', '2026-01-01 00:00+00') AS seconds,
       dperm.cron_next_run('0 0 $ * *', '2026-01-01 00:00+00') AS last_day,
       dperm.cron_next_run('0 0 31 2 *', '2026-01-01 00:00+00') AS never,
       dperm.cron_next_run('30 2 * * *', '2026-01-01 03:00+00', 2) AS nightly;
-- the refusal's SQLSTATE
DO $$
BEGIN
  PERFORM dperm.cron_next_run('1-60 * * * *', now());
EXCEPTION WHEN invalid_parameter_value THEN
  RAISE NOTICE 'refused: %', SQLERRM;
END $$;
