#!/usr/bin/env python3
"""dperm algorithm benchmark: every mechanism on the seed papers' datasets.

Two reports, both run through SQL against the database psql reaches through
the PG* environment (bench/scripts/algorithms/run_algorithms.sh sets everything up):

* Table 3 structure (Zhang et al. 2017): for BANK, ADULT, CreditCard
  (logistic) and WINE, BIKE (Huber), excess empirical risk F(w_priv) - F(w_hat)
  (mean +- sd over seeded releases), gradient evaluations and statement time of
  each algorithm at eps in {0.1, 0.5, 1, 2}, delta = 1e-3, l2 in {0, 0.1}, no
  intercept, side by side with the paper's numbers.
* DP-LSSGD Table 2 structure on Fashion-MNIST: test accuracy of multi-class
  logistic regression (dp_softmax, algorithm dp_lssgd) for ls_sigma in
  {0, 1, 2, 3} and eps in {0.1, 0.15, 0.2, 0.25, 0.3}, delta = 1e-5.

Writes a markdown report to stdout, the raw numbers as JSON (--json) and one
utility-vs-epsilon PNG per dataset (--plots DIR, python3-matplotlib).
"""

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import fetch, fmt, git_state, newton, objective, psql  # noqa: E402

EPSILONS = [0.1, 0.5, 1, 2]
DELTA = 1e-3
L2S = [0, 0.1]
# Every algorithm, in documentation order: the SQL names of
# include/dperm/options/algorithms.def (the algorithm table).
ALGORITHMS = re.findall(
    r'^DPERM_ALGORITHM\(\w+, "(\w+)"\)',
    open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "include",
                      "dperm", "options", "algorithms.def"), encoding="utf-8").read(), re.M)
# dataset -> (aggregate, loss)
DATASETS = {
    "bank": ("dp_logreg", "logistic"),
    "adult": ("dp_logreg", "logistic"),
    "creditcard": ("dp_logreg", "logistic"),
    "wine": ("dp_huber", "huber"),
    "bike": ("dp_huber", "huber"),
}
# Zhang et al. 2017 Table 3, "Error, ours (eps, delta)", at eps 0.1 / 0.5 / 1 / 2
# (the paper reports mu in {0, 0.1} for the logistic sets and {0, 0.5} for
# WINE and BIKE; only the cells with our l2 are listed).
PAPER = {
    ("bank", 0): [0.3983, 0.2231, 0.1459, 0.0838],
    ("bank", 0.1): [0.2566, 0.0106, 0.0025, 0.0005],
    ("wine", 0): [0.6061, 0.2487, 0.1713, 0.1110],
}
FASHION_EPSILONS = [0.1, 0.15, 0.2, 0.25, 0.3]
FASHION_LS = [0, 1, 2, 3]
FASHION_DELTA = 1e-5
# DP-LSSGD paper Table 2 (MNIST, not Fashion-MNIST), accuracy %, 5 runs.
LSSGD_PAPER = {
    0: {0.3: "81.74 ± 0.96", 0.25: "81.45 ± 1.59", 0.2: "78.92 ± 1.14", 0.15: "77.03 ± 0.69", 0.1: "73.49 ± 1.60"},
    1: {0.3: "84.21 ± 0.51", 0.25: "83.27 ± 0.35", 0.2: "81.56 ± 0.79", 0.15: "79.46 ± 1.33", 0.1: "76.29 ± 0.53"},
    2: {0.3: "84.23 ± 0.65", 0.25: "83.65 ± 0.76", 0.2: "82.15 ± 0.59", 0.15: "80.77 ± 1.26", 0.1: "76.31 ± 0.93"},
    3: {0.3: "85.11 ± 0.45", 0.25: "82.97 ± 0.48", 0.2: "82.22 ± 0.28", 0.15: "80.81 ± 1.03", 0.1: "77.13 ± 0.77"},
}


