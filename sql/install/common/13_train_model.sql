CREATE FUNCTION dperm.train_model(name text, relation regclass, features jsonb, label text,
                                  loss text, options jsonb)
  RETURNS int AS 'MODULE_PATHNAME', 'dperm_train_model' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.train_model(text, regclass, jsonb, text, text, jsonb) IS 'trains a new version of the caller''s own named model on raw columns through a feature spec; dperm.predict(name, row) and dperm.encode(name, row) apply it';
CREATE FUNCTION dperm.predict(name text, "row" record, version int DEFAULT NULL)
  RETURNS float8 AS 'MODULE_PATHNAME', 'dperm_predict' LANGUAGE C STABLE;
COMMENT ON FUNCTION dperm.predict(text, record, int) IS 'prediction of a named model trained through a feature spec, for a raw row of its relation (the spec''s columns by name)';
CREATE FUNCTION dperm.encode(name text, "row" record, version int DEFAULT NULL)
  RETURNS float8[] AS 'MODULE_PATHNAME', 'dperm_encode' LANGUAGE C STABLE;
COMMENT ON FUNCTION dperm.encode(text, record, int) IS 'the float8[] a named model''s feature spec makes of a raw row (what training and dperm.predict use)';
