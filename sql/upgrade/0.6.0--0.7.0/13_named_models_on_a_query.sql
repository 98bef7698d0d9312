-- ==== named models on a query ====

ALTER TABLE dperm.models ADD COLUMN query text, ADD COLUMN query_canonical text,
  ADD CONSTRAINT models_query CHECK ((query IS NULL) = (query_canonical IS NULL));
COMMENT ON COLUMN dperm.models.query IS 'the query the model trains on, as dperm.train_model_query was given it (NULL: on the relation itself)';
COMMENT ON COLUMN dperm.models.query_canonical IS 'the query with every name qualified, as each run (dperm.retrain, a schedule) validates it again and reads it; relation is the private relation it read when recorded';

-- dperm.train_model_query (src/pg/models/model_query.cpp): a named model on
-- a query (dperm.train_query); retrain validates its canonical text again.
CREATE FUNCTION dperm.train_model_query(name text, query text, features text, label text,
                                        loss text, options jsonb)
  RETURNS int AS 'MODULE_PATHNAME', 'dperm_train_model_query' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.train_model_query IS 'trains a new version of the caller''s own named model on a query (dperm.train_query: its size released noisily); the version stores the query and its canonical text, which dperm.retrain and schedules validate again and re-run; 42710 when the name''s versions have another query, relation, columns or loss';
