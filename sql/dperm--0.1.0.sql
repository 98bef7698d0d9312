-- dperm 0.1.0: differentially private ERM inside PostgreSQL.
\echo Use "CREATE EXTENSION dperm" to load this file. \quit

CREATE SCHEMA dperm;
COMMENT ON SCHEMA dperm IS 'dperm catalog: privacy budgets and the ledger of releases';

-- ---------------------------------------------------------------- options

CREATE FUNCTION dperm.check_options(options jsonb) RETURNS jsonb
  AS 'MODULE_PATHNAME', 'dperm_check_options'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.check_options(jsonb) IS 'validates dperm options and returns them';

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
    feature_names text[] DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN dperm.check_options(jsonb_strip_nulls(jsonb_build_object(
    'epsilon', epsilon, 'delta', delta, 'algorithm', algorithm, 'l2', l2,
    'l1', l1, 'fit_intercept', fit_intercept, 'feature_bound', feature_bound,
    'huber_delta', huber_delta, 'radius', radius, 'iterations', iterations,
    'step_size', step_size, 'batch_size', batch_size, 'ls_sigma', ls_sigma,
    'accountant', accountant, 'neighbors', neighbors, 'dataset', dataset,
    'seed', seed, 'feature_names', feature_names)));
COMMENT ON FUNCTION dp_options IS 'options of a private release (epsilon is required)';

-- ---------------------------------------------------------------- dp_model

CREATE TYPE dp_model;
CREATE FUNCTION dp_model_in(cstring) RETURNS dp_model
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dp_model_out(dp_model) RETURNS cstring
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dp_model_recv(internal) RETURNS dp_model
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dp_model_send(dp_model) RETURNS bytea
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
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

-- One row per coefficient: intercept first, then x1.. or the feature names.
CREATE FUNCTION dp_coefficients(model dp_model, OUT term text, OUT coefficient float8)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE ROWS 50;

-- The plan of a release, without reading any data.
CREATE FUNCTION dp_explain(loss text, n bigint, d int, options jsonb) RETURNS jsonb
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

-- ---------------------------------------------------------------- aggregates

CREATE FUNCTION dperm.logreg_bool_transition(internal, float8[], boolean, jsonb)
  RETURNS internal AS 'MODULE_PATHNAME', 'dperm_logreg_bool_transition'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION dperm.logreg_float_transition(internal, float8[], float8, jsonb)
  RETURNS internal AS 'MODULE_PATHNAME', 'dperm_logreg_float_transition'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION dperm.huber_transition(internal, float8[], float8, jsonb)
  RETURNS internal AS 'MODULE_PATHNAME', 'dperm_huber_transition'
  LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION dperm.combine(internal, internal) RETURNS internal
  AS 'MODULE_PATHNAME', 'dperm_combine' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION dperm.serialize(internal) RETURNS bytea
  AS 'MODULE_PATHNAME', 'dperm_serialize' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION dperm.deserialize(bytea, internal) RETURNS internal
  AS 'MODULE_PATHNAME', 'dperm_deserialize' LANGUAGE C STRICT PARALLEL SAFE;
