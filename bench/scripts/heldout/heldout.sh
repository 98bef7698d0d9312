#!/usr/bin/env bash
# Held-out quality benchmark: dperm's default against
# diffprivlib 0.6.5, the non-private ceiling and the trivial baselines on the
# five datasets of ../shared/data (70/30 split per seed). Builds the core,
# compiles bench/scripts/heldout/heldout_main.cpp against src/core/*/*.o, unpacks
# diffprivlib from ../shared/peers into a temporary directory, installs
# Debian's numpy/scipy/scikit-learn/pandas when missing, runs bench/scripts/heldout/heldout.py
# and writes bench/reports/heldout.md (and stdout) plus bench/results/heldout_runs.csv.
# Extra arguments go to bench/scripts/heldout/heldout.py (--datasets, --seeds, --eps, --l2,
# --out, --csv); e.g. a smoke run:
#   bash bench/scripts/heldout/heldout.sh --datasets wine --seeds 2 --out /tmp/heldout.md
# Usage: bash bench/scripts/heldout/heldout.sh [options]
set -euo pipefail
cd "$(dirname "$0")/../../.."

# Debian's Python stack (the versions diffprivlib 0.6.5 was checked with).
py=/usr/bin/python3
packages=(python3 python3-numpy python3-scipy python3-sklearn python3-pandas)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "heldout: installing ${missing[*]}" >&2
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

source bench/scripts/heldout/heldout_setup.sh

cmd="bash bench/scripts/heldout/heldout.sh${*:+ $*}"
PYTHONPATH="$tmp/diffprivlib-0.6.5" nice -n 10 "$py" bench/scripts/heldout/heldout.py \
  --driver "$tmp/heldout_main" --data-dir "$shared/data/raw" --command "$cmd" "$@"
