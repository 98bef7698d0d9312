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

# The server log: pg_virtualenv starts the cluster with its stderr in a file
# (-l); find it from the postmaster's stderr, else pg_current_logfile()
# (logging_collector), else pg_virtualenv's log directory.
datadir=$(psql -X -Atc "SHOW data_directory")
log=""
if [ -r "$datadir/postmaster.pid" ]; then
  pm=$(head -1 "$datadir/postmaster.pid")
  cand=$(readlink "/proc/$pm/fd/2" 2>/dev/null || true)
  [ -f "$cand" ] && log=$cand
fi
if [ -z "$log" ]; then
  cand=$(psql -X -Atc "SELECT pg_current_logfile()" 2>/dev/null || true)
  [ -n "$cand" ] && { case $cand in /*) ;; *) cand=$datadir/$cand;; esac; }
  [ -n "$cand" ] && [ -f "$cand" ] && log=$cand
fi
if [ -z "$log" ] && [ -n "${PG_CLUSTER_CONF_ROOT:-}" ]; then
  log=$(ls "$(dirname "$PG_CLUSTER_CONF_ROOT")"/log/*.log 2>/dev/null | head -1)
fi
if [ -z "$log" ] || [ ! -r "$log" ]; then
  echo "fuzz: cannot find the server log" >&2
  exit 1
fi
log_start=$(wc -c < "$log")
echo "fuzz: server log $log"

workdir=$(mktemp -d -t dperm-fuzz.XXXXXX)
start=$(date +%s)
status=0
FUZZ_WORKDIR=$workdir /usr/bin/python3 test/fuzz_sql.py || status=$?

# Anything the server logged during the run that means a crash.
crashes=$(tail -c +"$((log_start + 1))" "$log" |
  grep -E "terminated by signal|server process .* was terminated|PANIC:|was terminated by exception|all server processes terminated|TRAP:|stuck spinlock" || true)
if [ -n "$crashes" ]; then
  echo "FAIL: the server log reports crashes:"
  echo "$crashes" | head -20
  tail -c +"$((log_start + 1))" "$log" | grep -B5 -E "terminated by signal|PANIC:" | head -60
  status=1
fi
fatals=$(tail -c +"$((log_start + 1))" "$log" | grep -c "FATAL:" || true)
echo "fuzz: server log: $(tail -c +"$((log_start + 1))" "$log" | grep -c 'ERROR:' || true) ERROR lines, ${fatals} FATAL lines, crash lines: $(printf %s "$crashes" | grep -c . || true)"
echo "fuzz: total runtime $(( $(date +%s) - start )) s"
if [ $status = 0 ]; then
  rm -rf "$workdir"
  echo "fuzz: ok"
else
  echo "fuzz: FAILED (statement files kept in $workdir)"
fi
exit $status