-- The final function charges the ledger (through a background worker) and
-- trains: it is volatile, and runs in the leader only.
CREATE FUNCTION dperm.final(internal) RETURNS dp_model
  AS 'MODULE_PATHNAME', 'dperm_final' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE dp_logreg(features float8[], label boolean, options jsonb) (
  SFUNC = dperm.logreg_bool_transition, STYPE = internal,
  FINALFUNC = dperm.final, COMBINEFUNC = dperm.combine,
  SERIALFUNC = dperm.serialize, DESERIALFUNC = dperm.deserialize,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_logreg(features float8[], label float8, options jsonb) (
  SFUNC = dperm.logreg_float_transition, STYPE = internal,
  FINALFUNC = dperm.final, COMBINEFUNC = dperm.combine,
  SERIALFUNC = dperm.serialize, DESERIALFUNC = dperm.deserialize,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_huber(features float8[], target float8, options jsonb) (
  SFUNC = dperm.huber_transition, STYPE = internal,
  FINALFUNC = dperm.final, COMBINEFUNC = dperm.combine,
  SERIALFUNC = dperm.serialize, DESERIALFUNC = dperm.deserialize,
  PARALLEL = SAFE);
COMMENT ON AGGREGATE dp_logreg(float8[], boolean, jsonb) IS 'differentially private logistic regression';
COMMENT ON AGGREGATE dp_logreg(float8[], float8, jsonb) IS 'differentially private logistic regression (label > 0 is positive)';
COMMENT ON AGGREGATE dp_huber(float8[], float8, jsonb) IS 'differentially private Huber regression';

-- ---------------------------------------------------------------- catalog

CREATE TABLE dperm.budgets (
  relation regclass PRIMARY KEY,
  epsilon float8 NOT NULL CHECK (epsilon >= 0 AND epsilon < 'infinity'),
  delta float8 NOT NULL DEFAULT 0 CHECK (delta >= 0 AND delta < 1),
  set_by name NOT NULL DEFAULT current_user,
  set_at timestamptz NOT NULL DEFAULT now());
COMMENT ON TABLE dperm.budgets IS 'total privacy budget of each relation, set by its owner';

CREATE TABLE dperm.ledger (
  id bigserial PRIMARY KEY,
  released_at timestamptz NOT NULL,
  role name NOT NULL,
  relations regclass[] NOT NULL,
  relation_names text[] NOT NULL,
  algorithm text NOT NULL,
  mechanism text NOT NULL,
  loss text NOT NULL,
  neighbors text NOT NULL,
  epsilon float8 NOT NULL,
  delta float8 NOT NULL,
  n bigint NOT NULL,
  d int NOT NULL,
  seeded boolean NOT NULL,
  query text);
CREATE INDEX ledger_relations ON dperm.ledger USING gin (relations);
COMMENT ON TABLE dperm.ledger IS 'one row per release, written before the model is returned';

SELECT pg_catalog.pg_extension_config_dump('dperm.budgets', '');
SELECT pg_catalog.pg_extension_config_dump('dperm.ledger', '');
SELECT pg_catalog.pg_extension_config_dump('dperm.ledger_id_seq', '');

-- Spent and remaining budget per relation (basic composition: sums).
CREATE VIEW dperm.budget_status AS
SELECT b.relation,
       b.epsilon AS epsilon_budget,
       b.delta AS delta_budget,
       coalesce(s.epsilon, 0) AS epsilon_spent,
       coalesce(s.delta, 0) AS delta_spent,
       greatest(b.epsilon - coalesce(s.epsilon, 0), 0) AS epsilon_remaining,
       greatest(b.delta - coalesce(s.delta, 0), 0) AS delta_remaining,
       coalesce(s.releases, 0) AS releases
  FROM dperm.budgets b
  LEFT JOIN LATERAL (
    SELECT sum(l.epsilon) AS epsilon, sum(l.delta) AS delta, count(*) AS releases
      FROM dperm.ledger l WHERE b.relation = ANY (l.relations)) s ON true;
COMMENT ON VIEW dperm.budget_status IS 'spent and remaining privacy budget per relation';

CREATE FUNCTION dperm.set_budget(relation regclass, epsilon float8, delta float8 DEFAULT 0)
  RETURNS void AS 'MODULE_PATHNAME', 'dperm_set_budget' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.set_budget IS 'sets the total privacy budget of a relation (its owner or a superuser)';

-- Everyone reads budgets and the status; each role sees its own ledger rows
-- (members of pg_read_all_stats see all); only the extension writes.
ALTER TABLE dperm.ledger ENABLE ROW LEVEL SECURITY;
CREATE POLICY ledger_own_rows ON dperm.ledger FOR SELECT
  USING (role = current_user OR pg_has_role('pg_read_all_stats', 'MEMBER'));
GRANT USAGE ON SCHEMA dperm TO PUBLIC;
GRANT SELECT ON dperm.budgets, dperm.ledger, dperm.budget_status TO PUBLIC;
REVOKE ALL ON FUNCTION dperm.set_budget FROM PUBLIC;
GRANT EXECUTE ON FUNCTION dperm.set_budget TO PUBLIC;
