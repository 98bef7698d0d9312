#!/usr/bin/env bash
# Fuzz test: bad input never crashes or corrupts. Drives dperm's SQL surface
# with a fixed-seed mix of valid and hostile statements (test/fuzz_sql.py),
# checks the ledger afterwards and that one backend running many trainings
# keeps a flat memory footprint, then checks the server log for crashes.
#
#   pg_virtualenv -t -o max_worker_processes=20 -o shared_preload_libraries=dperm bash test/fuzz.sh
# (scripts/test.sh preloads dperm: the memory loop then costs ~2 ms a
# release; without the preload each release starts a process, ~20 ms)
#
# Settings (environment): FUZZ_N statements (3000), FUZZ_SEED, FUZZ_TRAININGS
# (10000), FUZZ_TIMEOUT_MS per statement (2000), FUZZ_RSS_BOUND_KB (5120).
set -uo pipefail
cd "$(dirname "$0")/.."

. test/server_log.sh
run_fuzz_with_log fuzz test/fuzz_sql.py "statement files"
