#!/usr/bin/env bash
# The target "the default release on BANK at most diffprivlib's in-memory
# fit time": unpacks diffprivlib 0.6.5 from ../shared/peers into a temporary
# directory, builds bench/scripts/heldout/heldout_main.cpp (dperm's core alone) and
# runs bench/scripts/time/peer_fit_time.py (BANK via bench/load_datasets.py;
# diffprivlib's fit and dperm's releases interleaved, medians of ROUNDS).
# Needs Debian's python3-numpy/scipy/sklearn and an installed dperm. Run in a
# throwaway cluster, e.g.
#   pg_virtualenv -t -o max_worker_processes=16 -o shared_preload_libraries=dperm bash bench/scripts/time/peer_fit_time.sh
# Usage: [ROUNDS=7] [THREADS=1,2] [DRIVER_B=/path/to/heldout_main] bash bench/scripts/time/peer_fit_time.sh
# THREADS: the core runs' training threads; DRIVER_B: heldout_main.cpp built
# against another commit's core (e.g. main's), run in turn with this one's.
set -euo pipefail
cd "$(dirname "$0")/../../.."
shared=${DPERM_SHARED:-$(cd .. && pwd)/shared}
tmp=$(mktemp -d /tmp/dperm_peer_fit.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
make -s
g++ -std=c++17 -O2 -Iinclude -I/usr/include/eigen3 \
  bench/scripts/heldout/heldout_main.cpp src/core/*/*.o -o "$tmp/heldout_main" -pthread
tar xzf "$shared/peers/diffprivlib-0.6.5.tar.gz" -C "$tmp"
psql -X -q -c "CREATE EXTENSION IF NOT EXISTS dperm" >/dev/null
echo "preload: $(psql -X -At -c 'SHOW shared_preload_libraries'); load: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u)"
PYTHONPATH="$tmp/diffprivlib-0.6.5" /usr/bin/python3 bench/scripts/time/peer_fit_time.py \
  --rounds "${ROUNDS:-7}" --data-dir "$shared/data/raw" --driver "$tmp/heldout_main" \
  --threads "${THREADS:-1}" ${DRIVER_B:+--driver-b "$DRIVER_B"}
