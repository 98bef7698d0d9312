#!/usr/bin/env python3
"""The held-out grid of docs/heldout.md: dperm's all-defaults call against
diffprivlib 0.6.5's default and its best-mu oracle, at delta = 0 and delta > 0.

Reads the per-seed CSVs that `bench/scripts/heldout/heldout.sh --default-only --delta D`
writes (one per delta; bench/scripts/heldout/heldout_grid.sh runs both) and writes one
markdown report: per dataset and epsilon, accuracy, balanced accuracy and
ROC AUC (classification) or RMSE (Huber), each with a two-sided
Mann-Whitney verdict over the seeds (p < 0.05) in dperm's view, the share of
test rows predicted positive, and the summary counts the issue asks for.

Usage: heldout_grid.py --run DELTA CSV [--run DELTA CSV ...] --out FILE --command TEXT
"""
import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu

NO_L2 = "dperm default, no l2"
DPL_BEST = "diffprivlib, at the same μ"
DPL_DEFAULT = "diffprivlib, defaults (C = 1)"
TITLES = {"bank": "BANK", "adult": "ADULT", "creditcard": "CREDIT", "bike": "BIKE", "wine": "WINE"}
CLASS_METRICS = ("acc", "bacc", "auc")
NAMES = {"acc": "accuracy", "bacc": "balanced accuracy", "auc": "ROC AUC", "rmse": "RMSE"}
HIGHER = {"acc": True, "bacc": True, "auc": True, "rmse": False}


def values(df, ds, method, eps, metric, l2=None):
    c = df[(df.dataset == ds) & (df.method == method)]
    if eps is not None:
        c = c[np.isclose(c.eps, eps)] if np.isfinite(eps) else c[~np.isfinite(c.eps)]
    if l2 is not None:
        c = c[np.isclose(c.l2, l2)]
    return c.sort_values("seed")[metric].to_numpy(dtype=float)


def best_l2(df, ds, method, eps, metric):
    """The oracle: the grid's mu with the best mean *test* metric."""
    c = df[(df.dataset == ds) & (df.method == method) & np.isclose(df.eps, eps)]
    means = c.groupby("l2")[metric].mean()
    if means.empty:
        return None
    return float(means.idxmax() if HIGHER[metric] else means.idxmin())


def verdict(a, b, metric):
    if len(a) < 2 or len(b) < 2 or (np.ptp(np.concatenate([a, b])) == 0):
        return "tie"
    p = mannwhitneyu(a, b, alternative="two-sided").pvalue
    if p >= 0.05:
        return "tie"
    better = a.mean() > b.mean() if HIGHER[metric] else a.mean() < b.mean()
    return "win" if better else "loss"


