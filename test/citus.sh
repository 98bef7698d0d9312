#!/usr/bin/env bash
# dperm on Citus (docs/citus.md): a coordinator and two
# workers on localhost (three throwaway clusters, shared_preload_libraries =
# citus, the same dperm.pass_key), a distributed training table and a local
# copy of its rows, and with citus.coordinator_aggregation_strategy =
# 'disabled':
#  (a) the pass query's plan runs worker_partial_agg on the shards, and
#      dperm.train's passes reach the workers as worker_partial_agg;
#  (b) a pass's sums over the distributed table equal the local copy's
#      exactly (integer limbs), and the seeded models are equal (1e-9);
#  (c) the ledger is charged once, on the coordinator, for the distributed
#      table; the workers' ledgers stay empty;
#  (d) an analyst cannot run the per-pass aggregates (on the coordinator,
#      grouped by the distribution column, or with a forged, altered or
#      expired token), nor the in-memory aggregates on the table or its
#      shards (clean errors with a hint at dperm.train); a protected
#      distributed table trains through dperm.train only.
# Needs Citus installed (scripts/setup-citus.sh) and dperm installed; run
# as root (the clusters run as postgres) or as a user who may run initdb.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "citus.sh: FAIL: $*" >&2; exit 1; }
[ -f "$(pg_config --pkglibdir)/citus.so" ] ||
  fail "Citus is not installed into $(pg_config --pkglibdir); run bash scripts/setup-citus.sh"
bindir=$(pg_config --bindir)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

work=$(mktemp -d "${TMPDIR:-/tmp}/dperm-citus.XXXXXX")
cleanup() {
  for node in "$work"/n*; do
    if [ -f "$node/postmaster.pid" ]; then
      as_pg "$bindir/pg_ctl" -s -D "$node" -m immediate stop || true
    fi
  done
  rm -rf "$work"
}
trap cleanup EXIT
[ -n "${DPERM_CITUS_KEEP:-}" ] && trap - EXIT

# Three free ports, a shared secret, three clusters (test/citus_nodes.sh).
. test/citus_nodes.sh
citus_nodes_init "$work"
port=("${CITUS_PORT[@]}"); key=$CITUS_KEY
for i in 0 1 2; do echo "log_statement = 'all'" >> "$work/n$i/postgresql.conf"; done
# The workers log each pass token they verify (DEBUG1): once per pass query.
for i in 1 2; do echo "log_min_messages = debug1" >> "$work/n$i/postgresql.conf"; done
citus_nodes_start "$work"

db=dperm_citus
# psql on node $1 (0 = coordinator) as role $2.
psql_on() {
  local node=$1 role=$2; shift 2
  as_pg "$bindir/psql" -X -q -At -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -h "$work" \
    -p "${port[$node]}" -U "$role" -d "$db" "$@"
}
coord() { psql_on 0 postgres "$@"; }
# Runs SQL on node $1 as role $2 and requires an error containing $3.
expect_error() {
  local node=$1 role=$2 want=$3 sql=$4 out
  if out=$(psql_on "$node" "$role" -c "SET citus.coordinator_aggregation_strategy = 'disabled'" \
             -c "$sql" 2>&1); then
    fail "expected an error ($want), got success: $sql"
  fi
  grep -qF -- "$want" <<<"$out" || fail "expected \"$want\" from: $sql; got: $out"
  echo "ok: refused ($want): ${sql:0:90}"
}
check() {  # $1 = description, $2 = a query returning t
  local got
  got=$(coord -c "SET citus.coordinator_aggregation_strategy = 'disabled'" -c "$2")
  [ "$got" = t ] || fail "$1 (got: $got)"
  echo "ok: $1"
}

for i in 0 1 2; do
  as_pg "$bindir/psql" -X -q -h "$work" -p "${port[$i]}" -U postgres -d postgres \
    -c "CREATE DATABASE $db" -c "\\c $db" -c "CREATE EXTENSION citus"
done
coord -c "SELECT citus_set_coordinator_host('127.0.0.1', ${port[0]})" \
      -c "SELECT citus_add_node('127.0.0.1', ${port[1]})" \
      -c "SELECT citus_add_node('127.0.0.1', ${port[2]})" >/dev/null
