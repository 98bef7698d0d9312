-- ==== budgets follow the data ====
@INCLUDE common/08_retired_budgets.sql@
-- As private as dperm.budgets: a retired budget's row (what every role's
-- releases had spent) shows to members of pg_read_all_stats, to roles with
-- the privileges of the role that set or retired it, and, while the
-- relation exists, to roles dperm.relation_visible admits.
ALTER TABLE dperm.retired_budgets ENABLE ROW LEVEL SECURITY;
CREATE POLICY retired_budgets_visible ON dperm.retired_budgets FOR SELECT USING (
  pg_catalog.pg_has_role('pg_read_all_stats', 'MEMBER')
  OR EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
              WHERE r.oid OPERATOR(pg_catalog.=) ANY (ARRAY[retired_by::pg_catalog.oid, set_by::pg_catalog.oid])
                AND pg_catalog.pg_has_role(r.oid, 'USAGE'))
  OR (EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) relation)
      AND dperm.relation_visible(relation::pg_catalog.regclass)));

@INCLUDE common/08_lineage.sql@

-- dperm.train reads any relation the caller may read (protected ones as
-- their owner), and takes a mode: 'auto' (the 5-argument form: stream when
-- the rows would pass dperm.max_buffer), 'in_memory' or 'streaming'.
CREATE FUNCTION dperm.train(relation regclass, features text, label text, loss text, options jsonb)
  RETURNS dp_model AS 'MODULE_PATHNAME', 'dperm_train' LANGUAGE C STRICT VOLATILE;
CREATE FUNCTION dperm.train(relation regclass, features text, label text, loss text, options jsonb,
                            mode text)
  RETURNS dp_model AS 'MODULE_PATHNAME', 'dperm_train' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.train(regclass, text, text, text, jsonb) IS 'a private model from a relation the caller may read, or a protected one they are an analyst of (columns by name; loss @LOSS_NAMES@), charged to it; streams when the rows pass dperm.max_buffer';
COMMENT ON FUNCTION dperm.train(regclass, text, text, text, jsonb, text) IS 'dperm.train with a mode: auto, in_memory or streaming';
