@INCLUDE common/10_encode_values.sql@
CREATE FUNCTION dperm.encode_label(spec jsonb, val text) RETURNS float8
  AS 'MODULE_PATHNAME', 'dperm_encode_label' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.encode_label(jsonb, text) IS 'a label value read through the column a feature spec marks "label": true (values: its index; boolean: 1 or 0; bounds: scaled to [-1, 1]); NULL outside the domain';
