-- dperm 0.6.0 -> 0.7.0: the guarantee at the database boundary. Each section
-- below belongs to one change; keep them independent (every statement must
-- also run on a fresh 0.1.0 -> 0.7.0 chain). dperm--0.7.0.sql is the complete
-- script of this version (CREATE EXTENSION): what a section adds here goes
-- there too; test/upgrade.sh fails, naming the object, when the two catalogs
-- differ.
\echo Use "ALTER EXTENSION dperm UPDATE TO '0.7.0'" to load this file. \quit

-- ==== declared dimension ====
-- dp_options takes `dimension`, the public d of the features: a release
-- charged to a budgeted or protected relation never reads d from a row.
DROP FUNCTION dp_options(float8, float8, text, float8, float8, boolean, float8, float8, float8,
                         bigint, float8, bigint, float8, text, text, text, bigint, text[], int,
                         float8, text);
DROP FUNCTION dp_options(text, float8, float8, text, float8, boolean, float8, float8, float8,
                         bigint, float8, bigint, float8, text, text, text, bigint, text[], int,
                         float8, text);
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
    classes int DEFAULT NULL,
    target_bound float8 DEFAULT NULL,
    intercept text DEFAULT NULL,
    dimension int DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN dperm.check_options(jsonb_strip_nulls(jsonb_build_object(
    'epsilon', epsilon, 'delta', delta, 'algorithm', algorithm, 'l2', l2,
    'l1', l1, 'fit_intercept', fit_intercept, 'feature_bound', feature_bound,
    'huber_delta', huber_delta, 'radius', radius, 'iterations', iterations,
    'step_size', step_size, 'batch_size', batch_size, 'ls_sigma', ls_sigma,
    'accountant', accountant, 'neighbors', neighbors, 'dataset', dataset,
    'seed', seed, 'feature_names', feature_names, 'classes', classes,
    'target_bound', target_bound, 'intercept', intercept,
    'dimension', dimension)));
COMMENT ON FUNCTION dp_options IS 'options of a private release (epsilon is required)';

-- dp_options with l2 as text, for l2 => 'auto' (issue 15 item 3: dperm picks
-- l2 from a public grid privately). l2 comes first and has no default, so
-- dp_options(epsilon => 1, l2 => 'auto') resolves here (PostgreSQL prefers
-- the string category for an unknown literal) while l2 => 0.01 and calls
-- without l2 resolve to the float8 version. dperm.check_options accepts
-- only 'auto' (22023 otherwise).
CREATE FUNCTION dp_options(
    l2 text,
    epsilon float8,
    delta float8 DEFAULT 0,
    algorithm text DEFAULT NULL,
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
    classes int DEFAULT NULL,
    target_bound float8 DEFAULT NULL,
    intercept text DEFAULT NULL,
    dimension int DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN dperm.check_options(jsonb_strip_nulls(jsonb_build_object(
    'epsilon', epsilon, 'delta', delta, 'algorithm', algorithm, 'l2', l2,
    'l1', l1, 'fit_intercept', fit_intercept, 'feature_bound', feature_bound,
    'huber_delta', huber_delta, 'radius', radius, 'iterations', iterations,
    'step_size', step_size, 'batch_size', batch_size, 'ls_sigma', ls_sigma,
    'accountant', accountant, 'neighbors', neighbors, 'dataset', dataset,
    'seed', seed, 'feature_names', feature_names, 'classes', classes,
    'target_bound', target_bound, 'intercept', intercept,
    'dimension', dimension)));
COMMENT ON FUNCTION dp_options(text, float8, float8, text, float8, boolean, float8, float8, float8,
                               bigint, float8, bigint, float8, text, text, text, bigint, text[],
                               int, float8, text, int)
  IS 'options of a private release with l2 => ''auto'' (l2 chosen privately)';

