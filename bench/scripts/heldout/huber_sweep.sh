#!/usr/bin/env bash
# The sweeps behind Huber's default (kDefaultL2Huber, kDefaultL2HuberGaussian,
# kHuberBoltonNE in include/dperm/planning/plan_release.hpp; kHuberIterationsScale
# and kHuberMaxDefaultIterations in src/core/algorithms/dp_gd.cpp), on WINE and
# BIKE, 5 seeds, dperm's all-defaults call with one knob overridden through the
# held-out driver's environment (bench/scripts/heldout/heldout_main.cpp):
#   DPERM_HELDOUT_L2_NE=c      l2 = c / (n epsilon) (bolton at Huber's l2 > 0)
#   DPERM_HELDOUT_ITERATIONS=T dp_gd's T (delta > 0, l2 = 0)
# then bench/scripts/heldout/huber_sweep.py writes bench/reports/heldout_huber.md.
# The "before" and "after" CSVs are plain --default-only runs of the code
# before and after the change (bench/results/huber_{before,after}_*.csv).
# Usage: bash bench/scripts/heldout/huber_sweep.sh [--after]   (--after: only the "after" runs, 10 seeds)
set -euo pipefail
cd "$(dirname "$0")/../../.."
run() {  # run CSV DELTA [extra heldout.sh args]
  local csv=$1 delta=$2
  shift 2
  bash bench/scripts/heldout/heldout.sh --datasets wine bike --seeds 5 --dperm-only --default-only --delta "$delta" \
    --csv "bench/results/$csv" --out /dev/null "$@" > /dev/null
}
if [ "${1:-}" = --after ]; then  # 10 seeds: the check against the mean
  run huber_after_0.csv 0 --seeds 10
  run huber_after_1e-06.csv 1e-06 --seeds 10
else
  for c in 50 100 200; do DPERM_HELDOUT_L2_NE=$c run "huber_l2ne_$c.csv" 0; done
  for c in 100 200; do
    DPERM_HELDOUT_L2_NE=$c bash bench/scripts/heldout/heldout.sh --datasets wine --eps 0.1 --seeds 5 --dperm-only \
      --default-only --delta 1e-06 --csv "bench/results/huber_gauss_l2ne_$c.csv" --out /dev/null > /dev/null
  done
  for t in 300 1000 3000; do DPERM_HELDOUT_ITERATIONS=$t run "huber_T_$t.csv" 1e-06; done
fi
/usr/bin/python3 bench/scripts/heldout/huber_sweep.py > bench/reports/heldout_huber.md