# Citus creates dperm (and the roles below) on the workers too.
coord -c "CREATE EXTENSION dperm" -c "CREATE EXTENSION pgcrypto"
for i in 1 2; do
  [ "$(psql_on $i postgres -c "SELECT extversion FROM pg_extension WHERE extname = 'dperm'")" = \
    "$(coord -c "SELECT extversion FROM pg_extension WHERE extname = 'dperm'")" ] ||
    fail "dperm is not installed on worker $i"
done

# 20000 rows with a known signal (label from a fixed linear rule plus a
# deterministic perturbation), the same rows in a local table and in a
# distributed one (4 shards, 2 per worker).
coord <<'SQL'
CREATE ROLE data_owner LOGIN;
CREATE ROLE analyst LOGIN;
GRANT USAGE ON SCHEMA public TO data_owner, analyst;
GRANT CREATE ON SCHEMA public TO data_owner;
CREATE TABLE pts_local AS
  SELECT i::bigint AS id,
         ARRAY[sin(i * 0.7), cos(i * 1.3), 0.5 * sin(i * 0.11), 0.3 * cos(i * 0.05)] AS features,
         (sin(i * 0.7) + 0.5 * cos(i * 1.3) + 0.3 * sin(i * 2.9)) > 0 AS label,
         2 * sin(i * 0.7) - cos(i * 1.3) + 0.2 * sin(i * 3.7) AS target
    FROM generate_series(1, 20000) i;
SET citus.shard_count = 4;
CREATE TABLE pts (id bigint PRIMARY KEY, features float8[], label boolean, target float8);
SELECT create_distributed_table('pts', 'id');
INSERT INTO pts SELECT * FROM pts_local;
GRANT SELECT ON pts, pts_local TO analyst;
-- A pass spec with its token, signed here with pgcrypto: an implementation
-- of the token independent of dperm's C code (citus.cpp).
CREATE FUNCTION signed_spec(spec float8[], w float8[], expires float8, key text)
RETURNS float8[] LANGUAGE sql AS $$
  SELECT spec || expires || array_agg(((get_byte(mac, 4 * k)::bigint << 24)
                                     | (get_byte(mac, 4 * k + 1) << 16)
                                     | (get_byte(mac, 4 * k + 2) << 8)
                                     | get_byte(mac, 4 * k + 3))::float8 ORDER BY k)
    FROM (SELECT hmac(convert_to('dperm pass v1', 'UTF8')
                      || (SELECT string_agg(float8send(v), ''::bytea ORDER BY o)
                            FROM unnest(spec || expires || w) WITH ORDINALITY u(v, o)),
                      convert_to(key, 'UTF8'), 'sha256') AS mac) m,
         generate_series(0, 7) k
   GROUP BY mac $$;
SQL
coord -c "CREATE TABLE pass_key AS SELECT '$key'::text AS key"
[ "$(coord -c "SELECT count(*) FROM pts")" = 20000 ] || fail "the distributed table lost rows"

