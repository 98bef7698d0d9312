#!/usr/bin/env bash
# docs/benchmarks.md's tables, one command: training (bench/scripts/time/benchmarks.py:
# dperm's default on BANK against diffprivlib 0.6.5's default fit and a bare
# scan, and the default through dperm.train at each size, in memory and
# streaming, with time(10 n)/time(n)) in one throwaway cluster
# (shared_preload_libraries = dperm; dperm.max_buffer = 2GB for the 10^7-row
# table in memory), then scoring (bench/scripts/time/scoring.sh, 10^6
# rows, in its own cluster). Unpacks diffprivlib
# from ../shared/peers; needs Debian's python3-numpy/scipy/sklearn/pandas and
# an installed dperm (the system PostgreSQL is shared: hold the install lock).
# Usage: flock /tmp/dperm-install.lock bash bench/scripts/time/benchmarks.sh [--rounds 3] [--sizes "100000 1000000 10000000"]
set -euo pipefail
cd "$(dirname "$0")/../../.."
shared=${DPERM_SHARED:-$(cd .. && pwd)/shared}
tmp=$(mktemp -d /tmp/dperm_benchmarks.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
tar xzf "$shared/peers/diffprivlib-0.6.5.tar.gz" -C "$tmp"
PYTHONPATH="$tmp/diffprivlib-0.6.5" pg_virtualenv -t -o shared_preload_libraries=dperm -o dperm.max_buffer=2GB -o max_wal_size=4GB \
  -o max_worker_processes=16 bash -c '
    set -euo pipefail
    psql -X -q -c "CREATE EXTENSION dperm CASCADE" >/dev/null
    exec /usr/bin/python3 bench/scripts/time/benchmarks.py --data-dir "$0/data/raw" "$@"' "$shared" "$@"
echo
bash bench/scripts/time/scoring.sh 1000000 3
