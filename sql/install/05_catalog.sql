-- ---------------------------------------------------------------- catalog

CREATE TABLE dperm.budgets (
  relation regclass PRIMARY KEY,
  epsilon float8 NOT NULL CHECK (epsilon >= 0 AND epsilon < 'infinity'),
  delta float8 NOT NULL DEFAULT 0 CHECK (delta >= 0 AND delta < 1),
  set_by regrole,
  set_at timestamptz NOT NULL DEFAULT now(),
  accounting text NOT NULL DEFAULT 'rdp' CHECK (accounting IN ('rdp', 'basic')),
  privacy_unit name,
  max_rows_per_unit int CHECK (max_rows_per_unit BETWEEN 1 AND 100000),
  CHECK ((privacy_unit IS NULL) = (max_rows_per_unit IS NULL)),
  units bigint CONSTRAINT budgets_units_positive CHECK (units >= 1),
  CONSTRAINT budgets_units_need_unit CHECK (units IS NULL OR privacy_unit IS NOT NULL));
COMMENT ON TABLE dperm.budgets IS 'total privacy budget of each relation, set by its owner';
COMMENT ON COLUMN dperm.budgets.privacy_unit IS 'the column naming the unit every release is private for (NULL: the row)';
COMMENT ON COLUMN dperm.budgets.max_rows_per_unit IS 'k: the rows each unit contributes to a release (dperm.train bounds them)';
COMMENT ON COLUMN dperm.budgets.units IS 'the number of units the owner declares public (a fixed cohort): dperm.train reads exactly that many and releases no count, private against one unit replaced (NULL: not declared, the count is noisy)';
COMMENT ON COLUMN dperm.budgets.set_by IS 'the role that set the budget, by OID (NULL: a role name dperm 0.7.0''s upgrade found no role for)';

CREATE TABLE dperm.ledger (
  id bigserial PRIMARY KEY,
  released_at timestamptz NOT NULL,
  role regrole,
  relations regclass[] NOT NULL,
  relation_names text[] NOT NULL,
  algorithm text NOT NULL,
  mechanism text NOT NULL,
  loss text NOT NULL,
  neighbors text NOT NULL,
  epsilon float8 NOT NULL,
  delta float8 NOT NULL,
  n bigint NOT NULL,
  d int NOT NULL,
  seeded boolean NOT NULL,
  query text,
  rdp float8[],
  role_name name NOT NULL,
  charged_with bigint);
CREATE INDEX ledger_relations ON dperm.ledger USING gin (relations);
COMMENT ON TABLE dperm.ledger IS 'one row per release, written before the model is returned';
COMMENT ON COLUMN dperm.ledger.rdp IS 'the release''s RDP curve on dperm.rdp_orders(); NULL when none is known';
COMMENT ON COLUMN dperm.ledger.role IS 'the releasing role, by OID: a later role of the same name is another role (NULL: a name dperm 0.7.0''s upgrade found no role for)';
COMMENT ON COLUMN dperm.ledger.role_name IS 'the releasing role''s name at the release (history: a dropped role''s OID has no name)';
COMMENT ON COLUMN dperm.ledger.charged_with IS 'the ledger row of the same release this row accompanies: a unit-level release is charged at the unit to the budgets that name it, and at the row (this row) to every other relation it reads (NULL: none)';

SELECT pg_catalog.pg_extension_config_dump('dperm.budgets', '');
SELECT pg_catalog.pg_extension_config_dump('dperm.ledger', '');
SELECT pg_catalog.pg_extension_config_dump('dperm.ledger_id_seq', '');

-- Whether the current role may see a relation's budget and spend (the
-- totals of every role's releases): a superuser or a member of
-- pg_read_all_stats, a role with the privileges of the owner of the relation
-- or of a parent, or SELECT on one of them, or an analyst of its protection.
CREATE FUNCTION dperm.relation_visible(relation regclass) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dperm_relation_visible'
  LANGUAGE C STRICT STABLE PARALLEL RESTRICTED;
COMMENT ON FUNCTION dperm.relation_visible IS 'whether the current role may see a relation''s privacy budget and spend (its owner''s privileges, SELECT on it or a parent, an analyst of it, or pg_read_all_stats)';

