#!/usr/bin/env python3
"""The private intercept offset against a fitted intercept, held out.

Pairs the default release (no l2, no algorithm given) of two runs of
bench/scripts/heldout/heldout.py that differ only in the intercept: the main run
(bench/results/heldout_runs.csv, `intercept => 'offset'`, the default) and
one with DPERM_HELDOUT_INTERCEPT=fitted, e.g.

  DPERM_HELDOUT_INTERCEPT=fitted bash bench/scripts/heldout/heldout.sh --dperm-only --algos-only \
    --seeds 10 --out /tmp/fitted.md --csv bench/results/heldout_fitted_intercept.csv

Same splits and training seeds, so the per-seed differences are paired.
Prints a markdown table (bench/reports/heldout_offset.md).
"""
import argparse
import pathlib

import numpy as np
import pandas as pd

REPO = pathlib.Path(__file__).resolve().parents[3]
NAMES = {"bank": "BANK", "adult": "ADULT", "creditcard": "CREDIT", "bike": "BIKE", "wine": "WINE"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--offset", default=str(REPO / "bench" / "results" / "heldout_runs.csv"))
    ap.add_argument("--fitted", default=str(REPO / "bench" / "results" / "heldout_fitted_intercept.csv"))
    args = ap.parse_args()
    method = "dperm default, no l2"
    off = pd.read_csv(args.offset)
    fit = pd.read_csv(args.fitted)
    j = off[off.method == method].merge(fit[fit.method == method], on=["dataset", "eps", "seed"],
                                        suffixes=("_off", "_fit"))
    print("| dataset | ε | metric | offset (default) | fitted | offset − fitted (paired mean ± s.e.) |")
    print("|---|---:|---|---:|---:|---:|")
    for ds, name in NAMES.items():
        for eps in sorted(j[j.dataset == ds].eps.unique()):
            s = j[(j.dataset == ds) & np.isclose(j.eps, eps)]
            for met in ["acc", "auc"] if ds in ("bank", "adult", "creditcard") else ["rmse"]:
                a, b = s[met + "_off"].values, s[met + "_fit"].values
                n = len(a)
                d = a - b
                se = lambda v: v.std(ddof=1) / np.sqrt(n)
                print(f"| {name} | {eps:g} | {met} | {a.mean():.4f} ± {se(a):.4f} | "
                      f"{b.mean():.4f} ± {se(b):.4f} | {d.mean():+.4f} ± {se(d):.4f} |")


if __name__ == "__main__":
    main()
