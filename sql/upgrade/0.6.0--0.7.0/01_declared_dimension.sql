-- ==== declared dimension ====
-- dp_options takes `dimension`, the public d of the features: a release
-- charged to a budgeted or protected relation never reads d from a row.
DROP FUNCTION dp_options(float8, float8, text, float8, float8, boolean, float8, float8, float8,
                         bigint, float8, bigint, float8, text, text, text, bigint, text[], int,
                         float8, text);
DROP FUNCTION dp_options(text, float8, float8, text, float8, boolean, float8, float8, float8,
                         bigint, float8, bigint, float8, text, text, text, bigint, text[], int,
                         float8, text);
-- The new dp_options and its l2 => 'auto' overload.
@DP_OPTIONS@
