#!/usr/bin/env bash
# The held-out grid of docs/heldout.md: dperm's all-defaults call against
# diffprivlib 0.6.5's default and best-mu oracle on the five datasets, at
# delta = 0 and delta = 1e-6 (bench/scripts/heldout/heldout.sh --default-only, one run per
# delta, the two in parallel), summarised by bench/scripts/heldout/heldout_grid.py.
# Usage: bash bench/scripts/heldout/heldout_grid.sh [--seeds N] [--datasets ...] [--eps ...]
# Extra arguments go to both bench/scripts/heldout/heldout.sh runs.
set -euo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p bench/results
cmd="bash bench/scripts/heldout/heldout_grid.sh${*:+ $*}"
pids=()
for delta in 0 1e-06; do
  bash bench/scripts/heldout/heldout.sh --default-only --delta "$delta" --csv "bench/results/heldout_grid_$delta.csv" \
    --command "$cmd" "$@" > "bench/results/heldout_grid_$delta.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
/usr/bin/python3 bench/scripts/heldout/heldout_grid.py --run 0 bench/results/heldout_grid_0.csv \
  --run 1e-6 bench/results/heldout_grid_1e-06.csv --out docs/heldout.md --command "$cmd"
