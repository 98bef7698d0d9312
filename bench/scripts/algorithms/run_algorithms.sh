#!/usr/bin/env bash
# One command for the algorithm benchmark (bench/reports/algorithms.md and its plots):
# installs what the harness needs (the project's setup, python3-numpy,
# python3-matplotlib, dataset-fashion-mnist), builds and installs dperm,
# starts a throwaway PostgreSQL 15 cluster, loads the five Table 2 datasets
# and Fashion-MNIST, runs bench/scripts/algorithms/algorithms.py and writes bench/reports/algorithms.md,
# bench/reports/algorithms.json and bench/reports/utility_*.png.
# Usage: bash bench/scripts/algorithms/run_algorithms.sh [algorithms.py options, e.g. --seeds 3]
set -euo pipefail
cd "$(dirname "$0")/../../.."

bash scripts/setup.sh
py=/usr/bin/python3   # Debian's numpy/matplotlib serve Debian's interpreter
need=()
$py -c 'import numpy' 2>/dev/null || need+=(python3-numpy)
$py -c 'import matplotlib' 2>/dev/null || need+=(python3-matplotlib)
[ -d /usr/share/datasets/fashion-mnist ] || need+=(dataset-fashion-mnist)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${need[@]}"
fi

make -s && make -s install

cmd="bash bench/scripts/algorithms/run_algorithms.sh${*:+ $*}"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
mkdir -p bench/reports
pg_virtualenv -t -o max_worker_processes=16 -o shared_buffers=1GB bash -c '
  set -euo pipefail
  py=$0; out=$1; cmd=$2; shift 2
  $py bench/load_datasets.py --load all
  case " $* " in *" --no-fashion "*) ;; *) $py bench/load_datasets.py --load fashion fashion_test ;; esac
  psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION dperm"
  $py bench/scripts/algorithms/algorithms.py --command "$cmd" --json bench/reports/algorithms.json --plots bench/reports "$@" > "$out"
' "$py" "$out" "$cmd" "$@" >&2
cp "$out" bench/reports/algorithms.md && chmod 644 bench/reports/algorithms.md
cat bench/reports/algorithms.md
