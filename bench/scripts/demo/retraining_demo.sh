#!/usr/bin/env bash
# docs/user-guide.md "Named models and retraining", end to end: a throwaway cluster with
# pg_cron, BANK loaded, bench/scripts/demo/retraining_demo.sql run with its statements
# echoed (about two minutes: it waits for two pg_cron runs). Needs dperm
# installed (make install) and postgresql-15-cron (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/../../.."
pg_virtualenv -t -o shared_preload_libraries=pg_cron -o cron.database_name=postgres \
  -o cron.use_background_workers=on -o max_worker_processes=16 bash -c '
  set -e
  python3 bench/load_datasets.py --load bank
  psql -X -e -d postgres -f bench/scripts/demo/retraining_demo.sql'
