-- ---------------------------------------------------------------- dp_model

CREATE TYPE dp_model;
CREATE FUNCTION dp_model_in(cstring) RETURNS dp_model
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_model_in(cstring) IS 'the text input of dp_model: a model''s JSON, checked field by field';
CREATE FUNCTION dp_model_out(dp_model) RETURNS cstring
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_model_out(dp_model) IS 'the text output of dp_model: the model''s JSON';
CREATE FUNCTION dp_model_recv(internal) RETURNS dp_model
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_model_recv(internal) IS 'the binary input of dp_model, checked field by field';
CREATE FUNCTION dp_model_send(dp_model) RETURNS bytea
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_model_send(dp_model) IS 'the binary output of dp_model';
CREATE TYPE dp_model (
  INPUT = dp_model_in, OUTPUT = dp_model_out,
  RECEIVE = dp_model_recv, SEND = dp_model_send,
  INTERNALLENGTH = VARIABLE, ALIGNMENT = double, STORAGE = extended);
COMMENT ON TYPE dp_model IS 'a released differentially private model; its text form is JSON';

CREATE CAST (dp_model AS jsonb) WITH INOUT AS ASSIGNMENT;
CREATE CAST (jsonb AS dp_model) WITH INOUT;

-- Probability (logistic) or prediction (Huber), with training's clipping.
CREATE FUNCTION dp_predict(model dp_model, features float8[]) RETURNS float8
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_predict(dp_model, float8[]) IS 'the probability (logistic) or prediction (Huber) of a model for a feature vector, with training''s clipping (a NULL element counts as 0, as in training); an error for softmax models';

@INCLUDE common/02_coefficients.sql@

-- The most likely class: argmax of the class probabilities (binary logistic
-- models: 1 when p > 0.5, else 0), with training's clipping.
CREATE FUNCTION dp_predict_class(model dp_model, features float8[]) RETURNS int
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_predict_class IS 'the most likely class of a softmax or logistic model (a NULL feature element counts as 0, as in training)';

-- The class probabilities, class 0 first (binary logistic models: {1 - p, p}).
CREATE FUNCTION dp_predict_proba(model dp_model, features float8[]) RETURNS float8[]
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_predict_proba IS 'the class probabilities of a softmax or logistic model (a NULL feature element counts as 0, as in training)';

-- The plan of a release, without reading any data.
CREATE FUNCTION dp_explain(loss text, n bigint, d int, options jsonb) RETURNS jsonb
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_explain(text, bigint, int, jsonb) IS 'the plan of a release (algorithm, iterations, noise, accounting, memory) for a loss, n, d and options, without reading any data';