def timed_releases(queries):
    """Run queries (one JSON value each) in one session; return (values, ms)."""
    sql = "SET dperm.allow_seed = on;\nSET max_parallel_workers_per_gather = 0;\n\\timing on\n"
    sql += "".join(q + ";\n" for q in queries)
    values, times = [], []
    for line in psql(sql):
        if line.startswith("Time: "):
            times.append(float(line.split()[1]))
        elif line and line not in ("SET", "Timing is on."):
            values.append(line)
    times = times[-len(queries):]  # drop the SET statements' timings
    if len(values) != len(queries) or len(times) != len(queries):
        sys.exit(f"algorithms: expected {len(queries)} results, got {len(values)} / {len(times)}")
    return values, times


def applicable(loss, n, d, options):
    """None if dp_explain accepts the options, else the server's message."""
    import subprocess
    out = subprocess.run(["psql", "-X", "-q", "-At", "-c",
                          f"SELECT dp_explain('{loss}', {n}, {d}, {options})"],
                         capture_output=True, text=True)
    return None if out.returncode == 0 else out.stderr.strip().splitlines()[0]


def gradient_evaluations(plan):
    """Per-row gradients the plan computes (an upper bound for rrpsgd)."""
    if plan.get("gradient_evaluations"):
        return plan["gradient_evaluations"]
    if plan["algorithm"] in ("dp_svrg", "dp_svrg_pp"):
        # a full snapshot gradient per epoch plus two row gradients per inner step
        return plan["iterations"] * plan["n"] + 2 * plan["batch_size"] * plan["noisy_steps"]
    if plan.get("noisy_steps", 0) > 0:
        return plan["noisy_steps"] * plan["batch_size"]
    if plan.get("passes"):
        return plan["passes"] * plan["n"]
    return plan["iterations"] * plan["batch_size"]


def cell(table, agg, algorithm, eps, l2, seeds, f, F_hat):
    """Seeded releases of one (algorithm, eps, l2) cell: excess risks, ms, plan;
    or {"error": message} when the algorithm refuses the setting."""
    opts = (f"dp_options(epsilon => {eps}, delta => {DELTA}, l2 => {l2}, "
            f"fit_intercept => false, algorithm => '{algorithm}'")
    loss = "logistic" if agg == "dp_logreg" else "huber"
    error = applicable(loss, f.n, f.d, opts + ")")
    if error:
        return {"error": error}
    queries = [f"SELECT {agg}(features, label, {opts}, seed => {s}))::jsonb FROM {table}"
               for s in seeds]
    values, ms = timed_releases(queries)
    models = [json.loads(v) for v in values]
    excess = [f(np.array(m["coefficients"]))[0] - F_hat for m in models]
    return {"excess": excess, "ms": ms, "plan": models[0]["plan"]}


def table3(names, algorithms, seeds, results, lines):
    """The Table 3 report for the named datasets."""
    for name in names:
        agg, loss = DATASETS[name]
        X, y = fetch(name, loss)
        n, d = X.shape
        lines.append(f"\n## {name.upper()} ({loss}, n = {n}, d = {d})\n")
        for l2 in L2S:
            f = objective(X, y, loss, l2)
            f.n, f.d = n, d
            w_hat, gnorm, _ = newton(f, d)
            F_hat = f(w_hat)[0]
            lines.append(f"\n### {name.upper()}, l2 = {l2}\n")
            lines.append(f"ŵ by damped Newton: ‖∇F(ŵ)‖ = {gnorm:.1e}, ‖ŵ‖ = "
                         f"{np.linalg.norm(w_hat):.3f}, F(0) − F(ŵ) = "
                         f"{fmt(f(np.zeros(d))[0] - F_hat)}.\n")
            paper = PAPER.get((name, l2))
            head = "| algorithm | " + " | ".join(f"ε = {e}" for e in EPSILONS) + \
                   " | gradient evaluations (ε = 1) | median ms (ε = 1) |"
            lines += [head, "|---|" + "---:|" * (len(EPSILONS) + 2)]
            for algorithm in algorithms:
                cells = [cell(name, agg, algorithm, e, l2, seeds, f, F_hat) for e in EPSILONS]
                for e, c in zip(EPSILONS, cells):
                    results.append({"dataset": name, "l2": l2, "algorithm": algorithm,
                                    "epsilon": e, **c})
                if all("error" in c for c in cells):
                    lines.append(f"| {algorithm} | " + " | ".join("n/a" for _ in cells) +
                                 f" | {cells[0]['error'].replace('|', '/')} | |")
                    continue
                one = cells[EPSILONS.index(1)]
                if "error" in one:
                    one = next(c for c in cells if "error" not in c)
                row = f"| {algorithm} | " + " | ".join(
                    "n/a" if "error" in c else
                    f"{fmt(statistics.mean(c['excess']))} ± {fmt(statistics.stdev(c['excess']))}"
                    for c in cells)
                row += f" | {gradient_evaluations(one['plan']):.3g} | {statistics.median(one['ms']):.1f} |"
                lines.append(row)
            if paper:
                lines.append("| paper Table 3 (output perturbation GD) | " +
                             " | ".join(str(v) for v in paper) + " | | |")


