#!/usr/bin/env bash
# bench/reports/heldout_pure_window.md: the pure default's window rule
# (objective at 4.5 sqrt(d) / (n epsilon), the intercept a coordinate, for
# 5 d <= n epsilon < 100 d,
# include/dperm/planning/plan_release.hpp) against the rule it replaced
# (bolton at 150 / (n epsilon) below 100 d), each against diffprivlib's
# best-mu oracle of its own run. The "before" CSV is kept in the repository
# (bench/results/pure_window_before.csv: dperm commit 5bb92a1,
#   bash bench/scripts/heldout/heldout.sh --datasets adult bank creditcard --seeds 10 --eps 0.1 --delta 0 --default-only
#   bash bench/scripts/heldout/heldout.sh --datasets adult bank creditcard --seeds 10 --eps 0.05 0.025 --delta 0 --default-only
# concatenated); this script reruns "after" with the current build.
# Usage: bash bench/scripts/heldout/pure_window.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash bench/scripts/heldout/heldout.sh --datasets adult bank creditcard --seeds 10 --eps 0.1 0.05 0.025 0.0125 --delta 0 \
  --default-only --csv bench/results/pure_window_after.csv
(cd bench && /usr/bin/python3 scripts/heldout/pure_window.py --before results/pure_window_before.csv \
  --after results/pure_window_after.csv --command "bash bench/scripts/heldout/pure_window.sh, dperm commit $(git rev-parse --short HEAD)") \
  > bench/reports/heldout_pure_window.md
echo "pure_window: wrote bench/reports/heldout_pure_window.md"
