CREATE FUNCTION dperm.retraining_forecast(name text,
    OUT runs bigint, OUT last_run_at timestamptz, OUT next_run_at timestamptz,
    OUT cron_schedule text, OUT limiting_relation regclass, OUT epsilon_per_run float8,
    OUT delta_per_run float8, OUT version int, OUT paused_at timestamptz,
    OUT paused_reason text)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  m dperm.models := dperm.model($1);
  b record;
  k bigint;
BEGIN
  epsilon_per_run := m.epsilon;
  delta_per_run := m.delta;
  version := m.version;
  FOR b IN SELECT bu.relation, bu.accounting, bu.epsilon, bu.delta, c.epsilon AS run_epsilon,
                  c.delta AS run_delta, c.rdp AS run_rdp
             FROM dperm.budgets bu, dperm.run_charge(m, bu.privacy_unit) c
            WHERE bu.relation = ANY (coalesce(m.relations, ARRAY[m.relation]))
            ORDER BY bu.relation::oid LOOP
    k := dperm.runs_that_fit(b.relation, b.accounting, b.epsilon, b.delta, b.run_rdp,
                             b.run_epsilon, b.run_delta);
    IF runs IS NULL OR k < runs THEN
      runs := k;
      limiting_relation := b.relation;
    END IF;
  END LOOP;
  SELECT s.cron_schedule, s.paused_at, s.paused_reason
    INTO cron_schedule, paused_at, paused_reason
    FROM dperm.model_schedules s
   WHERE s.owner = m.owner AND s.name = m.name;
  IF cron_schedule IS NOT NULL THEN
    next_run_at := dperm.cron_next_run(cron_schedule, now(), 1);
    IF runs > 0 THEN
      last_run_at := dperm.cron_next_run(cron_schedule, now(), runs);
    END IF;
  END IF;
END $$;
COMMENT ON FUNCTION dperm.retraining_forecast IS 'how many more retrainings of a model fit in the budgets it is charged to (NULL: no budget limits it), when a scheduled model''s last one that fits runs, and whether its schedule is paused (paused_at, paused_reason)';
