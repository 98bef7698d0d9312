#!/usr/bin/env bash
# Builds and installs Citus 13.2.2 into the PostgreSQL 15 that pg_config
# names, from the source tarball in ../shared/citus (DPERM_SHARED), for
# test/citus.sh. Once per machine: does nothing when this version is already
# installed (the marker of ../shared/citus/build-citus.sh); about 4-5 minutes on 2 cores
# otherwise. Fails loudly when Citus cannot be built.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${DPERM_SHARED:-$(cd .. && pwd)/shared}
script="$shared/citus/build-citus.sh"
[ -f "$script" ] || { echo "setup-citus: $script not found (set DPERM_SHARED)" >&2; exit 1; }
bash "$script"
[ -f "$(pg_config --pkglibdir)/citus.so" ] ||
  { echo "setup-citus: citus.so was not installed" >&2; exit 1; }
