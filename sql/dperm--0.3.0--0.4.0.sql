-- dperm 0.3.0 -> 0.4.0: multi-class (softmax) models.
\echo Use "ALTER EXTENSION dperm UPDATE TO '0.4.0'" to load this file. \quit

-- ---------------------------------------------------------------- options

-- dp_options gains `classes` (the number of classes K of dp_softmax). A new
-- argument changes the signature: drop and re-create (appended last, so
-- positional calls keep their meaning).
DROP FUNCTION dp_options(float8, float8, text, float8, float8, boolean, float8, float8, float8,
                         bigint, float8, bigint, float8, text, text, text, bigint, text[]);
-- Builds the options of a release with named arguments; NULL means default.
CREATE FUNCTION dp_options(
    epsilon float8,
    delta float8 DEFAULT 0,
    algorithm text DEFAULT NULL,
    l2 float8 DEFAULT NULL,
    l1 float8 DEFAULT NULL,
    fit_intercept boolean DEFAULT NULL,
    feature_bound float8 DEFAULT NULL,
    huber_delta float8 DEFAULT NULL,
    radius float8 DEFAULT NULL,
    iterations bigint DEFAULT NULL,
    step_size float8 DEFAULT NULL,
    batch_size bigint DEFAULT NULL,
    ls_sigma float8 DEFAULT NULL,
    accountant text DEFAULT NULL,
    neighbors text DEFAULT NULL,
    dataset text DEFAULT NULL,
    seed bigint DEFAULT NULL,
    feature_names text[] DEFAULT NULL,
    classes int DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN dperm.check_options(jsonb_strip_nulls(jsonb_build_object(
    'epsilon', epsilon, 'delta', delta, 'algorithm', algorithm, 'l2', l2,
    'l1', l1, 'fit_intercept', fit_intercept, 'feature_bound', feature_bound,
    'huber_delta', huber_delta, 'radius', radius, 'iterations', iterations,
    'step_size', step_size, 'batch_size', batch_size, 'ls_sigma', ls_sigma,
    'accountant', accountant, 'neighbors', neighbors, 'dataset', dataset,
    'seed', seed, 'feature_names', feature_names, 'classes', classes)));
COMMENT ON FUNCTION dp_options IS 'options of a private release (epsilon is required)';

-- ---------------------------------------------------------------- dp_model

-- dp_coefficients gains the class column (NULL for binary models): a new
-- OUT column changes the result type, so drop and re-create.
DROP FUNCTION dp_coefficients(dp_model);
-- One row per coefficient: intercept first, then x1.. or the feature names;
-- softmax models list class 0's rows, then class 1's, ...
CREATE FUNCTION dp_coefficients(model dp_model, OUT term text, OUT coefficient float8, OUT class int)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE ROWS 50;

-- The most likely class: argmax of the class probabilities (binary logistic
-- models: 1 when p > 0.5, else 0), with training's clipping.
CREATE FUNCTION dp_predict_class(model dp_model, features float8[]) RETURNS int
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_predict_class IS 'the most likely class of a softmax or logistic model';

-- The class probabilities, class 0 first (binary logistic models: {1 - p, p}).
CREATE FUNCTION dp_predict_proba(model dp_model, features float8[]) RETURNS float8[]
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dp_predict_proba IS 'the class probabilities of a softmax or logistic model';

-- ---------------------------------------------------------------- aggregate

CREATE FUNCTION dperm.softmax_transition(internal, float8[], int, jsonb)
  RETURNS internal AS 'MODULE_PATHNAME', 'dperm_softmax_transition'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

-- Rows whose class is NULL or outside 0 .. K-1 (K = the classes option) are
-- skipped like NULL rows.
CREATE AGGREGATE dp_softmax(features float8[], class int, options jsonb) (
  SFUNC = dperm.softmax_transition, STYPE = internal,
  FINALFUNC = dperm.final, COMBINEFUNC = dperm.combine,
  SERIALFUNC = dperm.serialize, DESERIALFUNC = dperm.deserialize,
  PARALLEL = SAFE);
COMMENT ON AGGREGATE dp_softmax(float8[], int, jsonb) IS 'differentially private multinomial (softmax) logistic regression over classes 0 .. K-1';

COMMENT ON FUNCTION dperm.train IS 'a private model from a protected relation (columns by name; loss logistic, huber or softmax), charged to it';
