#!/usr/bin/env python3
"""Held-out quality of dperm's default against diffprivlib 0.6.5.

Run through bench/scripts/heldout/heldout.sh, which builds the C++ driver
(bench/scripts/heldout/heldout_main.cpp), unpacks diffprivlib and sets PYTHONPATH.
This script loads the five datasets of ../shared/data with the preprocessing of
bench/load_datasets.py (imported, not copied), draws a 70/30 split per seed,
trains every method on the 70 %, scores it on the 30 % and writes markdown
(bench/reports/heldout.md) plus the per-seed numbers (CSV).

Methods, all with an intercept and rows of norm <= 1:
  * dperm default: no algorithm given (dperm's DefaultAlgorithm rule), delta =
    1e-6, l2 in {0 (not given), --l2 grid}; seeded with SecureRng::FromSeed
    (reproducible benchmark runs, not private releases);
  * diffprivlib LogisticRegression(epsilon, data_norm=1, C=1/(n^2 mu)) for each
    mu = l2 of the grid, and at its default C = 1 (pure epsilon-DP);
    diffprivlib LinearRegression(epsilon, bounds_X=[0,1]^d, bounds_y=[0,1]) for
    the regression sets;
  * non-private: dperm's objective at each l2 solved by damped Newton (the
    ceiling of dperm's default), sklearn at C = 1/(n^2 mu) and C = 1 (the
    ceiling of diffprivlib), sklearn OLS and ridge for regression;
  * baselines: the training majority class; the training mean.

The code: heldout_common.py (datasets, metrics, splits, the table of results),
heldout_train.py (training and scoring), heldout_sections.py and
heldout_markdown.py (the report); this file reads the command line. The
other scripts of this folder import this module (ho.DATASETS, ho.run_dperm, ...).
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

# (HIGHER_BETTER, METRIC_NAMES, fmt_*, the metrics, splits_for and run_dperm:
# for the other scripts of this folder, which import heldout as ho)
from heldout_common import (DATASETS, DELTA, HIGHER_BETTER, METRIC_NAMES, REPO,  # noqa: F401
                            fmt_l2, fmt_num, logistic_metrics, regression_metrics, splits_for)
from heldout_markdown import build_markdown
from heldout_train import bench_dataset, run_dperm  # noqa: F401


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--driver", required=True, help="the compiled heldout_main")
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--eps", type=float, nargs="+", default=[0.1, 0.5, 1.0, 2.0])
    ap.add_argument("--l2", type=float, nargs="+", default=[1e-4, 1e-3, 1e-2, 0.1])
    ap.add_argument("--out", default=str(REPO / "bench" / "reports" / "heldout.md"))
    ap.add_argument("--csv", default=str(REPO / "bench" / "results" / "heldout_runs.csv"))
    ap.add_argument("--command", default="bash bench/scripts/heldout/heldout.sh")
    ap.add_argument("--from-csv", metavar="CSV", nargs="+",
                    help="rebuild the report from saved per-seed CSVs (no training; several: "
                         "the parts of one run split by dataset or eps, bench/scripts/heldout/heldout_parallel.sh); "
                         "the header then describes the run that wrote them only in part")
    ap.add_argument("--dperm-only", action="store_true",
                    help="dperm's default (and --algos) only: no diffprivlib, no non-private "
                         "ceilings, no l2 => 'auto', no huber_delta = 1; writes the CSV, no report "
                         "(the l2-rule sweep, bench/scripts/heldout/l2_rule.py)")
    ap.add_argument("--delta", type=float, default=DELTA,
                    help="dperm's delta (the report assumes the default 1e-6)")
    ap.add_argument("--algos", nargs="*", default=[],
                    help="also train these algorithms (`algorithm => NAME`) at every l2")
    ap.add_argument("--default-only", action="store_true",
                    help="dperm: only the all-defaults call (no l2 grid, no l2 => 0, no auto); "
                         "diffprivlib, ceilings and baselines as usual (the grid of docs/heldout.md)")
    ap.add_argument("--algos-only", action="store_true",
                    help="with --algos: the default only with l2 not given and l2 => 0")
    ap.add_argument("--data-dir", default=os.environ.get(
        "DPERM_DATA_DIR", str(REPO.parent / "shared" / "data" / "raw")))
    args = ap.parse_args()
    args.seeds_list = list(range(1, args.seeds + 1))
    import diffprivlib

    def sh(cmd):
        try:
            return subprocess.run(cmd, shell=True, capture_output=True, text=True,
                                  cwd=REPO).stdout.strip()
        except OSError:
            return ""
    cpu = sh("sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1")
    mem = sh("awk '/^MemTotal/ {printf \"%.0f GiB RAM\", $2 / 1048576}' /proc/meminfo")
    osname = sh(". /etc/os-release && echo \"$PRETTY_NAME\"")
    commit = sh("git rev-parse --short HEAD") or "unknown"  # at the start of the run
    if sh("git status --porcelain --untracked-files=no"):
        commit += " (with uncommitted changes)"
    start = time.time()
    if args.from_csv:
        df = pd.concat([pd.read_csv(f) for f in args.from_csv], ignore_index=True)
        df["eps"] = df["eps"].astype(float)
        # Parts split by eps each hold the dataset's eps-free rows (ceilings,
        # baselines: deterministic): keep one copy.
        free = ~np.isfinite(df["eps"])
        df = pd.concat([df[~free], df[free].drop_duplicates(
            subset=["dataset", "method", "l2", "seed"])], ignore_index=True)
        parts = [json.loads(Path(f).with_suffix(".json").read_text()) for f in args.from_csv]
        saved = parts[0]
        timing = {}
        for part in parts:  # a dataset split over parts: its times add up
            for ds, t in part["timing"].items():
                if ds in timing:
                    for k in ("load_s", "dperm_s", "peer_s"):
                        timing[ds][k] += t[k]
                else:
                    timing[ds] = dict(t)
        timing = {k: timing[k] for k in DATASETS if k in timing}
        args.seeds_list = saved["seeds"]
        args.eps = sorted({e for part in parts for e in part["eps"]})
        args.l2 = saved["l2"]
        saved["meta"]["runtime"] = max(part["meta"]["runtime"] for part in parts)
        algos = {}
        for _, row in df[df.algorithm.notna()].iterrows():
            algos.setdefault((row.dataset, row.l2, row.huber_delta), set()).add(row.algorithm)
    else:
        rows, algos, timing = [], {}, {}
        with tempfile.TemporaryDirectory(prefix="dperm_heldout.") as tmp:
            for name in args.datasets:
                bench_dataset(name, args, Path(args.driver), Path(tmp), rows, algos, timing)
        df = pd.DataFrame(rows)
    meta = {"command": args.command,
            "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
            "machine": f"{cpu}, {os.cpu_count()} CPUs, {mem}; {osname}, Linux {platform.release()}; "
                       f"load average at the end {' '.join(f'{v:.2f}' for v in os.getloadavg())}",
            "commit": commit, "dpl_version": diffprivlib.__version__,
            "cxx": sh("g++ --version | head -1"), "runtime": time.time() - start}
    if args.from_csv:  # the provenance of the run that wrote the CSV
        meta.update({k: saved["meta"][k] for k in ("command", "date", "machine", "commit",
                                                   "dpl_version", "cxx", "runtime")})
    else:
        Path(args.csv).parent.mkdir(parents=True, exist_ok=True)
        df.to_csv(args.csv, index=False)
        Path(args.csv).with_suffix(".json").write_text(json.dumps(
            {"timing": timing, "seeds": args.seeds_list, "eps": args.eps, "l2": args.l2,
             "meta": meta}, indent=1))
    if args.dperm_only or args.default_only:
        print(f"heldout: wrote {args.csv} (--dperm-only/--default-only: no report; "
              "bench/scripts/heldout/heldout_grid.py summarises it)", file=sys.stderr)
        return
    text, _ = build_markdown(df, args, timing, algos, meta)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)
    print(f"heldout: wrote {args.out} and {args.csv}", file=sys.stderr)


if __name__ == "__main__":
    main()
