#!/usr/bin/env python3
"""docs/benchmarks.md's training table: dperm's default release against
diffprivlib's default fit and a bare scan, and how it grows with n.

Run by bench/scripts/time/benchmarks.sh inside a throwaway cluster (it unpacks
diffprivlib and sets PYTHONPATH). Cases, interleaved over ROUNDS rounds
after one warm-up of each, each statement in a fresh psql (its \\timing:
the scan, the training, the noise and the ledger charge):
  * BANK (bench/load_datasets.py): SELECT count(features) (the bare scan);
    diffprivlib 0.6.5 LogisticRegression(epsilon=1, data_norm=1.0).fit on
    arrays already in memory (its fit only); dp_logreg with
    dp_options(epsilon => 1) (delta = 0) and with delta => 1e-6.
  * s<N> for each N of --sizes: N rows of 8 features generated in SQL
    (0.3 sin(k i + k^2), ||x|| < 1) with a label drawn from a logistic model
    of those features (setseed: the same table every run); the bare scan,
    and dperm.train(..., 'logistic', dp_options(epsilon => 1, delta =>
    1e-6)) in memory and streaming.
Every in-memory release also runs with SET dperm.training_threads = 1 (the
"1 thread" rows; the others use the default, 2): the same model, serial
passes.
Prints the markdown table of docs/benchmarks.md: median seconds, the ratio
to the bare scan of the same table ("scans") and to diffprivlib's fit, the
algorithm and its iterations (from the released model's plan), and
time(10 n)/time(n) for consecutive sizes.
"""

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/ (load_datasets.py)
import load_datasets as ld  # noqa: E402
from peer_fit_time import dpl_seconds  # noqa: E402

D = 8  # features of the synthetic tables


def psql(sql, timing=False):
    """One statement in a fresh psql; (seconds, output) with \\timing."""
    args = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At"]
    if timing:
        args += ["-c", "\\timing on"]
    out = subprocess.run(args + ["-c", sql], check=True, capture_output=True, text=True).stdout
    lines = out.splitlines()
    times = [ln for ln in lines if ln.startswith("Time: ")]
    rest = "\n".join(ln for ln in lines if not ln.startswith("Time: "))
    return (float(times[0].split()[1]) / 1000.0 if times else None), rest


def make_synthetic(n):
    """s<n>: n rows, D features of norm < 1, a logistic label."""
    feats = ", ".join(f"0.3 * sin({k} * i + {k * k})" for k in range(1, D + 1))
    margin = "3 * sin(i + 1) - 2 * sin(2 * i + 4) + 1.5 * sin(3 * i + 9) - 0.5"
    psql(f"DROP TABLE IF EXISTS s{n}; SELECT setseed(0.25); "
         f"CREATE TABLE s{n} AS SELECT i AS id, ARRAY[{feats}]::float8[] AS features, "
         f"random() < 1 / (1 + exp(-({margin}))) AS label FROM generate_series(1, {n}) i")
    psql(f"VACUUM ANALYZE s{n}")


ONE_THREAD = "SET dperm.training_threads = 1; "


def release(sql):
    """A statement returning one dp_model: its plan's algorithm, iterations and nesterov field."""
    sql = sql.removeprefix(ONE_THREAD)
    return (f"SELECT (m::jsonb)->'plan'->>'algorithm', (m::jsonb)->'plan'->>'iterations', "
            f"(m::jsonb)->'plan'->>'nesterov' FROM ({sql}) r(m)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--sizes", default="100000 1000000", help="synthetic table sizes")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split()]

    feats, labels, _ = ld.prepare("bank", a.data_dir)
    X = np.asarray(feats, dtype=float)
    y = np.asarray(labels, dtype=int)
    ld.load(["bank"], a.data_dir, [])
    psql("VACUUM ANALYZE bank")
    for n in sizes:
        make_synthetic(n)

    # (table, what, sql or None for diffprivlib, is a release)
    cases = [("bank", "bare scan", "SELECT count(features) FROM bank", False),
             ("bank", "diffprivlib default fit", None, False),
             ("bank", "dperm default, delta = 0",
              "SELECT dp_logreg(features, label, dp_options(epsilon => 1)) FROM bank", True),
             ("bank", "dperm default, delta = 1e-6",
              "SELECT dp_logreg(features, label, dp_options(epsilon => 1, delta => 1e-6)) FROM bank", True)]
    cases += [(t, what + ", 1 thread", ONE_THREAD + sql, r) for t, what, sql, r in cases[2:]]
    for n in sizes:
        t = f"s{n}"
        cases.append((t, "bare scan", f"SELECT count(features) FROM {t}", False))
        for mode in ("in_memory", "streaming"):
            sql = (f"SELECT dperm.train('{t}', 'features', 'label', 'logistic', "
                   f"dp_options(epsilon => 1, delta => 1e-6), mode => '{mode}')")
            cases.append((t, f"dperm.train default, delta = 1e-6, {mode}", sql, True))
            if mode == "in_memory":
                cases.append((t, f"dperm.train default, delta = 1e-6, {mode}, 1 thread",
                              ONE_THREAD + sql, True))

    seconds = {i: [] for i in range(len(cases))}
    plans = {}
    dpl_seconds(X, y, 0)  # warm-up
    for i, (_, _, sql, is_release) in enumerate(cases):  # warm-up, and each release's plan
        if sql is None:
            continue
        if is_release:
            plans[i] = psql(release(sql))[1].split("|")
        else:
            psql(sql)
    for r in range(a.rounds):
        for i, (_, _, sql, is_release) in enumerate(cases):
            if sql is None:
                seconds[i].append(dpl_seconds(X, y, r + 1))
            else:
                seconds[i].append(psql(sql, timing=True)[0])

    median = {i: statistics.median(v) for i, v in seconds.items()}
    scan = {c[0]: median[i] for i, c in enumerate(cases) if c[1] == "bare scan"}
    dpl = next(median[i] for i, c in enumerate(cases) if c[1].startswith("diffprivlib"))
    rows = {"bank": X.shape[0], **{f"s{n}": n for n in sizes}}
    print("| table | n | d | case | algorithm | iterations | seconds | scans | / diffprivlib |")
    print("|---|---:|---:|---|---|---:|---:|---:|---:|")
    for i, (table, what, _, _) in enumerate(cases):
        algo, iters, nesterov = plans.get(i, ("-", "-", ""))
        if nesterov == "1":
            algo += " (accelerated)"
        d = X.shape[1] if table == "bank" else D
        ratio = f"{median[i] / dpl:.2f}" if table == "bank" else "-"
        print(f"| {table} | {rows[table]} | {d} | {what} | {algo} | {iters} | {median[i]:.3f} | "
              f"{median[i] / scan[table]:.1f} | {ratio} |")
    print()
    print("time(10 n) / time(n):")
    for what in ("bare scan", "dperm.train default, delta = 1e-6, in_memory",
                 "dperm.train default, delta = 1e-6, in_memory, 1 thread",
                 "dperm.train default, delta = 1e-6, streaming"):
        by_n = {rows[c[0]]: median[i] for i, c in enumerate(cases) if c[1] == what and c[0] != "bank"}
        steps = [f"{n} -> {10 * n}: {by_n[10 * n] / by_n[n]:.1f}" for n in sorted(by_n) if 10 * n in by_n]
        print(f"  {what}: " + ("; ".join(steps) if steps else "(one size only)"))
    print(f"\nrounds: {a.rounds}; load: {open('/proc/loadavg').read().split()[:3]}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")


if __name__ == "__main__":
    main()
