#!/usr/bin/env bash
# Installs what dperm needs to build and test on Debian bookworm:
# PostgreSQL 15 (server, headers, pg_virtualenv), pg_cron (scheduled
# retraining, test/cron.sh), a C++17 compiler, Eigen, Boost.Math, GoogleTest,
# mpmath (the generators of the tests' reference constants) and the Python
# package's dependencies (python/dperm: psycopg2, numpy, pandas, matplotlib;
# test/python.sh). Idempotent; uses sudo when not root.
set -euo pipefail
packages=(postgresql-15 postgresql-server-dev-15 postgresql-common postgresql-15-cron
          g++ make libeigen3-dev libboost-dev libboost-math-dev libgtest-dev
          python3 python3-mpmath ca-certificates
          python3-psycopg2 python3-numpy python3-pandas python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# Debian's postgresql-common creates a default cluster on install; it is not
# used (tests and the demo run throwaway clusters through pg_virtualenv).
echo "setup: ok ($(pg_config --version), $(g++ --version | head -1))"
