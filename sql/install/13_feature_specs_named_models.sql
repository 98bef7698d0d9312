-- ==== feature specs: named models ====
-- A named model may be trained through a feature spec; dperm.predict and
-- dperm.encode then take the raw row.
@INCLUDE common/13_train_model.sql@
CREATE FUNCTION dperm.evaluate(name text, relation regclass, options jsonb)
  RETURNS jsonb AS 'MODULE_PATHNAME', 'dperm_evaluate' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.evaluate(text, regclass, jsonb) IS 'dperm.evaluate of a version trained through a feature spec: its stored spec and label read the relation''s raw columns';