def fashion(seeds, results, lines):
    """The DP-LSSGD Table 2 structure on Fashion-MNIST."""
    n = int(psql("SELECT count(*) FROM fashion")[0])
    n_test = int(psql("SELECT count(*) FROM fashion_test")[0])
    lines += [f"\n## Fashion-MNIST: multi-class logistic regression (n = {n}, "
              f"test {n_test}, d = 784, 10 classes)\n",
              f"Test accuracy (%), mean ± sd over {len(seeds)} seeded releases; "
              f"dp_softmax, algorithm dp_lssgd, δ = {FASHION_DELTA}, default plan "
              "otherwise. Paper: DP-LSSGD Table 2 on MNIST (not Fashion-MNIST, "
              "which is harder: non-private linear models reach about 84% on it "
              "against about 92% on MNIST).\n",
              "| ls_sigma | " + " | ".join(f"ε = {e}" for e in FASHION_EPSILONS) + " | median s (ε = 0.2) |",
              "|---:|" + "---:|" * (len(FASHION_EPSILONS) + 1)]
    for ls in FASHION_LS:
        row, paper_row, secs = f"| {ls} |", f"| paper σ = {ls} |", 0
        for eps in FASHION_EPSILONS:
            opts = (f"dp_options(epsilon => {eps}, delta => {FASHION_DELTA}, classes => 10, "
                    f"algorithm => 'dp_lssgd', ls_sigma => {ls}")
            sql = ("SET dperm.allow_seed = on;\nSET max_parallel_workers_per_gather = 0;\n"
                   "CREATE TEMP TABLE m (seed int, model dp_model);\n\\timing on\n" +
                   "".join(f"INSERT INTO m SELECT {s}, dp_softmax(features, label, {opts}, "
                           f"seed => {s})) FROM fashion;\n" for s in seeds) +
                   "\\timing off\nSELECT 100 * avg((dp_predict_class(m.model, t.features) = t.label)::int) "
                   "FROM m, fashion_test t GROUP BY m.seed ORDER BY m.seed;\n")
            out = psql(sql)
            times = [float(l.split()[1]) / 1000 for l in out if l.startswith("Time: ")]
            acc = [float(l) for l in out if l and l[0].isdigit()]
            elapsed = statistics.median(times[:len(seeds)])
            results.append({"dataset": "fashion", "ls_sigma": ls, "epsilon": eps,
                            "accuracy": acc, "seconds": elapsed})
            row += f" {statistics.mean(acc):.2f} ± {statistics.stdev(acc) if len(acc) > 1 else 0:.2f} |"
            paper_row += f" {LSSGD_PAPER[ls][eps]} |"
            if eps == 0.2:
                secs = elapsed
        lines += [row + f" {secs:.1f} |", paper_row + " |"]


L1_ALGORITHMS = ["dp_gd", "dp_svrg", "dp_svrg_pp"]
L1_SETTINGS = [("bank", 0.01, 0.001), ("bank", 0.01, 0.005), ("wine", 0.01, 0.001), ("wine", 0.01, 0.005)]


