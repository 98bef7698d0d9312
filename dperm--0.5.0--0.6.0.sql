-- dperm 0.5.0 -> 0.6.0. Each section below belongs to one change; keep them
-- independent (every statement must also run on a fresh 0.1.0 -> 0.6.0 chain).
\echo Use "ALTER EXTENSION dperm UPDATE TO '0.6.0'" to load this file. \quit

-- ==== streaming training (issue 12) ====

-- The in-memory aggregates stay in the leader: PARALLEL RESTRICTED, and no
-- combine function. Shipping every buffered row from the workers to the
-- leader made parallel plans slower than serial ones (1.3-1.8x) and failed
-- once a serialised state passed 1 GB; the buffer is now capped by
-- dperm.max_buffer, and larger relations train with dperm.train's
-- streaming mode, whose per-pass aggregates are the parallel ones.
CREATE OR REPLACE AGGREGATE dp_logreg(features float8[], label boolean, options jsonb) (
  SFUNC = dperm.logreg_bool_transition, STYPE = internal, FINALFUNC = dperm.final,
  PARALLEL = RESTRICTED);
CREATE OR REPLACE AGGREGATE dp_logreg(features float8[], label float8, options jsonb) (
  SFUNC = dperm.logreg_float_transition, STYPE = internal, FINALFUNC = dperm.final,
  PARALLEL = RESTRICTED);
CREATE OR REPLACE AGGREGATE dp_huber(features float8[], target float8, options jsonb) (
  SFUNC = dperm.huber_transition, STYPE = internal, FINALFUNC = dperm.final,
  PARALLEL = RESTRICTED);
CREATE OR REPLACE AGGREGATE dp_softmax(features float8[], class int, options jsonb) (
  SFUNC = dperm.softmax_transition, STYPE = internal, FINALFUNC = dperm.final,
  PARALLEL = RESTRICTED);
DROP FUNCTION dperm.combine(internal, internal);
DROP FUNCTION dperm.serialize(internal);
DROP FUNCTION dperm.deserialize(bytea, internal);

-- Per-pass aggregates of dperm.train's streaming mode: for a model w and a
-- spec (loss, d, fit_intercept, feature_bound, huber_delta, classes) given
-- as constants, one scan returns {rows, loss sum, gradient sum...} over the
-- rows clipped and labelled as dperm.train's in-memory path stores them.
-- A plain float8[] state with an element-wise combine: parallel workers
-- share each pass. They refuse to run outside dperm.train's passes (the
-- superuser-only setting dperm.internal_pass): exact gradients are not
-- private.
CREATE FUNCTION dperm.pass_logreg_bool_step(float8[], float8[], boolean, float8[], float8[])
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_pass_logreg_bool_step'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION dperm.pass_logreg_float_step(float8[], float8[], float8, float8[], float8[])
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_pass_logreg_float_step'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION dperm.pass_huber_step(float8[], float8[], float8, float8[], float8[])
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_pass_huber_step'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION dperm.pass_softmax_step(float8[], float8[], int, float8[], float8[])
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_pass_softmax_step'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION dperm.pass_combine(float8[], float8[]) RETURNS float8[]
  AS 'MODULE_PATHNAME', 'dperm_pass_combine' LANGUAGE C STRICT PARALLEL SAFE;
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

-- dperm.train reads any relation the caller may read (protected ones as
-- their owner), and takes a mode: 'auto' (the 5-argument form: stream when
-- the rows would pass dperm.max_buffer), 'in_memory' or 'streaming'.
CREATE FUNCTION dperm.train(relation regclass, features text, label text, loss text, options jsonb,
                            mode text)
  RETURNS dp_model AS 'MODULE_PATHNAME', 'dperm_train' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.train(regclass, text, text, text, jsonb) IS 'a private model from a relation the caller may read, or a protected one they are an analyst of (columns by name; loss logistic, huber or softmax), charged to it; streams when the rows pass dperm.max_buffer';
COMMENT ON FUNCTION dperm.train(regclass, text, text, text, jsonb, text) IS 'dperm.train with a mode: auto, in_memory or streaming';
