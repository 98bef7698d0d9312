#!/usr/bin/env bash
# Fuzz test of dp_model input: >= 10^4 structure-aware mutations of valid
# models through the text cast, the jsonb cast and binary COPY
# (test/fuzz_model.py); every accepted model is then used by every function
# that reads one. No crash, no internal error (XX000/XX001/XX002).
#
#   pg_virtualenv -o max_worker_processes=16 bash test/fuzz_model.sh
#
# Settings (environment): FUZZ_MODEL_N inputs (10000), FUZZ_MODEL_SEED,
# FUZZ_MODEL_WORKERS psql sessions (4).
set -uo pipefail
cd "$(dirname "$0")/.."

. test/server_log.sh
find_server_log || { echo "fuzz_model: cannot find the server log" >&2; exit 1; }
log_start=$(wc -c < "$log")
echo "fuzz_model: server log $log"

workdir=$(mktemp -d -t dperm-fuzz-model.XXXXXX)
start=$(date +%s)
status=0
FUZZ_WORKDIR=$workdir /usr/bin/python3 test/fuzz_model.py || status=$?

printf "fuzz_model: "
check_server_log "$log_start" || status=1
echo "fuzz_model: total runtime $(( $(date +%s) - start )) s"
if [ $status = 0 ]; then
  rm -rf "$workdir"
  echo "fuzz_model: ok"
else
  echo "fuzz_model: FAILED (scripts and inputs kept in $workdir)"
fi
exit $status