def fista_l1(f, d, l1, L_smooth, iters=20000):
    """min f(w) + l1 ||w||_1 by FISTA with step 1/L_smooth (numpy reference)."""
    w = y = np.zeros(d)
    t = 1.0
    for _ in range(iters):
        g = f(y)[1]
        z = y - g / L_smooth
        w_next = np.sign(z) * np.maximum(np.abs(z) - l1 / L_smooth, 0)
        t_next = (1 + np.sqrt(1 + 4 * t * t)) / 2
        y = w_next + (t - 1) / t_next * (w_next - w)
        w, t = w_next, t_next
    return w


def l1_experiment(seeds, results, lines):
    """Sparsity and excess risk of the proximal methods against epsilon."""
    lines += ["\n## L1 and elastic net: sparsity and excess risk against ε\n",
              f"F(w) = 1/n Σ loss + l2/2 ‖w‖² + l1 ‖w‖₁, no intercept, δ = {DELTA}, "
              f"{len(seeds)} seeded releases per cell; the reference optimum is a numpy FISTA solve "
              "(20000 iterations); *zeros* counts exact zero coefficients (mean), against the "
              "reference's count.\n"]
    for name, l2, l1 in L1_SETTINGS:
        agg, loss = DATASETS[name]
        X, y = fetch(name, loss)
        n, d = X.shape
        f0 = objective(X, y, loss, l2)
        beta = (0.25 if loss == "logistic" else 1.0) + l2
        w_ref = fista_l1(f0, d, l1, beta)
        F = lambda w: f0(w)[0] + l1 * np.abs(w).sum()
        F_hat = F(w_ref)
        zeros_ref = int(np.sum(w_ref == 0))
        lines += [f"\n### {name.upper()}, l2 = {l2}, l1 = {l1} (reference: {zeros_ref} of {d} "
                  "coefficients are zero)\n",
                  "| algorithm | " + " | ".join(f"ε = {e}: excess / zeros" for e in EPSILONS) + " |",
                  "|---|" + "---:|" * len(EPSILONS)]
        for algorithm in L1_ALGORITHMS:
            row = f"| {algorithm} |"
            for eps in EPSILONS:
                opts = (f"dp_options(epsilon => {eps}, delta => {DELTA}, l2 => {l2}, l1 => {l1}, "
                        f"fit_intercept => false, algorithm => '{algorithm}'")
                values, ms = timed_releases(
                    [f"SELECT {agg}(features, label, {opts}, seed => {s}))::jsonb FROM {name}"
                     for s in seeds])
                W = [np.array(json.loads(v)["coefficients"]) for v in values]
                ex = [F(w) - F_hat for w in W]
                zeros = [int(np.sum(w == 0)) for w in W]
                results.append({"dataset": name, "l2": l2, "l1": l1, "algorithm": algorithm,
                                "epsilon": eps, "excess": ex, "zeros": zeros, "ms": ms})
                row += f" {fmt(statistics.mean(ex))} / {statistics.mean(zeros):.1f} |"
            lines.append(row)