# (a) The pass query splits: worker_partial_agg on the shards, the combine
# on the coordinator.
plan=$(coord -c "SET citus.coordinator_aggregation_strategy = 'disabled'" -c "
  EXPLAIN (VERBOSE, COSTS OFF)
  SELECT dperm.pass_logreg(features::pg_catalog.float8[], label::pg_catalog.bool,
                           '{0,0,0,0,0}'::pg_catalog.float8[], '{0,4,1,1,1,0,1,1,-45,0}'::pg_catalog.float8[])
    FROM public.pts")
grep -q "worker_partial_agg('dperm.pass_logreg" <<<"$plan" || fail "no worker_partial_agg in: $plan"
grep -q "coord_combine_agg" <<<"$plan" || fail "no coord_combine_agg in: $plan"
grep -q "Task Count: 4" <<<"$plan" || fail "the pass does not run on the 4 shards: $plan"
echo "ok: the pass query runs worker_partial_agg on 4 shards and coord_combine_agg"

# (b) One pass's exact sums: over the local copy inside a superuser's
# dperm.internal_pass, over the distributed table under a signed spec
# (transitions on the workers, combined on the coordinator). The gradient
# sums are integers in two limbs (lo + 2^32 hi, exact_sum.hpp): equal
# exactly, whatever the shards' order and split.
wp="'{0.3,-0.2,0.1,0.05,-0.1}'::float8[]"; spec="'{0,4,1,1,1,0,1,1,-45,0}'::float8[]"
signed=$(coord -c "SELECT signed_spec($spec, $wp, extract(epoch FROM now()) + 600, key) FROM pass_key")
dist=$(coord -c "SET citus.coordinator_aggregation_strategy = 'disabled'" \
             -c "SELECT dperm.pass_logreg(features, label, $wp, '$signed') FROM pts")
local=$(coord -c "SET dperm.internal_pass = on" \
              -c "SELECT dperm.pass_logreg(features, label, $wp, $spec) FROM pts_local")
check "a signed pass over the shards sums exactly what a local pass sums: $dist" "
  SELECT ('$dist'::float8[])[1] = 20000 AND array_length('$dist'::float8[], 1) = 14
         AND bool_and(d[4 + j]::numeric + d[9 + j]::numeric * 4294967296
                      = l[4 + j]::numeric + l[9 + j]::numeric * 4294967296)
    FROM (SELECT '$dist'::float8[] AS d, '$local'::float8[] AS l) s, generate_series(1, 5) j"

# The seeded models: distributed (auto: streams, signs each pass) against
# the local copy (streaming and in memory): logistic, Huber, and dp_newton
# (its passes are curvature passes: dim (dim + 3)/2 sums each).
coord -c "CREATE TABLE models (name text PRIMARY KEY, m jsonb)"
ledger_before=$(coord -c "SELECT count(*) FROM dperm.ledger")
# intercept => 'fitted': streaming has no stage-0 offset (offset.hpp), so the
# in-memory model equals the streamed one only without it.
for case in logistic huber newton; do
  loss=$case label=label; opts="epsilon => 1, l2 => 0.1, algorithm => 'output_gd', seed => 7, intercept => 'fitted'"
  [ $case = huber ] && { label=target; opts="epsilon => 1, delta => 1e-6, l2 => 0.5, algorithm => 'dp_gd', seed => 11, intercept => 'fitted'"; }
  [ $case = newton ] && { loss=logistic; opts="epsilon => 1, delta => 1e-6, algorithm => 'dp_newton', seed => 13, intercept => 'fitted'"; }
  coord -c "SET dperm.allow_seed = on" \
        -c "SET citus.coordinator_aggregation_strategy = 'disabled'" \
        -c "INSERT INTO models VALUES
              ('$case dist',   dperm.train('pts', 'features', '$label', '$loss', dp_options($opts))::jsonb),
              ('$case stream', dperm.train('pts_local', 'features', '$label', '$loss', dp_options($opts), 'streaming')::jsonb),
              ('$case memory', dperm.train('pts_local', 'features', '$label', '$loss', dp_options($opts), 'in_memory')::jsonb)"
  for other in stream memory; do
    check "$case: the distributed model equals the local $other one (1e-9)" "
      SELECT (SELECT max(abs(a::float8 - b::float8))
                FROM jsonb_array_elements_text(d.m->'coefficients' || (d.m->'intercept'))
                       WITH ORDINALITY x(a, i)
                JOIN jsonb_array_elements_text(l.m->'coefficients' || (l.m->'intercept'))
                       WITH ORDINALITY y(b, j) ON i = j) < 1e-9
             AND jsonb_array_length(d.m->'coefficients') = 4 AND (d.m->>'n')::int = 20000
             AND d.m->'noise_scale' = l.m->'noise_scale'
        FROM models d, models l WHERE d.name = '$case dist' AND l.name = '$case $other'"
  done
done
check "the distributed logistic models (output_gd, dp_newton) have the signal (accuracy > 0.8)" "
  SELECT count(*) = 2 AND bool_and(accuracy > 0.8)
    FROM (SELECT name, avg(((dp_predict_class(m::text::dp_model, features) = 1) = label)::int) AS accuracy
            FROM models, pts_local WHERE name IN ('logistic dist', 'newton dist') GROUP BY name) a"
passes=$(grep -c "worker_partial_agg('dperm.pass_" "$work/n1.log" "$work/n2.log" | awk -F: '{s += $2} END {print s}')
[ "$passes" -ge 8 ] || fail "the workers ran $passes partial passes"
echo "ok: the workers ran $passes partial passes (worker_partial_agg) for dperm.train"
# A token is verified once per pass query (and per parallel worker of one),
# not once per row of a shard (5000 here): Citus calls the transition
# through a fresh FmgrInfo for every row (pass_aggregate.cpp).
verified=$(grep -c "dperm: verified a pass token" "$work/n1.log" "$work/n2.log" | awk -F: '{s += $2} END {print s}')
[ "$verified" -ge 1 ] && [ "$verified" -le $((3 * passes)) ] ||
  fail "the workers verified $verified pass tokens for $passes pass queries"
echo "ok: the workers verified $verified pass tokens for $passes pass queries"

# (c) Charged once each, on the coordinator, for the distributed table.
check "the ledger holds one charge per distributed release, for pts" "
  SELECT count(*) = 3 AND bool_and(relations = ARRAY['pts'::regclass])
    FROM dperm.ledger WHERE 'pts'::regclass = ANY (relations)"
check "nine releases, nine charges on the coordinator" \
  "SELECT count(*) = $ledger_before + 9 FROM dperm.ledger"
for i in 1 2; do
  [ "$(psql_on $i postgres -c "SELECT count(*) FROM dperm.ledger")" = 0 ] ||
    fail "worker $i charged its own ledger"
done
echo "ok: the workers' ledgers are empty"

# (d) The analyst (SELECT on pts): no per-pass aggregate, no in-memory
# aggregate on the distributed table or its shards.
w5="'{0,0,0,0,0}'::float8[]"
expect_error 0 analyst "42501: dperm per-pass aggregates run only inside dperm.train" \
  "SELECT dperm.pass_logreg(features, label, $w5, $spec) FROM pts"
expect_error 0 analyst "42501: dperm per-pass aggregates run only inside dperm.train" \
  "SELECT dperm.pass_logreg(features, label, $w5, $spec) FROM pts GROUP BY id LIMIT 1"
expect_error 0 analyst "42501: dperm per-pass aggregates run only inside dperm.train" \
  "SELECT dperm.pass_logreg(features, label, $w5, $spec) FROM pts_local"
# A token for another w (an analyst who saw one pass's query) or past its
# expiry, or a made-up one.
token=$signed  # signed for w = $wp
expect_error 0 analyst "does not verify under this node's dperm.pass_key" \
  "SELECT dperm.pass_logreg(features, label, '{0.3,-0.2,0.1,0.05,-0.2}', '$token') FROM pts"
expired=$(coord -c "SELECT signed_spec($spec, $w5, extract(epoch FROM now()) - 10, key) FROM pass_key")
expect_error 0 analyst "The pass's token has expired" \
  "SELECT dperm.pass_logreg(features, label, $w5, '$expired') FROM pts"
forged=$(coord -c "SELECT signed_spec($spec, $w5, extract(epoch FROM now()) + 600, repeat('x', 64))")
expect_error 0 analyst "does not verify under this node's dperm.pass_key" \
  "SELECT dperm.pass_logreg(features, label, $w5, '$forged') FROM pts"
# The in-memory aggregates: Citus's own refusal under 'disabled'; dperm's
# (with the hint) when Citus would pull the rows or push the release down.
opts="dp_options(epsilon => 0.5, l2 => 0.1)"
expect_error 0 analyst "unsupported aggregate function dp_logreg" \
  "SELECT dp_logreg(features, label, $opts) FROM pts"
for q in "FROM pts" "FROM pts WHERE id = 5" "FROM pts GROUP BY id LIMIT 1"; do
  out=$(psql_on 0 analyst -c "SELECT dp_logreg(features, label, $opts) IS NOT NULL $q" 2>&1) &&
    fail "dp_logreg $q succeeded"
  { grep -q "0A000: dp_logreg cannot read a Citus distributed table or its shards" <<<"$out" &&
      grep -q "HINT:  Train with dperm.train" <<<"$out"; } || fail "dp_logreg $q: $out"
  echo "ok: refused with a hint at dperm.train: dp_logreg $q"
done
# A shard of a table on worker 1 (its name there).
shard_on_1() {
  coord -c "SELECT shard_name FROM citus_shards WHERE table_name = '$1'::regclass
              AND nodeport = ${port[1]} ORDER BY shardid LIMIT 1"
}
shard=$(shard_on_1 pts)
expect_error 1 analyst "0A000: dp_logreg cannot read a Citus distributed table or its shards" \
  "SELECT dp_logreg(features, label, $opts) FROM $shard"
expect_error 0 postgres "0A000: pts is a Citus distributed table; dperm.train reads it only in streaming mode" \
  "SELECT dperm.train('pts', 'features', 'label', 'logistic', $opts, 'in_memory')"
check "no refusal was charged" "SELECT count(*) = $ledger_before + 9 FROM dperm.ledger"

# A protected distributed table: the owner's rows, the analyst trains
# through dperm.train only (the passes run as the owner on the workers),
# declaring d (a protected relation's d is never read from a row).
psql_on 0 data_owner -c "SET citus.shard_count = 4" \
  -c "CREATE TABLE prot (id bigint PRIMARY KEY, features float8[], label boolean)" \
  -c "SELECT create_distributed_table('prot', 'id')" \
  -c "SELECT dperm.protect('prot', ARRAY['analyst']::regrole[])" >/dev/null
coord -c "INSERT INTO prot SELECT id, features, label FROM pts_local"
prot_shard=$(shard_on_1 prot)
expect_error 0 analyst "42501: permission denied for table prot" "SELECT count(*) FROM prot"
expect_error 1 analyst "42501: permission denied for table $prot_shard" "SELECT count(*) FROM $prot_shard"
expect_error 1 analyst "42501: permission denied for table $prot_shard" \
  "SELECT dperm.pass_logreg(features, label, $wp, '$token') FROM $prot_shard"
model=$(psql_on 0 analyst -c "SELECT dperm.train('prot', 'features', 'label', 'logistic',
                                dp_options(epsilon => 1, l2 => 0.1, algorithm => 'output_gd', dimension => 4))::jsonb->>'n'")
[ "$model" = 20000 ] || fail "the analyst's release on prot: $model"
grep -q "data_owner: .*worker_partial_agg('dperm.pass_logreg.*FROM public.prot_" "$work/n1.log" ||
  fail "the passes over prot did not run as its owner on worker 1"
check "the analyst's release on prot is charged once, on the coordinator, to the analyst" "
  SELECT count(*) = 1 AND bool_and(relations = ARRAY['prot'::regclass] AND role = 'analyst'::regrole)
    FROM dperm.ledger WHERE 'prot'::regclass = ANY (relations)"

# A query on a distributed table (dperm.train_query and its per-group and
# named forms) is refused before the charge: the filter is not pushed down
# to the shards' passes yet; dperm.train reads the whole table.
q='$$SELECT features, label FROM prot WHERE id > 100$$'
qopts="dp_options(epsilon => 1, l2 => 0.1, dimension => 4)"
expect_error 0 analyst "0A000: dperm.train_query cannot train on this query: prot is a Citus distributed table" \
  "SELECT dperm.train_query($q, 'features', 'label', 'logistic', $qopts)"
expect_error 0 analyst "0A000: dperm.train_query cannot train on this query: prot is a Citus distributed table" \
  "SELECT count(*) FROM dperm.train_query_groups($q, 'features', 'label', 'logistic', $qopts, 'label', '[true, false]')"
expect_error 0 analyst "0A000: dperm.train_query cannot train on this query: prot is a Citus distributed table" \
  "SELECT dperm.train_model_query('prot_late', $q, 'features', 'label', 'logistic', $qopts)"
check "the refused queries on prot were not charged" "
  SELECT count(*) = 1 FROM dperm.ledger WHERE 'prot'::regclass = ANY (relations)"

# A missing or different key: refused before the charge on the coordinator,
# by the workers on a worker.
coord -c "ALTER SYSTEM SET dperm.pass_key = ''" -c "SELECT pg_reload_conf()" >/dev/null
sleep 1
expect_error 0 postgres "55000: dperm.pass_key is not set" \
  "SELECT dperm.train('pts', 'features', 'label', 'logistic', $opts)"
coord -c "ALTER SYSTEM RESET dperm.pass_key" -c "SELECT pg_reload_conf()" >/dev/null
psql_on 2 postgres -c "ALTER SYSTEM SET dperm.pass_key = '$(printf 'y%.0s' {1..40})'" -c "SELECT pg_reload_conf()" >/dev/null
sleep 1
expect_error 0 postgres "does not verify under this node's dperm.pass_key" \
  "SELECT dperm.train('pts', 'features', 'label', 'logistic', $opts)"
psql_on 2 postgres -c "ALTER SYSTEM RESET dperm.pass_key" -c "SELECT pg_reload_conf()" >/dev/null
echo "citus.sh: all checks passed"
