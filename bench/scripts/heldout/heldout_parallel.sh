#!/usr/bin/env bash
# bench/scripts/heldout/heldout.sh split into parts that run side by side (one process per
# classification dataset and eps, one for the regression sets), then one report from the parts'
# CSVs (bench/scripts/heldout/heldout.py --from-csv): the same jobs, seeds and splits as
# bench/scripts/heldout/heldout.sh, in less wall time on a machine with spare cores.
# Writes bench/reports/heldout.md and bench/results/heldout_runs.csv (+ bench/results/heldout_part_*).
# Usage: bash bench/scripts/heldout/heldout_parallel.sh [--seeds N]
set -euo pipefail
cd "$(dirname "$0")/../../.."
source bench/scripts/heldout/heldout_setup.sh
cmd="bash bench/scripts/heldout/heldout_parallel.sh${*:+ $*}"
parts=()
run() {  # tag, then heldout.py arguments
  local tag=$1; shift
  parts+=("bench/results/heldout_part_$tag.csv")
  PYTHONPATH="$tmp/diffprivlib-0.6.5" nice -n 10 /usr/bin/python3 bench/scripts/heldout/heldout.py \
    --driver "$tmp/heldout_main" --data-dir "$shared/data/raw" --command "$cmd" \
    --csv "bench/results/heldout_part_$tag.csv" --out "$tmp/$tag.md" "$@" \
    > "$tmp/$tag.log" 2>&1 || { cat "$tmp/$tag.log" >&2; return 1; } &
}
for ds in bank adult creditcard; do
  for eps in 0.1 0.5 1 2; do run "${ds}_$eps" --datasets $ds --eps $eps "$@"; done
done
run regression --datasets bike wine "$@"
wait
for p in "${parts[@]}"; do [ -s "$p" ] || { echo "heldout_parallel: $p missing" >&2; exit 1; }; done
PYTHONPATH="$tmp/diffprivlib-0.6.5" /usr/bin/python3 bench/scripts/heldout/heldout.py --driver none \
  --from-csv "${parts[@]}" > /dev/null
/usr/bin/python3 - "${parts[@]}" <<'PY'
import sys, pandas as pd
pd.concat([pd.read_csv(f) for f in sys.argv[1:]]).to_csv("bench/results/heldout_runs.csv", index=False)
PY
echo "heldout_parallel: wrote bench/reports/heldout.md and bench/results/heldout_runs.csv" >&2
