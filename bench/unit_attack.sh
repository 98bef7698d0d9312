#!/usr/bin/env bash
# End-to-end many-rows attack on privacy units (bench/unit_attack.py) on a
# throw-away cluster: pg_virtualenv -t; the script installs this worktree's
# build under /tmp/dperm-install.lock (bench/lib/psql_session.py) and keeps
# its backend's copy of dperm.so after releasing the lock. Arguments go to
# bench/unit_attack.py (--runs R, --k K, --heavy H, --persons P, --deltas).
# Usage: bash bench/unit_attack.sh [--runs 120] > table.md
set -euo pipefail
cd "$(dirname "$0")/.."
make -s DPERM_FAST_BUILD=1 CXX="ccache g++" >/dev/null
exec pg_virtualenv -t -o max_worker_processes=16 python3 bench/unit_attack.py --repo "$PWD" "$@"
