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