def ms(v):
    if len(v) == 0:
        return "—"
    se = np.std(v, ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0.0
    fmt = (lambda x: f"{x:.4f}") if abs(v.mean()) < 10 else (lambda x: f"{x:.1f}")
    return f"{fmt(v.mean())} ± {fmt(se)}"


def one_class(pos):
    """A cell predicts one class when most seeds put every test row on one side."""
    return len(pos) > 0 and np.mean((pos <= 0.0) | (pos >= 1.0)) > 0.5


def bold(v):
    return v if v == "tie" else f"**{v}**"


def grid(df, delta, w):
    tally = {(m, peer): {"win": 0, "tie": 0, "loss": 0}
             for m in CLASS_METRICS + ("rmse",) for peer in ("oracle", "default", "mean")}
    one = {"dperm": 0, "oracle": 0, "cells": 0, "dperm_only": []}
    datasets = [d for d in TITLES if d in set(df.dataset)]
    eps_all = sorted(e for e in df[np.isfinite(df.eps)].eps.unique())
    logistic = [d for d in datasets if "auc" in df[df.dataset == d].columns
                and df[(df.dataset == d)]["auc"].notna().any()]
    regression = [d for d in datasets if d not in logistic]
    if logistic:
        w(f"### Classification, δ = {delta:g}")
        w("")
        w("| dataset | ε | dperm algorithm | dperm acc | oracle acc [μ] | default acc | vs oracle | vs default "
          "| dperm bal. acc | oracle bal. acc [μ] | vs oracle | vs default "
          "| dperm AUC | oracle AUC [μ] | vs oracle | vs default | positive share: dperm / oracle (acc) / test |")
        w("|---|---:|---|---:|---:|---:|:-:|:-:|---:|---:|:-:|:-:|---:|---:|:-:|:-:|---|")
        for ds in logistic:
            truth = df[(df.dataset == ds) & (df.method == "majority class")]
            for eps in eps_all:
                a = {m: values(df, ds, NO_L2, eps, m) for m in CLASS_METRICS + ("pos",)}
                if len(a["acc"]) == 0:
                    continue
                algo = ", ".join(sorted(set(df[(df.dataset == ds) & (df.method == NO_L2)
                                               & np.isclose(df.eps, eps)].algorithm)))
                cells = []
                for m in CLASS_METRICS:
                    mu = best_l2(df, ds, DPL_BEST, eps, m)
                    o = values(df, ds, DPL_BEST, eps, m, mu)
                    dd = values(df, ds, DPL_DEFAULT, eps, m)
                    vo, vd = verdict(a[m], o, m), verdict(a[m], dd, m)
                    tally[(m, "oracle")][vo] += 1
                    tally[(m, "default")][vd] += 1
                    cells.append((m, mu, o, dd, vo, vd))
                mu_acc = cells[0][1]
                opos = values(df, ds, DPL_BEST, eps, "pos", mu_acc)
                one["cells"] += 1
                d1, o1 = one_class(a["pos"]), one_class(opos)
                one["dperm"] += d1
                one["oracle"] += o1
                if d1 and not o1:
                    one["dperm_only"].append(f"{TITLES[ds]} ε = {eps:g}")
                test_pos = truth["test_pos"].mean() if "test_pos" in truth.columns else np.nan
                row = f"| {TITLES[ds]} | {eps:g} | {algo} | {ms(a['acc'])} | {ms(cells[0][2])} [{cells[0][1]:g}] | " \
                      f"{ms(cells[0][3])} | {bold(cells[0][4])} | {bold(cells[0][5])} | "
                row += f"{ms(a['bacc'])} | {ms(cells[1][2])} [{cells[1][1]:g}] | {bold(cells[1][4])} | {bold(cells[1][5])} | "
                row += f"{ms(a['auc'])} | {ms(cells[2][2])} [{cells[2][1]:g}] | {bold(cells[2][4])} | {bold(cells[2][5])} | "
                row += f"{a['pos'].mean():.3f} / {opos.mean():.3f} / {test_pos:.3f} |"
                w(row)
        w("")
    if regression:
        w(f"### Huber, δ = {delta:g} (test RMSE in the target's units)")
        w("")
        w("| dataset | ε | dperm algorithm | dperm | training mean | vs mean | dperm seconds | "
          "diffprivlib LinearRegression, clipped to [0, 1] | vs diffprivlib |")
        w("|---|---:|---|---:|---:|:-:|---:|---:|:-:|")
        for ds in regression:
            base = values(df, ds, "training mean", np.inf, "rmse")
            for eps in eps_all:
                a = values(df, ds, NO_L2, eps, "rmse")
                if len(a) == 0:
                    continue
                c = df[(df.dataset == ds) & (df.method == NO_L2) & np.isclose(df.eps, eps)]
                algo = ", ".join(sorted(set(c.algorithm)))
                dc = values(df, ds, "diffprivlib LinearRegression, clipped to [0, 1]", eps, "rmse")
                vm, vd = verdict(a, base, "rmse"), verdict(a, dc, "rmse")
                tally[("rmse", "mean")][vm] += 1
                tally[("rmse", "default")][vd] += 1
                w(f"| {TITLES[ds]} | {eps:g} | {algo} | {ms(a)} | {ms(base)} | {bold(vm)} | "
                  f"{c.seconds.mean():.3f} | {ms(dc)} | {bold(vd)} |")
        w("")
    return tally, one


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", nargs=2, action="append", metavar=("DELTA", "CSV"), required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="bash bench/scripts/heldout/heldout_grid.sh")
    args = ap.parse_args()
    out = []
    w = out.append
    w("# Held-out quality of dperm's defaults against diffprivlib")
    w("")
    w("Generated by `bench/scripts/heldout/heldout_grid.py` from the per-seed CSVs of `bench/scripts/heldout/heldout.sh --default-only` "
      "(one run per δ). Reproduce: `" + args.command + "`.")
    w("")
    summaries = []
    for delta_text, csv in args.run:
        delta = float(delta_text)
        meta = json.loads(Path(csv).with_suffix(".json").read_text())["meta"]
        w(f"* δ = {delta:g}: `{meta['command']}` — {meta['date']}, dperm commit {meta['commit']}, "
          f"diffprivlib {meta['dpl_version']}, {meta['machine']}, {meta['runtime']:.0f} s")
    w("")
    w("**Method.** The five sets of `../shared/data` preprocessed by `bench/load_datasets.py` (rows of norm ≤ 1, "
      "features in [0, 1]; the same preprocessing for every method, outside both tools' accounting), 70/30 "
      "splits per seed. **dperm**: the all-defaults call — `dp_options(epsilon => ε)` with δ = 0 or "
      "`delta => 1e-6`, nothing else (DefaultL2, DefaultAlgorithm, the private intercept offset). "
      "**diffprivlib default**: `LogisticRegression(epsilon=ε, data_norm=1)` (C = 1); **oracle**: diffprivlib at the "
      "μ of the grid {1e-4, 1e-3, 1e-2, 0.1} with the best mean *test* metric, per metric (selection on the "
      "test split: an upper bound on any private choice). diffprivlib is pure ε-DP in both grids. Verdicts: "
      "two-sided Mann–Whitney over the seeds, p < 0.05, dperm's view. Balanced accuracy: the mean of the "
      "true-positive and true-negative rates at dperm's decision rule (margin > 0). *Positive share*: the "
      "share of test rows predicted positive (dperm / the accuracy oracle / the truth); a cell *predicts one "
      "class* when most seeds predict every test row the same. Huber: dperm's RMSE against the training "
      "mean and diffprivlib's LinearRegression (public bounds [0, 1], predictions clipped to [0, 1]).")
    w("")
    for delta_text, csv in args.run:
        delta = float(delta_text)
        df = pd.read_csv(csv)
        w(f"## δ = {delta:g}")
        w("")
        tally, one = grid(df, delta, w)
        text = []
        for m in CLASS_METRICS:
            o, d = tally[(m, "oracle")], tally[(m, "default")]
            if sum(o.values()):
                text.append(f"{NAMES[m]}: {o['win']} / {o['tie']} / {o['loss']} against the oracle, "
                            f"{d['win']} / {d['tie']} / {d['loss']} against diffprivlib's default")
        r = tally[("rmse", "mean")]
        if sum(r.values()):
            text.append(f"Huber RMSE: {r['win']} / {r['tie']} / {r['loss']} against the training mean, "
                        f"{tally[('rmse', 'default')]['win']} / {tally[('rmse', 'default')]['tie']} / "
                        f"{tally[('rmse', 'default')]['loss']} against diffprivlib")
        if one["cells"]:
            text.append(f"one class predicted in {one['dperm']} of {one['cells']} cells by dperm, "
                        f"{one['oracle']} by the accuracy oracle"
                        + (f" (dperm only: {', '.join(one['dperm_only'])})" if one["dperm_only"] else ""))
        summary = f"**Summary, δ = {delta:g}** (win / tie / loss, dperm's view): " + "; ".join(text) + "."
        summaries.append(summary)
        w(summary)
        w("")
    out[4:4] = summaries + [""]
    Path(args.out).write_text("\n".join(out) + "\n")
    print("\n".join(summaries))


if __name__ == "__main__":
    main()
