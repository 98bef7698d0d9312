#!/usr/bin/env bash
# Fuzz test: bad input never crashes or corrupts. Drives dperm's SQL surface
# with a fixed-seed mix of valid and hostile statements (test/fuzz_sql.py),
# checks the ledger afterwards and that one backend running many trainings
# keeps a flat memory footprint, then checks the server log for crashes.
#
#   pg_virtualenv -t -o max_worker_processes=20 bash test/fuzz.sh
#
# Settings (environment): FUZZ_N statements (3000), FUZZ_SEED, FUZZ_TRAININGS
# (10000), FUZZ_TIMEOUT_MS per statement (2000), FUZZ_RSS_BOUND_KB (5120).
set -uo pipefail
cd "$(dirname "$0")/.."

. test/server_log.sh
find_server_log || { echo "fuzz: cannot find the server log" >&2; exit 1; }
log_start=$(wc -c < "$log")
echo "fuzz: server log $log"

workdir=$(mktemp -d -t dperm-fuzz.XXXXXX)
start=$(date +%s)
status=0
FUZZ_WORKDIR=$workdir /usr/bin/python3 test/fuzz_sql.py || status=$?

# Anything the server logged during the run that means a crash.
printf "fuzz: "
check_server_log "$log_start" || status=1
echo "fuzz: total runtime $(( $(date +%s) - start )) s"
if [ $status = 0 ]; then
  rm -rf "$workdir"
  echo "fuzz: ok"
else
  echo "fuzz: FAILED (statement files kept in $workdir)"
fi
exit $status
