-- ==== training on a query ====
-- dperm.train_query (src/pg/release/train_query.cpp): a query is an input
-- with a noisy size (docs/design.md section 4).
CREATE FUNCTION dperm.train_query(query text, features text, label text, loss text, options jsonb)
  RETURNS dp_model AS 'MODULE_PATHNAME', 'dperm_train_query' LANGUAGE C STRICT VOLATILE;
CREATE FUNCTION dperm.train_query(query text, features text, label text, loss text, options jsonb,
                                  mode text)
  RETURNS dp_model AS 'MODULE_PATHNAME', 'dperm_train_query' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.train_query(text, text, text, text, jsonb) IS 'a private model on the rows a SELECT of one budgeted or protected relation gives (filters, per-row expressions that cannot fail, joins to public lookups on a unique key, views that are such SELECTs themselves; features and label name its output columns); its size released noisily (a tenth of epsilon, less with the option units_estimate), charged whole to the relation before anything is read';
COMMENT ON FUNCTION dperm.train_query(text, text, text, text, jsonb, text) IS 'dperm.train_query with a mode: auto, in_memory or streaming';

-- dperm.train_query_groups (src/pg/release/train_query_groups.cpp): one
-- model per key of a declared public domain, charged once (parallel
-- composition; docs/design.md section 4, "per-group models").
CREATE FUNCTION dperm.train_query_groups(query text, features text, label text, loss text,
                                         options jsonb, group_by text, groups jsonb)
  RETURNS TABLE(group_key text, model dp_model)
  AS 'MODULE_PATHNAME', 'dperm_train_query_groups' LANGUAGE C STRICT VOLATILE ROWS 10;
CREATE FUNCTION dperm.train_query_groups(query text, features text, label text, loss text,
                                         options jsonb, group_by text, groups jsonb, mode text)
  RETURNS TABLE(group_key text, model dp_model)
  AS 'MODULE_PATHNAME', 'dperm_train_query_groups' LANGUAGE C STRICT VOLATILE ROWS 10;
COMMENT ON FUNCTION dperm.train_query_groups(text, text, text, text, jsonb, text, jsonb) IS 'one private model per key of a declared domain (groups: a JSON array of at most 1000 distinct keys) of the query''s output column group_by, as dperm.train_query on the rows with that key (NULL where its noisy size is 0); the groups are disjoint, so the statement is charged one release''s epsilon (parallel composition), in one ledger row; refused on a relation with a privacy unit';
COMMENT ON FUNCTION dperm.train_query_groups(text, text, text, text, jsonb, text, jsonb, text) IS 'dperm.train_query_groups with a mode: auto, in_memory or streaming';

-- dperm.explain_query (src/pg/release/explain_query.cpp): dp_explain for a
-- query -- its public shape and the release's plan at a stated n, after the
-- release's own checks; no row read, nothing charged.
CREATE FUNCTION dperm.explain_query(query text, features text, label text, loss text,
                                    options jsonb, n_estimate bigint)
  RETURNS jsonb AS 'MODULE_PATHNAME', 'dperm_explain_query' LANGUAGE C STRICT STABLE;
CREATE FUNCTION dperm.explain_query(query text, features text, label text, loss text,
                                    options jsonb, n_estimate bigint, group_by text, groups jsonb)
  RETURNS jsonb AS 'MODULE_PATHNAME', 'dperm_explain_query' LANGUAGE C STRICT STABLE;
COMMENT ON FUNCTION dperm.explain_query(text, text, text, text, jsonb, bigint) IS 'what dperm.train_query would do with a query, without reading a row or charging anything: its checks (refused as the release would refuse it before its charge), the private relation and the relations charged, the lookups, the privacy unit, the canonical query, the share of epsilon of the noisy count and its noise scale, and the release''s plan (dp_explain) at n_estimate, the analyst''s stated number of units';
COMMENT ON FUNCTION dperm.explain_query(text, text, text, text, jsonb, bigint, text, jsonb) IS 'dperm.explain_query for dperm.train_query_groups: the groups'' checks too, n_estimate per group';

-- Total float8 functions (src/pg/types/total_functions.cpp): NULL where the
-- built-in would raise, so a query's input may use them (LEAKPROOF: they
-- cannot fail on a value).
CREATE FUNCTION dperm.div(x float8, y float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dperm_div' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION dperm.ln(x float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dperm_ln' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION dperm.log10(x float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dperm_log10' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION dperm.sqrt(x float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dperm_sqrt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION dperm.plus(x float8, y float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dperm_plus' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION dperm.minus(x float8, y float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dperm_minus' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION dperm.times(x float8, y float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dperm_times' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION dperm.div(float8, float8) IS 'x / y, or NULL where float8 division would raise (division by zero, a finite quotient out of range)';
COMMENT ON FUNCTION dperm.ln(float8) IS 'the natural logarithm, or NULL for x <= 0 (where ln raises)';
COMMENT ON FUNCTION dperm.log10(float8) IS 'the base-10 logarithm, or NULL for x <= 0 (where log raises)';
COMMENT ON FUNCTION dperm.sqrt(float8) IS 'the square root, or NULL for x < 0 (where sqrt raises)';
COMMENT ON FUNCTION dperm.plus(float8, float8) IS 'x + y, or NULL where float8 addition would raise (an infinite sum of finite numbers)';
COMMENT ON FUNCTION dperm.minus(float8, float8) IS 'x - y, or NULL where float8 subtraction would raise';
COMMENT ON FUNCTION dperm.times(float8, float8) IS 'x * y, or NULL where float8 multiplication would raise (overflow, or underflow to zero)';

-- dperm.evaluate_query (src/pg/models/evaluate_query.cpp): dperm.evaluate on
-- the rows of a query (dperm.train_query's rules, checked before the
-- charge); the number of rows is released noisily with the metric sums.
CREATE FUNCTION dperm.evaluate_query(name text, query text, features text, label text,
                                     options jsonb)
  RETURNS jsonb AS 'MODULE_PATHNAME', 'dperm_evaluate_query' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.evaluate_query(text, text, text, text, jsonb) IS 'a private estimate of a named model''s accuracy and log-loss (classifiers) or RMSE (Huber) on the rows a SELECT of one budgeted or protected relation gives (dperm.train_query''s rules); the metric sums and the number of rows (each unit bounded to max_rows_per_unit rows) released together with discrete Laplace noise at epsilon, one charge, the metrics divided by the noisy count';

-- dperm.evaluate_query_groups (src/pg/models/evaluate_query_groups.cpp):
-- each group's model (dperm.train_query_groups' output, as a JSON object
-- from key to model) evaluated on its group's rows, charged once (parallel
-- composition).
CREATE FUNCTION dperm.evaluate_query_groups(query text, features text, label text,
                                            group_by text, models jsonb, options jsonb)
  RETURNS TABLE(group_key text, evaluation jsonb)
  AS 'MODULE_PATHNAME', 'dperm_evaluate_query_groups' LANGUAGE C STRICT VOLATILE ROWS 10;
COMMENT ON FUNCTION dperm.evaluate_query_groups(text, text, text, text, jsonb, jsonb) IS 'one private evaluation per group of the query''s output column group_by: models is a JSON object from each declared key to its model (jsonb_object_agg(group_key, model::jsonb) of dperm.train_query_groups; null: not evaluated); the metric sums and the number of rows of each group released as dperm.evaluate_query does; the groups are disjoint, so the statement is charged one evaluation''s epsilon (parallel composition), in one ledger row; refused on a relation with a privacy unit';
