#!/usr/bin/env bash
# Held-out accuracy of a filtered release (dperm.train_query) against
# dperm.train on the pre-filtered table at epsilon and 0.9 epsilon, on ADULT,
# BANK and CREDIT (bench/scripts/queries/query_accuracy.py), on a throw-away
# cluster (pg_virtualenv -t) with this worktree's build installed. Holds
# /tmp/dperm-server.lock for the whole run (the ledger writer loads the
# installed dperm.so afresh for every release); split long runs with
# --datasets. Writes bench/reports/query_accuracy.md and
# bench/results/query_accuracy_runs.csv (--out, --csv to change).
# Usage: bash bench/scripts/queries/query_accuracy.sh [--datasets adult,bank,creditcard] [--seeds 5]
set -euo pipefail
cd "$(dirname "$0")/../../.."
make -s DPERM_FAST_BUILD=1 >/dev/null
export DPERM_LOCK_HELD=1
export DPERM_DATA_DIR="${DPERM_DATA_DIR:-${DPERM_SHARED:-$PWD/../shared}/data/raw}"
cmd="bash bench/scripts/queries/query_accuracy.sh${*:+ $*}"
exec flock /tmp/dperm-server.lock pg_virtualenv -t \
  nice python3 bench/scripts/queries/query_accuracy.py --repo "$PWD" --command "$cmd" "$@"
