#!/usr/bin/env bash
# End-to-end audit of the SQL unit sampler (bench/unit_sampler_audit.py):
# adversarial unit representations and settings, errors counted as events,
# on a throw-away cluster (pg_virtualenv -t) with this worktree's build
# installed. Holds /tmp/dperm-server.lock for the whole run (the ledger
# writer loads the installed dperm.so afresh for every release).
# Usage: bash bench/unit_sampler_audit.sh [--runs 100] > table.md
set -euo pipefail
cd "$(dirname "$0")/.."
make -s DPERM_FAST_BUILD=1 >/dev/null
export DPERM_LOCK_HELD=1
exec flock /tmp/dperm-server.lock pg_virtualenv -t -o max_worker_processes=16 \
  python3 bench/unit_sampler_audit.py --repo "$PWD" "$@"
