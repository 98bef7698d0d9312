#!/usr/bin/env bash
# One command for the accountant benchmark: installs what dperm needs (the
# project's setup), builds and installs dperm, starts a throwaway PostgreSQL 15
# cluster, runs bench/scripts/accountant/accountant_bench.py (standard library only) and writes
# its markdown report to docs/accountant.md (and stdout).
# Usage: bash bench/scripts/accountant/accountant_bench.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."

bash scripts/setup.sh
make -s && make -s install

# Debian's interpreter (a pyenv/venv python3 may come first on PATH).
py=/usr/bin/python3
cmd="bash bench/scripts/accountant/accountant_bench.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
# pg_virtualenv exports PG* for psql; -t keeps the cluster in a temporary
# directory, dropped at the end.
pg_virtualenv -t -o max_worker_processes=16 bash -c '
  set -euo pipefail
  py=$0; out=$1; cmd=$2
  psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION dperm"
  $py bench/scripts/accountant/accountant_bench.py --command "$cmd" > "$out"
' "$py" "$out" "$cmd" >&2
echo "Cluster start and accountant_bench.py: $(( $(date +%s) - start )) s (setup and build not counted)." >> "$out"
mkdir -p docs
cp "$out" docs/accountant.md && chmod 644 docs/accountant.md
cat docs/accountant.md
