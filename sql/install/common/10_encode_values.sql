-- ==== feature specs ====
-- Raw columns with public domains (src/core/model/feature_spec.cpp): numbers
-- scaled by declared bounds and clipped, categories one-hot over declared
-- values, booleans 0/1; the same encoder in the training scan and at
-- prediction.
CREATE FUNCTION dperm.encode_values(spec jsonb, vals text[]) RETURNS float8[]
  AS 'MODULE_PATHNAME', 'dperm_encode_values' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.encode_values(jsonb, text[]) IS 'one row encoded by a feature spec: its columns'' values as text, in the spec''s order (NULL for NULL)';
CREATE FUNCTION dperm.train(relation regclass, features jsonb, label text, loss text, options jsonb)
  RETURNS dp_model AS 'MODULE_PATHNAME', 'dperm_train' LANGUAGE C STRICT VOLATILE;
CREATE FUNCTION dperm.train(relation regclass, features jsonb, label text, loss text, options jsonb,
                            mode text)
  RETURNS dp_model AS 'MODULE_PATHNAME', 'dperm_train' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.train(regclass, jsonb, text, text, jsonb) IS 'dperm.train on raw columns through a feature spec (numeric bounds, categorical values, booleans): d, the feature names and the row bound come from the spec';
COMMENT ON FUNCTION dperm.train(regclass, jsonb, text, text, jsonb, text) IS 'dperm.train on raw columns through a feature spec, with a mode';
