-- ---------------------------------------------------------------- aggregates

CREATE FUNCTION dperm.logreg_bool_transition(internal, float8[], boolean, jsonb)
  RETURNS internal AS 'MODULE_PATHNAME', 'dperm_logreg_bool_transition'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.logreg_bool_transition(internal, float8[], boolean, jsonb) IS 'internal: dp_logreg''s transition (boolean labels); buffers one clipped row';
CREATE FUNCTION dperm.logreg_float_transition(internal, float8[], float8, jsonb)
  RETURNS internal AS 'MODULE_PATHNAME', 'dperm_logreg_float_transition'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.logreg_float_transition(internal, float8[], float8, jsonb) IS 'internal: dp_logreg''s transition (float8 labels); buffers one clipped row';
CREATE FUNCTION dperm.huber_transition(internal, float8[], float8, jsonb)
  RETURNS internal AS 'MODULE_PATHNAME', 'dperm_huber_transition'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.huber_transition(internal, float8[], float8, jsonb) IS 'internal: dp_huber''s transition; buffers one clipped row';
CREATE FUNCTION dperm.softmax_transition(internal, float8[], int, jsonb)
  RETURNS internal AS 'MODULE_PATHNAME', 'dperm_softmax_transition'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.softmax_transition(internal, float8[], int, jsonb) IS 'internal: dp_softmax''s transition; buffers one clipped row';
-- The final function charges the ledger (through a background worker) and
-- trains: it is volatile, and runs in the leader only.
CREATE FUNCTION dperm.final(internal) RETURNS dp_model
  AS 'MODULE_PATHNAME', 'dperm_final' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.final(internal) IS 'internal: the training aggregates'' final function; charges the ledger, then trains';

-- The in-memory aggregates stay in the leader: PARALLEL RESTRICTED, and no
-- combine function (shipping buffered rows to the leader made parallel plans
-- slower than serial ones). Their buffer is capped by dperm.max_buffer;
-- larger relations train with dperm.train's streaming mode, whose per-pass
-- aggregates are the parallel ones. Rows whose class is NULL or outside
-- 0 .. K-1 (K = the classes option) are skipped like NULL rows.
CREATE AGGREGATE dp_logreg(features float8[], label boolean, options jsonb) (
  SFUNC = dperm.logreg_bool_transition, STYPE = internal, FINALFUNC = dperm.final,
  PARALLEL = RESTRICTED);
CREATE AGGREGATE dp_logreg(features float8[], label float8, options jsonb) (
  SFUNC = dperm.logreg_float_transition, STYPE = internal, FINALFUNC = dperm.final,
  PARALLEL = RESTRICTED);
CREATE AGGREGATE dp_huber(features float8[], target float8, options jsonb) (
  SFUNC = dperm.huber_transition, STYPE = internal, FINALFUNC = dperm.final,
  PARALLEL = RESTRICTED);
CREATE AGGREGATE dp_softmax(features float8[], class int, options jsonb) (
  SFUNC = dperm.softmax_transition, STYPE = internal, FINALFUNC = dperm.final,
  PARALLEL = RESTRICTED);
COMMENT ON AGGREGATE dp_logreg(float8[], boolean, jsonb) IS 'differentially private logistic regression';
COMMENT ON AGGREGATE dp_logreg(float8[], float8, jsonb) IS 'differentially private logistic regression (label > 0 is positive)';
COMMENT ON AGGREGATE dp_huber(float8[], float8, jsonb) IS 'differentially private Huber regression';
COMMENT ON AGGREGATE dp_softmax(float8[], int, jsonb) IS 'differentially private multinomial (softmax) logistic regression over classes 0 .. K-1';

-- Per-pass aggregates of dperm.train's streaming mode: for a model w and a
-- spec (loss, d, fit_intercept, feature_bound, huber_delta, classes,
-- target_bound) given
-- as constants, one scan returns {rows, loss sum, gradient sum...} over the
-- rows clipped and labelled as dperm.train's in-memory path stores them.
-- A plain float8[] state with an element-wise combine: parallel workers
-- share each pass. They refuse to run outside dperm.train's passes (the
-- superuser-only setting dperm.internal_pass): exact gradients are not
-- private.
CREATE FUNCTION dperm.pass_logreg_bool_step(float8[], float8[], boolean, float8[], float8[])
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_pass_logreg_bool_step'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.pass_logreg_bool_step(float8[], float8[], boolean, float8[], float8[]) IS 'internal: a streaming pass''s transition (logistic, boolean labels); only inside dperm.train';
CREATE FUNCTION dperm.pass_logreg_float_step(float8[], float8[], float8, float8[], float8[])
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_pass_logreg_float_step'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.pass_logreg_float_step(float8[], float8[], float8, float8[], float8[]) IS 'internal: a streaming pass''s transition (logistic, float8 labels); only inside dperm.train';
CREATE FUNCTION dperm.pass_huber_step(float8[], float8[], float8, float8[], float8[])
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_pass_huber_step'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.pass_huber_step(float8[], float8[], float8, float8[], float8[]) IS 'internal: a streaming pass''s transition (Huber); only inside dperm.train';
CREATE FUNCTION dperm.pass_softmax_step(float8[], float8[], int, float8[], float8[])
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_pass_softmax_step'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.pass_softmax_step(float8[], float8[], int, float8[], float8[]) IS 'internal: a streaming pass''s transition (softmax); only inside dperm.train';
CREATE FUNCTION dperm.pass_combine(float8[], float8[]) RETURNS float8[]
  AS 'MODULE_PATHNAME', 'dperm_pass_combine' LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dperm.pass_combine(float8[], float8[]) IS 'internal: adds two streaming pass states element by element (parallel workers, Citus shards)';
CREATE AGGREGATE dperm.pass_logreg(features float8[], label boolean, w float8[], spec float8[]) (
  SFUNC = dperm.pass_logreg_bool_step, STYPE = float8[], INITCOND = '{}',
  COMBINEFUNC = dperm.pass_combine, PARALLEL = SAFE);
CREATE AGGREGATE dperm.pass_logreg(features float8[], label float8, w float8[], spec float8[]) (
  SFUNC = dperm.pass_logreg_float_step, STYPE = float8[], INITCOND = '{}',
  COMBINEFUNC = dperm.pass_combine, PARALLEL = SAFE);
CREATE AGGREGATE dperm.pass_huber(features float8[], target float8, w float8[], spec float8[]) (
  SFUNC = dperm.pass_huber_step, STYPE = float8[], INITCOND = '{}',
  COMBINEFUNC = dperm.pass_combine, PARALLEL = SAFE);
CREATE AGGREGATE dperm.pass_softmax(features float8[], class int, w float8[], spec float8[]) (
  SFUNC = dperm.pass_softmax_step, STYPE = float8[], INITCOND = '{}',
  COMBINEFUNC = dperm.pass_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE dperm.pass_logreg(float8[], boolean, float8[], float8[]) IS 'dperm.train internal: one streaming pass (rows, loss sum, gradient sum)';
COMMENT ON AGGREGATE dperm.pass_logreg(float8[], float8, float8[], float8[]) IS 'dperm.train internal: one streaming pass (rows, loss sum, gradient sum)';
COMMENT ON AGGREGATE dperm.pass_huber(float8[], float8, float8[], float8[]) IS 'dperm.train internal: one streaming pass (rows, loss sum, gradient sum)';
COMMENT ON AGGREGATE dperm.pass_softmax(float8[], int, float8[], float8[]) IS 'dperm.train internal: one streaming pass (rows, loss sum, gradient sum)';
