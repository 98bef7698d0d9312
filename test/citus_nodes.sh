# Sourced by test/citus.sh and bench/scripts/time/scale.sh (--cells citus): a Citus
# coordinator and two workers on localhost as three throwaway clusters.
# citus_nodes_init DIR creates DIR/n0 (coordinator), DIR/n1, DIR/n2 with
# shared_preload_libraries = citus, listening on 127.0.0.1 and on a socket in
# DIR, and one dperm.pass_key for all three; sets CITUS_PORT (three free
# ports) and CITUS_KEY. The caller appends its own settings to
# DIR/n<i>/postgresql.conf, then starts each node with citus_nodes_start.
# Run as root (the clusters run as postgres) or as a user who may run initdb.
citus_as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

citus_nodes_init() {
  local dir=$1 i bindir
  bindir=$(pg_config --bindir)
  [ "$(id -u)" = 0 ] && chown postgres: "$dir"
  read -r -a CITUS_PORT < <(python3 -c 'import socket
s = [socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
  CITUS_KEY=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
  for i in 0 1 2; do
    citus_as_pg "$bindir/initdb" -D "$dir/n$i" -U postgres --auth=trust -E UTF8 --locale=C >/dev/null
    cat >> "$dir/n$i/postgresql.conf" <<CONF
port = ${CITUS_PORT[$i]}
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
shared_preload_libraries = 'citus'
max_worker_processes = 16
dperm.pass_key = '$CITUS_KEY'
log_line_prefix = '%m [%p] %u: '
CONF
  done
}

citus_nodes_start() {  # DIR
  local i
  for i in 0 1 2; do
    citus_as_pg "$(pg_config --bindir)/pg_ctl" -s -w -D "$1/n$i" -l "$1/n$i.log" start
  done
}
