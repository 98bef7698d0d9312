#!/usr/bin/env bash
# The doc-test: every ```sql block of README.md and docs/*.md runs against a
# real server with dperm installed, in order, one database per file; a
# statement that errors fails the test (file:line and the error), and a
# block marked <!-- doc-test: expect-error SQLSTATE --> must fail with that
# SQLSTATE (test/doc_test.py). Blocks that read BANK and the other datasets
# load them from $DPERM_SHARED/data/raw first. Run inside pg_virtualenv -t:
#   pg_virtualenv -t -o max_worker_processes=16 bash test/doc_test.sh [FILE.md...]
set -euo pipefail
cd "$(dirname "$0")/.."
export DPERM_SHARED=${DPERM_SHARED:-$(cd .. && pwd)/shared}
exec /usr/bin/python3 test/doc_test.py "$@"
