#!/usr/bin/env bash
# The main job end to end on a fresh Debian machine: install dependencies,
# build and install dperm, start a throwaway PostgreSQL 15 cluster, load the
# BANK dataset's raw columns, train a private logistic regression through a
# feature spec, print the model, its coefficients by column name and its
# ledger row. The cluster is dropped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
make -s -j"$(nproc)"
$sudo make -s install
BANK_CSV="${DPERM_DATA_DIR:-$(cd .. && pwd)/shared/data/raw}/bank-full.csv.gz"
export BANK_CSV
pg_virtualenv -t -o max_worker_processes=16 bash -c '
  set -e
  psql -X -v ON_ERROR_STOP=1 -v bank_csv="$BANK_CSV" -f scripts/demo.sql'
