#!/usr/bin/env bash
# bench/reports/heldout_pure_blend.md: the pure default between n epsilon =
# 100 d and 300 d (the blend of the window's and the objective rule's
# constants, the intercept fitted; include/dperm/planning/plan_release.hpp)
# against the rule it replaced (0.2 d / (n epsilon) with stage 0), each
# against diffprivlib's best-mu oracle of its own run. The "before" CSV is
# kept in the repository (bench/results/pure_blend_before.csv: the delta = 0
# grid of docs/heldout.md at dperm commit 71e3644,
#   bash bench/scripts/heldout/heldout.sh --default-only --delta 0 --seeds 10);
# this script reruns that grid with the current build into
# bench/results/heldout_grid_0.csv (the same job list, so the same noise
# seeds) and compares.
# Usage: bash bench/scripts/heldout/pure_blend.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash bench/scripts/heldout/heldout.sh --default-only --delta 0 --seeds 10 --csv bench/results/heldout_grid_0.csv \
  --command "bash bench/scripts/heldout/heldout.sh --default-only --delta 0 --seeds 10"
(cd bench && /usr/bin/python3 scripts/heldout/pure_blend.py --before results/pure_blend_before.csv \
  --after results/heldout_grid_0.csv --command "bash bench/scripts/heldout/pure_blend.sh, dperm commit $(git rev-parse --short HEAD)") \
  > bench/reports/heldout_pure_blend.md
echo "pure_blend: wrote bench/reports/heldout_pure_blend.md"