-- Spent epsilon and delta of a relation under an accounting, optionally with
-- one more release. Composes the relation's row of dperm.budget_totals, the
-- sums of every ledger row (the view and the ledger writer need totals, not
-- the caller's own rows), which it reads as the catalog owner: for a caller
-- that dperm.relation_visible admits, 42501 otherwise.
CREATE FUNCTION dperm.budget_spent(relation regclass, accounting text, delta_budget float8,
                                   extra_rdp float8[] DEFAULT NULL, extra_epsilon float8 DEFAULT 0,
                                   extra_delta float8 DEFAULT 0,
                                   OUT epsilon float8, OUT delta float8, OUT releases bigint)
  AS 'MODULE_PATHNAME', 'dperm_budget_spent'
  LANGUAGE C CALLED ON NULL INPUT STABLE
  SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION dperm.budget_spent(regclass, text, float8, float8[], float8, float8) IS 'what a relation has spent under an accounting (what budget_status shows), optionally with one more charge; 42501 unless the caller may see the relation';

-- accounting NULL keeps a budget's accounting ('rdp' for a new budget).
-- delta NULL (the default) keeps a budget's delta (1e-5, the delta the
-- user guide recommends, for a new budget).
-- privacy_unit and max_rows_per_unit NULL keep the budget's unit (the row
-- for a new budget). units NULL keeps the budget's declaration of its number
-- of units (none for a new budget); 0 withdraws it.
CREATE FUNCTION dperm.set_budget(relation regclass, epsilon float8, delta float8 DEFAULT NULL,
                                 accounting text DEFAULT NULL, privacy_unit text DEFAULT NULL,
                                 max_rows_per_unit int DEFAULT NULL, units bigint DEFAULT NULL)
  RETURNS void AS 'MODULE_PATHNAME', 'dperm_set_budget' LANGUAGE C CALLED ON NULL INPUT VOLATILE;
COMMENT ON FUNCTION dperm.set_budget IS 'sets the total privacy budget of a relation (its owner or a superuser); delta NULL keeps the budget''s (1e-5 for a new one); accounting rdp (default) or basic; privacy_unit, a column naming the person (default: the row), with max_rows_per_unit, the rows each contributes; units, the number of units declared public (a fixed cohort: no noisy count; 0 withdraws it)';

-- security_invoker: the caller reads dperm.budgets, whose row-level
-- security shows it the relations it may see (dperm.relation_visible).
CREATE VIEW dperm.budget_status WITH (security_invoker = true) AS
SELECT b.relation,
       b.accounting,
       b.epsilon AS epsilon_budget,
       b.delta AS delta_budget,
       s.epsilon AS epsilon_spent,
       s.delta AS delta_spent,
       greatest(b.epsilon - s.epsilon, 0) AS epsilon_remaining,
       greatest(b.delta - s.delta, 0) AS delta_remaining,
       s.releases,
       COALESCE(b.privacy_unit::text, 'row') AS privacy_unit,
       b.max_rows_per_unit,
       b.units AS public_units
  FROM dperm.budgets b,
       LATERAL dperm.budget_spent(b.relation, b.accounting, b.delta) s;
COMMENT ON VIEW dperm.budget_status IS 'spent and remaining privacy budget per relation the caller may see, under its accounting';
COMMENT ON COLUMN dperm.budget_status.epsilon_spent IS 'the composed epsilon of the releases; under rdp accounting at the whole delta budget (the releases are (epsilon_spent, delta_budget)-DP)';
COMMENT ON COLUMN dperm.budget_status.public_units IS 'the number of units the owner declared public (dperm.set_budget units): releases read exactly that many, with no noisy count (NULL: not declared)';
COMMENT ON COLUMN dperm.budget_status.delta_spent IS 'under basic accounting the summed delta; under rdp the delta the releases without an RDP curve took (releases with a curve take none: it is converted at what is left)';
COMMENT ON COLUMN dperm.budget_status.delta_remaining IS 'the delta later releases may still take (under rdp: releases without a curve; a release with a curve needs none)';
GRANT SELECT ON dperm.budget_status TO PUBLIC;

-- Each role reads the budgets of the relations it may see
-- (dperm.relation_visible) and its own ledger rows (members of
-- pg_read_all_stats see all); only the extension writes. The catalog's owner
-- (dperm's own SECURITY DEFINER functions, the ledger writer) bypasses both.
-- Its own ledger rows: its OID (a later role of a dropped role's name is
-- another role) and its name (a dropped role's OID, restored as a number
-- into another cluster, may be another role's there).
ALTER TABLE dperm.budgets ENABLE ROW LEVEL SECURITY;
CREATE POLICY budgets_visible ON dperm.budgets FOR SELECT
  USING (dperm.relation_visible(relation));
ALTER TABLE dperm.ledger ENABLE ROW LEVEL SECURITY;
CREATE POLICY ledger_own_rows ON dperm.ledger FOR SELECT
  USING ((role OPERATOR(pg_catalog.=) (SELECT pg_catalog.to_regrole(pg_catalog.quote_ident(CURRENT_USER)))
          AND role_name OPERATOR(pg_catalog.=) CURRENT_USER)
         OR pg_catalog.pg_has_role('pg_read_all_stats', 'MEMBER'));
GRANT USAGE ON SCHEMA dperm TO PUBLIC;
GRANT SELECT ON dperm.budgets, dperm.ledger TO PUBLIC;
