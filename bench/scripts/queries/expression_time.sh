#!/usr/bin/env bash
# How much one wide row moves the time of dperm.train_query's input: the
# read of the canonical query with the most expensive expressions the
# function rule allows (text comparisons, numeric comparisons, abs and unary
# minus) on values of 1 kB .. 1 MB of text and 1k .. 100k numeric digits,
# against a plain column, in ns per byte read, and the whole release's time
# (bench/scripts/queries/expression_time.py), on a throw-away cluster
# (pg_virtualenv -t) with this worktree's build installed. Holds
# /tmp/dperm-server.lock for the whole run (about 3 minutes). Writes
# bench/reports/expression_time.md (--out to change).
# Usage: bash bench/scripts/queries/expression_time.sh [--rows 20] [--reps 5]
set -euo pipefail
cd "$(dirname "$0")/../../.."
make -s DPERM_FAST_BUILD=1 >/dev/null
export DPERM_LOCK_HELD=1
cmd="bash bench/scripts/queries/expression_time.sh${*:+ $*}"
exec flock /tmp/dperm-server.lock pg_virtualenv -t \
  nice python3 bench/scripts/queries/expression_time.py --repo "$PWD" --command "$cmd" "$@"
