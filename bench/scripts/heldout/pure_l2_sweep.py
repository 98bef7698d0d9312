#!/usr/bin/env python3
"""The sweep behind kDefaultL2PureObjective (include/dperm/planning/plan_release.hpp):
objective perturbation at delta = 0 over an l2 grid, per dataset and epsilon,
against the default of the time (bolton at 150/(n epsilon)), from the CSVs of

  bash bench/scripts/heldout/heldout.sh --datasets D... --seeds S --dperm-only --delta 0 \\
       --algos objective --algos-only --l2 GRID... --csv FILE

Writes markdown tables (mean test accuracy / balanced accuracy / AUC / share
predicted positive over the seeds) to stdout.
Usage: pure_l2_sweep.py TITLE CSV [CSV ...]
"""
import sys

import numpy as np
import pandas as pd

D = {"bank": 42, "adult": 100, "creditcard": 30}  # features after bench/load_datasets.py


def main():
    title, files = sys.argv[1], sys.argv[2:]
    df = pd.concat([pd.read_csv(f) for f in files])
    print(f"### {title}\n")
    print("| dataset | ε | method | l2 | rule's l2 | accuracy | bal. acc. | AUC | positive share | seconds |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for ds in [d for d in D if d in set(df.dataset)]:
        c = df[df.dataset == ds]
        n = int(round(0.7 * {"bank": 45211, "adult": 32561, "creditcard": 30000}[ds]))
        for eps in sorted(c[np.isfinite(c.eps)].eps.unique()):
            rule = 0.2 * D[ds] / (n * eps)
            for (m, l2), g in c[c.eps == eps].groupby(["method", "l2"], dropna=False):
                if m == "dperm default":
                    continue
                bacc = g["bacc"].mean() if "bacc" in g else float("nan")
                print(f"| {ds} | {eps:g} | {m} | {'—' if pd.isna(l2) else f'{l2:g}'} | "
                      f"{rule:.2e}{' (bolton)' if rule > 2e-3 else ''} | {g.acc.mean():.4f} | {bacc:.4f} | "
                      f"{g.auc.mean():.4f} | {g.pos.mean():.3f} | {g.seconds.mean():.1f} |")
    print()


if __name__ == "__main__":
    main()
