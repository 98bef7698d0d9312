#!/usr/bin/env bash
# The pg_regress schedule (REGRESS in the Makefile) must list exactly the
# files in sql/, each with an expected output.
set -euo pipefail
cd "$(dirname "$0")/.."
scheduled=$(make -s -f Makefile print-regress 2>/dev/null | tr ' ' '\n' | sed '/^$/d' | sort)
on_disk=$(ls sql/*.sql | xargs -n1 basename | sed 's/\.sql$//' | sort)
if [ "$scheduled" != "$on_disk" ]; then
  echo "schedule mismatch:"; diff <(echo "$scheduled") <(echo "$on_disk") || true
  exit 1
fi
for t in $on_disk; do
  [ -f "expected/$t.out" ] || { echo "missing expected/$t.out"; exit 1; }
done
echo "schedule: ok ($(echo "$on_disk" | wc -l) pg_regress files)"
