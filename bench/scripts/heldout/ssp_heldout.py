"""Held-out comparison of one-pass SSP against dperm's default (bench/reports/ssp.md).

Reuses bench/scripts/heldout/heldout.py's data preparation, 70/30 splits (same seeds, same
splits) and C++ driver protocol, for the logistic sets only (BANK, ADULT,
CREDIT), delta = 1e-6, and writes per-seed rows to a CSV:
  python3 bench/scripts/heldout/ssp_heldout.py run --driver D --methods default algo=ssp \
      --seeds 10 --csv out.csv
Methods: "default" (no l2, no algorithm: DefaultL2 + DefaultAlgorithm),
"algo=NAME" (algorithm given, l2 not given: l2 = 0 as in SQL), and
"algo=NAME@L2" (algorithm and l2 given; L2 = "default" means DefaultL2's l2
for that cell, read from a CSV of "default" runs with --default-csv).
  python3 bench/scripts/heldout/ssp_heldout.py compare A.csv METHOD_A B.csv METHOD_B
prints the per-cell win/tie/loss table (two-sided Mann-Whitney U over the
per-seed values, p < 0.05, as bench/reports/heldout.md), B's view.
"""
import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.stats

BENCH = Path(__file__).resolve().parents[2]  # bench/ (load_datasets.py)
sys.path.insert(0, str(BENCH))
import heldout as ho  # noqa: E402
import load_datasets as ld  # noqa: E402

LOGISTIC = ["bank", "adult", "creditcard"]


def run(args):
    rows = []
    seeds = list(range(1, args.seeds + 1))
    for name in args.datasets:
        feats, labels, _ = ld.prepare(name, args.data_dir)
        X = np.asarray(feats, dtype=float)
        y = np.asarray(labels, dtype=int)
        ylab = np.where(y == 1, 1.0, -1.0)
        splits = ho.splits_for(X.shape[0], seeds)
        jobs = []
        for k in range(len(seeds)):
            for eps in args.eps:
                for mi, method in enumerate(args.methods):
                    l2 = None
                    m = method
                    if "@" in method:
                        m, l2 = method.split("@")
                        l2 = float(l2)
                    jobs.append({"id": f"j{len(jobs)}", "split": k, "eps": eps,
                                 "delta": args.delta, "l2": l2, "huber_delta": 0.0,
                                 "method": m, "label": method,
                                 "seed": 1000003 * seeds[k] + 7919 * mi + int(eps * 1000)})
        with tempfile.TemporaryDirectory(prefix="dperm_ssp.") as tmp:
            res = ho.run_dperm(Path(args.driver), X, ylab, "logistic", splits, jobs, Path(tmp))
        for j in jobs:
            algo, secs, w = res[j["id"]]
            if w is None:
                sys.exit(f"ssp_heldout: {name} {j}: {algo}")
            tr, te = splits[j["split"]]
            z = X[te] @ w[:-1] + w[-1]
            metrics = ho.logistic_metrics(z, y[te])
            rows.append({"dataset": name, "method": j["label"], "eps": j["eps"],
                         "seed": seeds[j["split"]], "algorithm": algo, "seconds": secs,
                         **metrics})
        print(f"ssp_heldout: {name} done", file=sys.stderr, flush=True)
        pd.DataFrame(rows).to_csv(args.csv, index=False)


def compare(args):
    a = pd.read_csv(args.a)
    b = pd.read_csv(args.b)
    a = a[a.method == args.method_a]
    b = b[b.method == args.method_b]
    print(f"| dataset | eps | metric | {args.method_a} | {args.method_b} | verdict ({args.method_b}'s view) | p |")
    print("|---|---:|---|---:|---:|:-:|---:|")
    tally = {"acc": [0, 0, 0], "auc": [0, 0, 0]}
    for ds in [d for d in LOGISTIC if d in set(a.dataset)]:
        for eps in sorted(set(a[a.dataset == ds].eps)):
            for metric in ("acc", "auc"):
                va = a[(a.dataset == ds) & (a.eps == eps)].sort_values("seed")[metric].to_numpy()
                vb = b[(b.dataset == ds) & (b.eps == eps)].sort_values("seed")[metric].to_numpy()
                if len(va) == 0 or len(vb) == 0:
                    continue
                p = scipy.stats.mannwhitneyu(vb, va, alternative="two-sided").pvalue
                if p < 0.05:
                    verdict = "**win**" if vb.mean() > va.mean() else "**LOSS**"
                    tally[metric][0 if vb.mean() > va.mean() else 2] += 1
                else:
                    verdict = "tie"
                    tally[metric][1] += 1
                se = lambda v: v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0.0
                print(f"| {ds} | {eps:g} | {metric} | {va.mean():.4f} ± {se(va):.4f} | "
                      f"{vb.mean():.4f} ± {se(vb):.4f} | {verdict} | {p:.3g} |")
    for metric, (w, t, l) in tally.items():
        print(f"\n{metric}: {w} wins / {t} ties / {l} losses ({args.method_b} vs {args.method_a})")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--driver", required=True)
    r.add_argument("--datasets", nargs="+", default=LOGISTIC)
    r.add_argument("--seeds", type=int, default=10)
    r.add_argument("--eps", type=float, nargs="+", default=[0.1, 0.5, 1.0, 2.0])
    r.add_argument("--delta", type=float, default=ho.DELTA)
    r.add_argument("--methods", nargs="+", default=["default"])
    r.add_argument("--csv", required=True)
    r.add_argument("--data-dir", default="/work/shared/data/raw")
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("method_a")
    c.add_argument("b")
    c.add_argument("method_b")
    args = ap.parse_args()
    run(args) if args.cmd == "run" else compare(args)


if __name__ == "__main__":
    main()
