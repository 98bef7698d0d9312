-- dperm.explain (src/pg/release/explain_train.cpp): dp_explain for the call
-- as the analyst writes it (relation, feature spec or float8[] column,
-- label, loss, options), at a stated n or the last count dperm released;
-- no row read, nothing charged.
CREATE FUNCTION dperm.explain(relation regclass, features jsonb, label text, loss text,
                              options jsonb, n_estimate bigint DEFAULT NULL,
                              "full" boolean DEFAULT false)
  RETURNS jsonb AS 'MODULE_PATHNAME', 'dperm_explain' LANGUAGE C STABLE;
CREATE FUNCTION dperm.explain(relation regclass, features text, label text, loss text,
                              options jsonb, n_estimate bigint DEFAULT NULL,
                              "full" boolean DEFAULT false)
  RETURNS jsonb AS 'MODULE_PATHNAME', 'dperm_explain' LANGUAGE C STABLE;
COMMENT ON FUNCTION dperm.explain(regclass, jsonb, text, text, jsonb, bigint, boolean) IS 'what dperm.train would do with a relation and a feature spec, without reading a row or charging anything: refused as the release would refuse it before its charge; the algorithm, epsilon and delta as asked with their split (count, offset, decision, model), the noise, the work and what is public, at n_estimate or the last count dperm released of the relation that the caller may see (full => true: the whole plan)';
COMMENT ON FUNCTION dperm.explain(regclass, text, text, text, jsonb, bigint, boolean) IS 'dperm.explain with a float8[] column of features (d from the option dimension)';
