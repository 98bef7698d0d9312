#!/usr/bin/env bash
# Fuzz test of dp_model input: >= 10^4 structure-aware mutations of valid
# models through the text cast, the jsonb cast and binary COPY
# (test/fuzz_model.py); every accepted model is then used by every function
# that reads one. No crash, no internal error (XX000/XX001/XX002).
#
#   pg_virtualenv -t -o max_worker_processes=16 bash test/fuzz_model.sh
#
# Settings (environment): FUZZ_MODEL_N inputs (10000), FUZZ_MODEL_SEED,
# FUZZ_MODEL_WORKERS psql sessions (4).
set -uo pipefail
cd "$(dirname "$0")/.."

. test/server_log.sh
run_fuzz_with_log fuzz_model test/fuzz_model.py "scripts and inputs"
