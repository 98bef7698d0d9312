#!/usr/bin/env bash
# Excess empirical risk of every algorithm's default plan against the zero
# model: the tables of bench/reports/algorithms.md, "Defaults
# against the zero model". Runs the disabled unit test DefaultRiskTable.Print
# (test/unit/test_default_risk.cpp), which loads the real datasets through
# bench/load_datasets.py. Settings (environment, space-separated):
#   DPERM_RISK_PROBLEMS   dataset:loss:l2 ... (wine2 / wine3: WINE relabelled
#                         binary / three classes; default "bank:logistic:0.01")
#   DPERM_RISK_EPSILONS   default "0.1 1 10 100000"
#   DPERM_RISK_SEEDS      training seeds 1..N, default 3
#   DPERM_RISK_ALGORITHMS algorithm names, default all
# Example (the docs' SVRG table):
#   DPERM_RISK_ALGORITHMS="dp_svrg dp_svrg_pp" \
#   DPERM_RISK_PROBLEMS="bank:logistic:0.01 wine:huber:0.01 wine3:softmax:0.01" \
#     bash bench/scripts/algorithms/default_risk.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
make -s -j2 test/unit/run_unit_tests
DPERM_SHARED="${DPERM_SHARED:-../shared}" ./test/unit/run_unit_tests \
  --gtest_also_run_disabled_tests --gtest_filter='DefaultRiskTable.DISABLED_Print' |
  grep -v '^\[\|^Running main\|^Note: Google Test'
