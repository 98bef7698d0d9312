#!/usr/bin/env bash
# Neighbour distinguishing test of dperm.train_query at epsilon = 1
# (bench/query_audit.py) on a throw-away cluster (pg_virtualenv -t) with this
# worktree's build installed. Holds /tmp/dperm-server.lock for the whole run
# (the ledger writer loads the installed dperm.so afresh for every release):
# keep a run under ~10 minutes (--configs splits the work into several runs).
# Usage: bash bench/query_audit.sh [--runs 1000] [--configs row,unit] > table.md
set -euo pipefail
cd "$(dirname "$0")/.."
make -s DPERM_FAST_BUILD=1 >/dev/null
export DPERM_LOCK_HELD=1
exec flock /tmp/dperm-server.lock pg_virtualenv -t -o max_worker_processes=16 \
  nice python3 bench/query_audit.py --repo "$PWD" "$@"
