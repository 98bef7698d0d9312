#!/usr/bin/env bash
# Held-out quality of unit-level dperm.train against max_rows_per_unit
# (bench/heldout_units.py: the PSID7682 panel and bank-full with skewed
# synthetic persons) on a throw-away cluster: pg_virtualenv -t; the script
# installs this worktree's build under /tmp/dperm-install.lock
# (bench/lib/psql_session.py). Arguments go to bench/heldout_units.py
# (--splits, --bank-splits, --ks, --epsilons, --bank-epsilons, --heavy).
# Usage: bash bench/heldout_units.sh > tables.md
set -euo pipefail
cd "$(dirname "$0")/.."
make -s DPERM_FAST_BUILD=1 CXX="ccache g++" >/dev/null
exec pg_virtualenv -t -o max_worker_processes=16 python3 bench/heldout_units.py --repo "$PWD" "$@"
