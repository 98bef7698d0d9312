-- ==== scoring at the speed of SQL ====
-- dperm.predict becomes a C function that looks its name up once per
-- statement and decodes the model once (no SET clause: see sql/dperm.sql).
CREATE OR REPLACE FUNCTION dperm.predict(name text, features float8[], version int DEFAULT NULL)
  RETURNS float8 AS 'MODULE_PATHNAME', 'dperm_predict' LANGUAGE C STABLE;
