-- ==== feature specs: labels ====
-- A spec may mark one column "label": true; dperm.train reads the label
-- through it, and dperm.evaluate(name, relation, options) reads a spec model's
-- raw columns.
CREATE FUNCTION dperm.encode_label(spec jsonb, val text) RETURNS float8
  AS 'MODULE_PATHNAME', 'dperm_encode_label' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.encode_label(jsonb, text) IS 'a label value read through the column a feature spec marks "label": true (values: its index; boolean: 1 or 0; bounds: scaled to [-1, 1]); NULL outside the domain';
CREATE FUNCTION dperm.evaluate(name text, relation regclass, options jsonb)
  RETURNS jsonb AS 'MODULE_PATHNAME', 'dperm_evaluate' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.evaluate(text, regclass, jsonb) IS 'dperm.evaluate of a version trained through a feature spec: its stored spec and label read the relation''s raw columns';

-- What a release that is (epsilon, delta)-DP per privacy unit costs a budget
-- that protects rows (group privacy over the two units a replaced row
-- touches: unit_level.hpp); the ledger writer charges the same.
CREATE FUNCTION dperm.unit_release_at_row(epsilon float8, delta float8,
                                          OUT epsilon float8, OUT delta float8, OUT rdp float8[])
  AS 'MODULE_PATHNAME', 'dperm_unit_release_at_row'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.unit_release_at_row(float8, float8) IS 'what a release that is (epsilon, delta)-DP per privacy unit (its count and model, as the ledger charges them) costs a budget that protects rows: (2 epsilon, delta (1 + e^epsilon)), and the pure curve of 2 epsilon when delta = 0';
