# Shared by the fuzz tests (source it): find the server log and check the
# part written since a starting offset for crashes.
#
#   . test/server_log.sh
#   find_server_log || exit 1          # sets $log
#   log_start=$(wc -c < "$log")
#   ... run the test ...
#   check_server_log "$log_start" || status=1

# The server log: pg_virtualenv -t starts the cluster with its stderr in a file
# (-l); find it from the postmaster's stderr, else pg_current_logfile()
# (logging_collector), else pg_virtualenv's log directory.
find_server_log() {
  local datadir pm cand
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
    echo "cannot find the server log" >&2
    return 1
  fi
}

# Fails (and prints the evidence) when the log since byte $1 reports a crash;
# prints the counts of ERROR, FATAL and crash lines either way.
check_server_log() {
  local since=$1 crashes fatals errors
  crashes=$(tail -c +"$((since + 1))" "$log" |
    grep -E "terminated by signal|server process .* was terminated|PANIC:|was terminated by exception|all server processes terminated|TRAP:|stuck spinlock" || true)
  fatals=$(tail -c +"$((since + 1))" "$log" | grep -c "FATAL:" || true)
  errors=$(tail -c +"$((since + 1))" "$log" | grep -c 'ERROR:' || true)
  echo "server log: $errors ERROR lines, $fatals FATAL lines, crash lines: $(printf %s "$crashes" | grep -c . || true)"
  if [ -n "$crashes" ]; then
    echo "FAIL: the server log reports crashes:"
    echo "$crashes" | head -20
    tail -c +"$((since + 1))" "$log" | grep -B5 -E "terminated by signal|PANIC:" | cut -c1-400 | head -60
    return 1
  fi
}

# Runs the Python fuzz driver $2 (FUZZ_WORKDIR set to a fresh folder) and
# checks the server log for crashes; messages start with "$1:". The folder,
# holding the driver's $3, is kept when the run fails. Returns the status.
run_fuzz_with_log() {
  local name=$1 driver=$2 kept=$3 status=0 log_start workdir start
  find_server_log || { echo "$name: cannot find the server log" >&2; return 1; }
  log_start=$(wc -c < "$log")
  echo "$name: server log $log"
  workdir=$(mktemp -d -t "dperm-$name.XXXXXX")
  start=$(date +%s)
  FUZZ_WORKDIR=$workdir /usr/bin/python3 "$driver" || status=$?
  printf "%s: " "$name"
  check_server_log "$log_start" || status=1
  echo "$name: total runtime $(( $(date +%s) - start )) s"
  if [ $status = 0 ]; then
    rm -rf "$workdir"
    echo "$name: ok"
  else
    echo "$name: FAILED ($kept kept in $workdir)"
  fi
  return $status
}
