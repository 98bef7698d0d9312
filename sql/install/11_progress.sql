-- ---------------------------------------------------------------- progress
-- One row per backend training a release (dperm.train, or dp_logreg,
-- dp_huber and dp_softmax called directly), updated per pass and every
-- 100000 rows read; from the backends' progress slots, which no
-- pg_stat_progress_* view lists (src/pg/release/progress.cpp). Like
-- pg_stat_progress_*, a role sees the rows of backends whose role's
-- privileges it has, and pg_read_all_stats sees every row. relation is
-- named in the database it belongs to (relid elsewhere).
CREATE FUNCTION dperm.progress_info(OUT pid int, OUT datid oid, OUT relid oid, OUT loss text,
                                    OUT mode text, OUT algorithm text, OUT phase text,
                                    OUT pass int, OUT passes_planned int, OUT rows_read bigint,
                                    OUT started_at timestamptz)
  RETURNS SETOF record AS 'MODULE_PATHNAME', 'dperm_progress_info'
  LANGUAGE C VOLATILE PARALLEL RESTRICTED;
CREATE VIEW dperm.progress AS
  SELECT p.pid, p.datid, d.datname, p.relid,
         CASE WHEN d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
              THEN p.relid::pg_catalog.regclass END AS relation,
         p.loss, p.mode, p.algorithm, p.phase, p.pass, p.passes_planned, p.rows_read,
         p.started_at
    FROM dperm.progress_info() p
    LEFT JOIN pg_catalog.pg_database d ON d.oid OPERATOR(pg_catalog.=) p.datid;
GRANT SELECT ON dperm.progress TO PUBLIC;
COMMENT ON FUNCTION dperm.progress_info() IS 'the dperm releases in progress that the caller may see (see the view dperm.progress)';
COMMENT ON VIEW dperm.progress IS 'one row per backend training a dperm release: relation, algorithm, phase, pass of passes_planned, rows read';
