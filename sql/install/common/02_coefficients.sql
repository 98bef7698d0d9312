-- One row per coefficient: intercept first, then x1.. or the feature names;
-- softmax models list class 0's rows, then class 1's, ... A model trained
-- through a feature spec is read per unit of each raw column (scale 'raw',
-- the default) or as released on the spec's encoding ('encoded'), with the
-- model's noise scale mapped like each coefficient. Post-processing: no charge.
CREATE FUNCTION dp_coefficients(model dp_model, scale text DEFAULT 'raw', OUT term text,
                                OUT coefficient float8, OUT class int, OUT noise_scale float8)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE ROWS 50;
COMMENT ON FUNCTION dp_coefficients(dp_model, text) IS 'one row per coefficient: intercept, then x1 ... or the feature names; a model trained through a feature spec per unit of each raw column (scale => ''raw'', the default: bounds columns unscaled, the intercept shifted to match; one-hot levels by name) or on the encoding (''encoded''), in the spec''s order, each with the model''s noise scale mapped the same way; softmax models list class 0''s rows, then class 1''s';