def plots(results, directory):
    """One utility-vs-epsilon PNG per dataset; returns the file names."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(directory, exist_ok=True)
    colors = plt.get_cmap("tab20")  # one fixed colour per algorithm in every panel
    files = []
    table3 = [r for r in results if "l1" not in r]
    for name in [d for d in DATASETS if any(r["dataset"] == d for r in table3)]:
        fig, axes = plt.subplots(1, len(L2S), figsize=(5 * len(L2S), 3.6))
        for ax, l2 in zip(axes, L2S):
            for alg in dict.fromkeys(r["algorithm"] for r in table3 if r["dataset"] == name):
                color = colors(ALGORITHMS.index(alg) % 20) if alg in ALGORITHMS else None
                rs = [r for r in table3 if r["dataset"] == name and r["l2"] == l2
                      and r["algorithm"] == alg and "error" not in r]
                if not rs:
                    continue
                eps = [r["epsilon"] for r in rs]
                mean = [max(statistics.mean(r["excess"]), 1e-12) for r in rs]
                ax.plot(eps, mean, marker="o", label=alg, color=color)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("ε (δ = 1e-3)")
            ax.set_ylabel("excess empirical risk")
            ax.set_title(f"{name.upper()}, l2 = {l2}")
            ax.grid(True, which="both", alpha=0.3)
        handles = {}
        for ax in axes:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(lab, h)
        fig.legend(handles.values(), handles.keys(), fontsize=8, loc="center right")
        fig.subplots_adjust(right=0.84)
        fig.tight_layout(rect=(0, 0, 0.84, 1))
        path = os.path.join(directory, f"utility_{name}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files.append(path)
    fr = [r for r in results if r["dataset"] == "fashion"]
    if fr:
        fig, ax = plt.subplots(figsize=(5, 3.6))
        for ls in FASHION_LS:
            rs = [r for r in fr if r["ls_sigma"] == ls]
            ax.errorbar([r["epsilon"] for r in rs], [statistics.mean(r["accuracy"]) for r in rs],
                        yerr=[statistics.stdev(r["accuracy"]) if len(r["accuracy"]) > 1 else 0 for r in rs],
                        marker="o", capsize=3, label=f"ls_sigma = {ls}")
        ax.set_xlabel("ε (δ = 1e-5)")
        ax.set_ylabel("test accuracy (%)")
        ax.set_title("Fashion-MNIST, dp_softmax + dp_lssgd")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = os.path.join(directory, "utility_fashion.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files.append(path)
    return files


def main():
    """Run the benchmarks and print the markdown report."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10, help="releases per Table 3 cell")
    ap.add_argument("--fashion-seeds", type=int, default=5, help="releases per Fashion-MNIST cell")
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS), choices=list(DATASETS))
    ap.add_argument("--algorithms", nargs="+", default=ALGORITHMS)
    ap.add_argument("--no-fashion", action="store_true")
    ap.add_argument("--l1-only", action="store_true", help="only the L1 experiment")
    ap.add_argument("--l1-seeds", type=int, default=5)
    ap.add_argument("--json", help="write the raw results here")
    ap.add_argument("--plots", help="directory for the PNG plots")
    ap.add_argument("--command", default="python3 bench/scripts/algorithms/algorithms.py")
    ap.add_argument("--replot", metavar="JSON", help="only redraw the plots of a --json file")
    a = ap.parse_args()
    if a.replot:
        with open(a.replot) as inp:
            print("\n".join(plots(json.load(inp), a.plots or "bench/reports")))
        return
    start = time.time()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), platform.machine())
    lines = ["# dperm algorithms on the papers' datasets", "",
             f"Produced by `{a.command}` on {datetime.date.today().isoformat()}.", "",
             f"- machine: {os.cpu_count()} CPUs ({cpu}), numpy {np.__version__}",
             f"- tree: {git_state()}",
             f"- server: {psql('SELECT version()')[0]}",
             f"- Table 3 cells: ε ∈ {EPSILONS}, δ = {DELTA}, l2 ∈ {L2S}, fit_intercept => false, "
             f"default plan of each algorithm, {a.seeds} seeded releases per cell (seeds 1..{a.seeds}); "
             "serial plans (`max_parallel_workers_per_gather = 0`)",
             "- excess risk: F(w_priv) − F(ŵ), F(w) = 1/n Σ loss + l2/2 ‖w‖², ŵ by damped Newton "
             "in numpy on the rows the extension read; ms: psql `\\timing` of the whole "
             "statement (scan, training, ledger write), median over the seeds"]
    results = []
    if not a.l1_only:
        table3(a.datasets, a.algorithms, range(1, a.seeds + 1), results, lines)
    l1_experiment(range(1, a.l1_seeds + 1), results, lines)
    if not a.no_fashion and not a.l1_only:
        fashion(range(1, a.fashion_seeds + 1), results, lines)
    if a.plots:
        files = plots(results, a.plots)
        lines += ["", "## Plots", ""] + [f"![{os.path.basename(p)}]({os.path.basename(p)})" for p in files]
    if a.json:
        with open(a.json, "w") as out:
            json.dump(results, out, indent=1)
    lines.append(f"\nalgorithms.py ran for {time.time() - start:.0f} s.")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
