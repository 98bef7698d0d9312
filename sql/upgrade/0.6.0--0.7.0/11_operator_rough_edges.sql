-- ==== operator rough edges ====
-- budget_status under rdp accounting: epsilon at the delta budget, delta
-- the releases without a curve took (dperm.budget_spent, ComposeTotals).
COMMENT ON COLUMN dperm.budget_status.epsilon_spent IS 'the composed epsilon of the releases; under rdp accounting at the whole delta budget (the releases are (epsilon_spent, delta_budget)-DP)';
COMMENT ON COLUMN dperm.budget_status.delta_spent IS 'under basic accounting the summed delta; under rdp the delta the releases without an RDP curve took (releases with a curve take none: it is converted at what is left)';
COMMENT ON COLUMN dperm.budget_status.delta_remaining IS 'the delta later releases may still take (under rdp: releases without a curve; a release with a curve needs none)';
-- Scoring imputes a NULL feature element as 0, as training does (documented).
COMMENT ON FUNCTION dp_predict(dp_model, float8[]) IS 'the probability (logistic) or prediction (Huber) of a model for a feature vector, with training''s clipping (a NULL element counts as 0, as in training); an error for softmax models';
COMMENT ON FUNCTION dp_predict_class(dp_model, float8[]) IS 'the most likely class of a softmax or logistic model (a NULL feature element counts as 0, as in training)';
COMMENT ON FUNCTION dp_predict_proba(dp_model, float8[]) IS 'the class probabilities of a softmax or logistic model (a NULL feature element counts as 0, as in training)';
COMMENT ON FUNCTION dperm.predict(text, float8[], int) IS 'prediction of a named model (latest trained version, or a pinned one): probability, Huber prediction or softmax class (a NULL feature element counts as 0, as in training)';
-- dperm.cron_next_run refuses an invalid schedule (22023) instead of NULL.
CREATE OR REPLACE FUNCTION dperm.cron_next_run(cron_schedule text, after timestamptz, k bigint DEFAULT 1)
  RETURNS timestamptz AS 'MODULE_PATHNAME', 'dperm_cron_next_run_checked'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.cron_next_run IS 'the k-th run of a cron schedule after a time (UTC, as pg_cron 1.4); NULL when a valid schedule cannot be forecast (@reboot, N seconds) or never runs; 22023 for an invalid schedule';
