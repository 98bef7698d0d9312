-- ---------------------------------------------------------------- options

CREATE FUNCTION dperm.check_options(options jsonb) RETURNS jsonb
  AS 'MODULE_PATHNAME', 'dperm_check_options'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.check_options(jsonb) IS 'validates dperm options and returns them';

-- The option table, for docs/sql-reference.md (scripts/gen_sql_reference.py).
CREATE FUNCTION dperm.option_reference()
  RETURNS TABLE(key text, sql_type text, "values" text, "default" text, meaning text)
  AS 'MODULE_PATHNAME', 'dperm_option_reference'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.option_reference() IS 'the option table: every key dp_options and the jsonb options take, its SQL type, its values, its default and its meaning';

-- dp_options(epsilon, delta, algorithm, l2, ...) builds the options of a
-- release with named arguments (NULL means default); its overload takes
-- l2 => 'auto'.
@DP_OPTIONS@
