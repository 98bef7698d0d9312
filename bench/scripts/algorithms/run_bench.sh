#!/usr/bin/env bash
# One command for the benchmark report: installs what the harness needs
# (the project's setup plus python3-numpy), builds and installs dperm, starts
# a throwaway PostgreSQL 15 cluster, loads BANK and WINE, runs bench/scripts/algorithms/bench.py
# and writes its markdown report to bench/reports/benchmarks.md (and stdout).
# Usage: bash bench/scripts/algorithms/run_bench.sh [bench.py options, e.g. --seeds 3]
set -euo pipefail
cd "$(dirname "$0")/../../.."

bash scripts/setup.sh
# Debian's python3-numpy serves Debian's interpreter, not a pyenv/venv one
# that may come first on PATH, so the harness runs /usr/bin/python3.
py=/usr/bin/python3
if ! $py -c 'import numpy' 2>/dev/null; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends python3-numpy
fi

make -s && make -s install

cmd="bash bench/scripts/algorithms/run_bench.sh${*:+ $*}"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
# pg_virtualenv exports PG* for psql; -t keeps the cluster in a temporary
# directory, so a test run's 15/regress cluster on this machine is no obstacle.
pg_virtualenv -t -o max_worker_processes=16 bash -c '
  set -euo pipefail
  py=$0; out=$1; cmd=$2; shift 2
  $py bench/load_datasets.py --load bank wine
  psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION dperm"
  $py bench/scripts/algorithms/bench.py --command "$cmd" "$@" > "$out"
' "$py" "$out" "$cmd" "$@" >&2
echo "Cluster start, data load and bench.py: $(( $(date +%s) - start )) s (setup and build not counted)." >> "$out"
mkdir -p bench/reports
cp "$out" bench/reports/benchmarks.md && chmod 644 bench/reports/benchmarks.md
cat bench/reports/benchmarks.md
