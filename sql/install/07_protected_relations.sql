-- ---------------------------------------------------------------- protected relations

-- A protected relation: its owner revoked every direct privilege (analysts
-- cannot SELECT it) and lets `analysts` (NULL: every role) train on it
-- through dperm.train, which charges it.
CREATE TABLE dperm.protected (
  relation regclass PRIMARY KEY,
  analysts regrole[],
  protected_by regrole,
  protected_at timestamptz NOT NULL DEFAULT now());
COMMENT ON TABLE dperm.protected IS 'relations readable only through dperm.train';
SELECT pg_catalog.pg_extension_config_dump('dperm.protected', '');
GRANT SELECT ON dperm.protected TO PUBLIC;

CREATE FUNCTION dperm.protect(relation regclass, analysts regrole[] DEFAULT NULL)
  RETURNS void AS 'MODULE_PATHNAME', 'dperm_protect' LANGUAGE C CALLED ON NULL INPUT VOLATILE;
COMMENT ON FUNCTION dperm.protect IS 'the owner revokes direct access to a relation, its partitions and inheritance children; analysts then train through dperm.train';
