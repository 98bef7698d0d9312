-- ==== models: paused schedules, one specification per name, versions only when charged ====
-- A scheduled run that the budget cannot pay for pauses its schedule
-- (paused_at, paused_reason) instead of adding a failed version; the job
-- runs dperm.retrain_on_schedule, and the forecast says when it is paused.
-- train_model refuses (42710) a name whose versions have another relation,
-- columns or loss; a run refused before its charge leaves no version (C only).
ALTER TABLE dperm.model_schedules ADD COLUMN paused_at timestamptz,
  ADD COLUMN paused_reason text,
  ADD CONSTRAINT model_schedules_paused CHECK ((paused_at IS NULL) = (paused_reason IS NULL));
COMMENT ON COLUMN dperm.model_schedules.paused_at IS 'when a scheduled run first found that the budget cannot pay for the next run (NULL: not paused); each scheduled run checks again and resumes once it fits';
COMMENT ON COLUMN dperm.model_schedules.paused_reason IS 'why the schedule is paused: the relation whose budget the next run does not fit in';
COMMENT ON FUNCTION dperm.retrain(text) IS 'trains the next version of a model from its latest specification (owner only); a run that fails after its charge is recorded as a failed version';
COMMENT ON FUNCTION dperm.retrain(text, regrole) IS 'dperm.retrain of the given role''s model (checked by OID)';
CREATE FUNCTION dperm.retrain_on_schedule(name text, owner regrole)
  RETURNS int AS 'MODULE_PATHNAME', 'dperm_retrain_on_schedule' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.retrain_on_schedule IS 'what a scheduled job runs: dperm.retrain(name, owner), or, when the budget cannot pay for the run, NULL and the schedule marked paused (no version, no charge) until a run fits again';
COMMENT ON FUNCTION dperm.schedule_retraining IS 'a pg_cron job that runs dperm.retrain_on_schedule(name, owner) on a cron schedule; refused when fewer than min_runs runs fit in the budget';
COMMENT ON FUNCTION dperm.train_model IS 'trains a new version of the caller''s own named model (dperm.train for protected relations, as the caller otherwise); returns the version; 42710 when the name''s versions have another relation, columns or loss';
-- (Replaces 0.6.0's forecast: the model by owner, as dperm.model reads it, and
-- the schedule's pause.)
-- What one more run of a model version costs a budget whose unit is
-- budget_unit (NULL: the row): the version's ledger charge; for a
-- unit-level version and a budget that names no unit, that charge at the
-- row (dperm.unit_release_at_row), as the ledger writer charges it.
CREATE FUNCTION dperm.run_charge(m dperm.models, budget_unit name,
                                 OUT epsilon float8, OUT delta float8, OUT rdp float8[])
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN at_row THEN r.epsilon ELSE coalesce(m.epsilon, 0) END,
         CASE WHEN at_row THEN r.delta ELSE coalesce(m.delta, 0) END,
         CASE WHEN at_row THEN r.rdp ELSE m.rdp END
    FROM (SELECT budget_unit IS NULL
                 AND coalesce(pg_catalog.jsonb_typeof((m.model::pg_catalog.jsonb) OPERATOR(pg_catalog.->) 'privacy_unit')
                              OPERATOR(pg_catalog.=) 'object', false) AS at_row) u,
         dperm.unit_release_at_row(coalesce(m.epsilon, 0), coalesce(m.delta, 0)) r $$;
COMMENT ON FUNCTION dperm.run_charge(dperm.models, name) IS 'what one more run of a model version costs a budget with the given unit (NULL: the row): its ledger charge, or, for a unit-level version and a budget without a unit, that charge at the row';

DROP FUNCTION dperm.retraining_forecast(text);
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
