-- ==== coefficients in the data's units ====
-- dp_coefficients gains scale (raw columns' units for a model trained
-- through a feature spec, or the encoding) and noise_scale.
DROP FUNCTION dp_coefficients(dp_model);
@INCLUDE ../../install/common/02_coefficients.sql@
