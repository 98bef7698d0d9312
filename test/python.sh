#!/usr/bin/env bash
# The Python package (python/dperm) against a real server: loads BANK's raw
# rows into bank_raw (python/tests/bank.py, from $DPERM_SHARED/data/raw),
# runs the package's tests (python/tests/test_package.py, unittest) and then
# every ```python block of docs/python.md, in order, in one interpreter, in a
# database of their own (test/python_doc.py). Debian's python3 and its
# packages (scripts/setup.sh). Run inside pg_virtualenv -t:
#   pg_virtualenv -t bash test/python.sh
# The pictures go to $DPERM_PY_OUT (default: a temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
export DPERM_SHARED=${DPERM_SHARED:-$(cd .. && pwd)/shared}
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
export DPERM_PY_OUT=${DPERM_PY_OUT:-$(mktemp -d -t dperm-py.XXXXXX)}
py=/usr/bin/python3

createdb dperm_py
PGDATABASE=dperm_py $py python/tests/bank.py
PGDATABASE=dperm_py $py python/tests/test_package.py

createdb dperm_py_doc
psql -X -q -d dperm_py_doc -c "CREATE EXTENSION dperm"
PGDATABASE=dperm_py_doc $py python/tests/bank.py
mkdir -p "$DPERM_PY_OUT/doc"
PGDATABASE=dperm_py_doc DPERM_PY_OUT=$DPERM_PY_OUT/doc $py test/python_doc.py docs/python.md
echo "python: package tests and docs/python.md passed (pictures in $DPERM_PY_OUT)"
