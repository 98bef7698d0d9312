#!/usr/bin/env bash
# The main job end to end on a fresh Debian machine: install dependencies,
# build and install dperm, start a throwaway PostgreSQL 15 cluster, load the
# BANK dataset, train a private logistic regression, print the model and its
# ledger row. The cluster is dropped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
make -s -j"$(nproc)"
$sudo make -s install
pg_virtualenv -t -o max_worker_processes=16 bash -c '
  set -e
  python3 bench/load_datasets.py --load bank
  psql -X -v ON_ERROR_STOP=1 -f scripts/demo.sql'
