-- One transaction of test/pgbench_charges.sh: one small release (dp_logreg on
-- the 100-row table tiny at epsilon = 0.01) and its outcome. A refusal
-- (SQLSTATE DP001) is recorded instead of raised, so that pgbench, which
-- aborts a client on any other error, sees every transaction succeed; any
-- other error still fails the transaction. The tag client-counter (pgbench
-- substitutes the variables, also inside the dollar quotes) is unique per
-- release and reaches the ledger row through its query text; took is the
-- release's wall time (test/pgbench_charges.sh reports its spread). Needs -D n=0.
\set n :n + 1
DO $$
DECLARE
  tag text := ':client_id-:n';
  got_model boolean;
  started timestamptz := clock_timestamp();
BEGIN
  SELECT dp_logreg(f, y, dp_options(epsilon => 0.01, l2 => 1, dimension => 2)) IS NOT NULL INTO got_model FROM tiny;
  IF NOT got_model THEN
    RAISE EXCEPTION 'release % returned no model', tag;
  END IF;
  INSERT INTO outcomes (tag, released, took) VALUES (tag, true, clock_timestamp() - started);
EXCEPTION WHEN SQLSTATE 'DP001' THEN
  INSERT INTO outcomes (tag, released, sqlstate, took) VALUES (tag, false, SQLSTATE, clock_timestamp() - started);
END
$$;
