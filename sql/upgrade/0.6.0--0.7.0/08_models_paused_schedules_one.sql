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
@INCLUDE ../../install/common/12_run_charge.sql@

DROP FUNCTION dperm.retraining_forecast(text);
@INCLUDE ../../install/common/12_retraining_forecast.sql@
