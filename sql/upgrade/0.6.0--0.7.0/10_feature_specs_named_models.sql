-- ==== feature specs: named models ====
-- A named model may be trained through a feature spec; dperm.predict and
-- dperm.encode then take the raw row.
ALTER TABLE dperm.models ADD COLUMN feature_spec jsonb;
COMMENT ON COLUMN dperm.models.feature_spec IS 'the feature spec the version was trained through (NULL: features names a float8[] column)';
@INCLUDE ../../install/common/13_train_model.sql@
