#!/usr/bin/env bash
# Held-out quality of unit-level dperm.train against max_rows_per_unit
# (bench/scripts/units/heldout_units.py: the PSID7682 panel and bank-full with skewed
# synthetic persons) on a throw-away cluster (pg_virtualenv -t) with this
# worktree's build installed. The whole run holds /tmp/dperm-install.lock
# (see bench/scripts/units/unit_attack.sh: the ledger writer loads the installed library
# for every release). Arguments go to bench/scripts/units/heldout_units.py (--splits,
# --bank-splits, --ks, --epsilons, --bank-epsilons, --heavy).
# Usage: bash bench/scripts/units/heldout_units.sh > tables.md
set -euo pipefail
cd "$(dirname "$0")/../../.."
cxx=g++; command -v ccache >/dev/null && cxx="ccache g++"
make -s DPERM_FAST_BUILD=1 CXX="$cxx" >/dev/null
export DPERM_LOCK_HELD=1
exec flock /tmp/dperm-install.lock pg_virtualenv -t -o max_worker_processes=16 \
  python3 bench/scripts/units/heldout_units.py --repo "$PWD" "$@"
