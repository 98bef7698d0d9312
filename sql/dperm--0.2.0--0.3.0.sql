-- dperm 0.2.0 -> 0.3.0: protected relations.
\echo Use "ALTER EXTENSION dperm UPDATE TO '0.3.0'" to load this file. \quit

-- A protected relation: its owner revoked every direct privilege (analysts
-- cannot SELECT it) and lets `analysts` (NULL: every role) train on it
-- through dperm.train, which charges it.
CREATE TABLE dperm.protected (
  relation regclass PRIMARY KEY,
  analysts regrole[],
  protected_by name NOT NULL,
  protected_at timestamptz NOT NULL DEFAULT now());
COMMENT ON TABLE dperm.protected IS 'relations readable only through dperm.train';
SELECT pg_catalog.pg_extension_config_dump('dperm.protected', '');
GRANT SELECT ON dperm.protected TO PUBLIC;

CREATE FUNCTION dperm.protect(relation regclass, analysts regrole[] DEFAULT NULL)
  RETURNS void AS 'MODULE_PATHNAME', 'dperm_protect' LANGUAGE C CALLED ON NULL INPUT VOLATILE;
COMMENT ON FUNCTION dperm.protect IS 'the owner revokes direct access to a relation; analysts then train through dperm.train';

CREATE FUNCTION dperm.train(relation regclass, features text, label text, loss text, options jsonb)
  RETURNS dp_model AS 'MODULE_PATHNAME', 'dperm_train' LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION dperm.train IS 'a private model from a protected relation (columns by name; loss logistic or huber), charged to it';
