#!/usr/bin/env bash
# End-to-end many-rows attack on privacy units (bench/scripts/units/unit_attack.py) on a
# throw-away cluster (pg_virtualenv -t) with this worktree's build installed.
# The whole run holds /tmp/dperm-install.lock: dperm's background workers
# (the ledger writer) load the installed dperm.so afresh for every release,
# so another engineer's install during the run would change their library
# (DPERM_LOCK_HELD=1 tells bench/lib/psql_session.py not to lock again).
# Arguments go to bench/scripts/units/unit_attack.py (--runs R, --k K, --heavy H,
# --persons P, --deltas).
# Usage: bash bench/scripts/units/unit_attack.sh [--runs 300] > table.md
set -euo pipefail
cd "$(dirname "$0")/../../.."
make -s DPERM_FAST_BUILD=1 CXX="ccache g++" >/dev/null
export DPERM_LOCK_HELD=1
exec flock /tmp/dperm-install.lock pg_virtualenv -t -o max_worker_processes=16 \
  python3 bench/scripts/units/unit_attack.py --repo "$PWD" "$@"
