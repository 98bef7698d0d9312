#!/usr/bin/env python3
"""BANK: dperm's default release against diffprivlib's in-memory fit.

Run by bench/scripts/time/peer_fit_time.sh inside a throwaway cluster (it unpacks
diffprivlib and sets PYTHONPATH). Loads BANK with bench/load_datasets.py
(the benches' one preprocessing) into numpy and into the table `bank`, then
interleaves, ROUNDS times after one warm-up of each:
  * diffprivlib 0.6.5 LogisticRegression(epsilon=1, data_norm=1.0).fit(X, y),
    the data already in numpy arrays (its fit only);
  * each dperm release below, one psql session per statement, timed by psql's
    \\timing (the whole release: the scan of bank, the optimisation, the
    noise and the ledger charge; not the connection).
With --driver (bench/scripts/heldout/heldout_main.cpp, built by peer_fit_time.sh)
it also runs dperm's core alone on the same rows (all of BANK as the one
training split), one seeded job per case and round, interleaved with the
rest, at each of --threads, and prints the driver's own seconds
(PlanRelease + TrainModel: no PostgreSQL, no scan, no ledger). With
--driver-b (the driver built on another commit's core) it runs both in
turn and prints A/B pair by pair, and whether both released the same
weights. --core-only: no server (diffprivlib and the core alone).
Prints one line per case: median, min and max seconds; then each case's
ratio to diffprivlib's fit in the same round (median of the pairs).
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/ (load_datasets.py)
import load_datasets as ld  # noqa: E402

RELEASES = {
    "bare scan, SELECT count(features) FROM bank (the scan alone)":
        "SELECT count(features) FROM bank",
    "dperm, dp_options(epsilon => 1)":
        "SELECT dp_logreg(features, label, dp_options(epsilon => 1)) IS NOT NULL FROM bank",
    "dperm, dp_options(epsilon => 1, delta => 1e-6)":
        "SELECT dp_logreg(features, label, dp_options(epsilon => 1, delta => 1e-6)) IS NOT NULL FROM bank",
    "dperm, dp_options(epsilon => 1, delta => 1e-6, l2 => 0.01)":
        "SELECT dp_logreg(features, label, dp_options(epsilon => 1, delta => 1e-6, l2 => 0.01))"
        " IS NOT NULL FROM bank",
}


def psql_seconds(sql):
    """Run one statement in a fresh psql with \\timing; return its seconds."""
    out = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At",
                          "-c", "\\timing on", "-c", sql],
                         check=True, capture_output=True, text=True).stdout
    times = [ln for ln in out.splitlines() if ln.startswith("Time: ")]
    assert len(times) == 1, out
    return float(times[0].split()[1]) / 1000.0


def dpl_seconds(X, y, seed):
    """Time diffprivlib's fit on arrays already in memory."""
    from diffprivlib.models import LogisticRegression as DplLogistic
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        DplLogistic(epsilon=1, data_norm=1.0, random_state=seed).fit(X, y)
        return time.perf_counter() - t


CORE_CASES = {"dperm core, epsilon 1 (defaults)": "1.0 0.0 none",  # none: l2 not given (DefaultL2)
              "dperm core, epsilon 1, delta 1e-6, l2 0.01": "1.0 1e-06 0.01",
              "dperm core, epsilon 1, delta 1e-6 (defaults)": "1.0 1e-06 none"}


def write_core_inputs(tmp, X, y):
    """The driver's DATA and SPLITS files (layout: heldout_main.cpp's header)."""
    with open(tmp / "data.bin", "wb") as f:
        f.write(np.array([X.shape[0]], dtype="<i8").tobytes())
        f.write(np.array([X.shape[1], 0], dtype="<i4").tobytes())
        f.write(np.ascontiguousarray(np.column_stack([X, 2.0 * y - 1.0]), dtype="<f8").tobytes())
    with open(tmp / "splits.bin", "wb") as f:
        f.write(np.array([1], dtype="<i4").tobytes())
        f.write(np.array([X.shape[0]], dtype="<i8").tobytes())
        f.write(np.arange(X.shape[0], dtype="<i8").tobytes())


def core_round(driver, tmp, seed, threads):
    """One seeded job of each CORE_CASES in one driver process: {k: (algorithm, seconds, weights)}."""
    jobs = "".join(f"{k} 0 {args} 0 default {seed}\n" for k, args in enumerate(CORE_CASES.values()))
    env = dict(os.environ, DPERM_HELDOUT_THREADS=str(threads))
    out = subprocess.run([str(driver), str(tmp / "data.bin"), str(tmp / "splits.bin")],
                         input=jobs, capture_output=True, text=True, check=True, env=env).stdout
    res = {}
    for line in out.splitlines():
        parts = line.split()
        assert parts[1] != "ERROR", line
        res[int(parts[0])] = (parts[1], float(parts[2]), " ".join(parts[3:]))
    return res


def main():
    """Load, warm up, interleave, print medians."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--driver", help="bench/scripts/heldout/heldout_main.cpp, built")
    ap.add_argument("--driver-b", help="a second build of the driver (another commit): "
                    "its rounds interleaved with --driver's, ratios pair by pair")
    ap.add_argument("--threads", default="1", help="training threads of the core runs, "
                    "comma-separated (DPERM_HELDOUT_THREADS)")
    ap.add_argument("--core-only", action="store_true", help="no server: diffprivlib and the core")
    a = ap.parse_args()
    feats, labels, _ = ld.prepare("bank", a.data_dir)
    X = np.asarray(feats, dtype=float)
    y = np.asarray(labels, dtype=int)
    print(f"BANK: n={X.shape[0]}, d={X.shape[1]}")
    releases = {} if a.core_only else RELEASES
    if not a.core_only:
        ld.load(["bank"], a.data_dir, [])
        subprocess.run(["psql", "-X", "-q", "-c", "VACUUM ANALYZE bank"], check=True)
    for sql in releases.values():  # what each release is (algorithm, noise)
        if "dp_logreg" in sql:
            plan = sql.replace(" IS NOT NULL FROM bank", "").replace(
                "SELECT dp_logreg(features, label, ", "SELECT dp_explain('logistic', 45211, 42, ")
            out = subprocess.run(["psql", "-X", "-At", "-c", plan], check=True,
                                 capture_output=True, text=True).stdout
            print(f"{plan}:\n  " + out.strip().replace("\n", "\n  ")[:1500])
    dpl = "diffprivlib LogisticRegression(epsilon=1, data_norm=1.0).fit"
    times = {dpl: []}
    times.update({k: [] for k in releases})
    drivers = [(lbl, d) for lbl, d in (("A", a.driver), ("B", a.driver_b)) if d]
    threads = [int(t) for t in a.threads.split(",")]
    dpl_seconds(X, y, 0)  # warm-up (imports, first allocation)
    for sql in releases.values():
        psql_seconds(sql)  # warm-up (buffers, library load)
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if drivers:
            write_core_inputs(tmp, X, y)
            for _, d in drivers:
                core_round(d, tmp, 1, threads[0])  # warm-up
        weights = {}
        for r in range(a.rounds):
            # One round: diffprivlib, each SQL release, each driver at each
            # thread count, in turn (a drift of the machine's speed hits all).
            times[dpl].append(dpl_seconds(X, y, r + 1))
            for name, sql in releases.items():
                times[name].append(psql_seconds(sql))
            for lbl, d in drivers:
                for t in threads:
                    for k, (algo, sec, w) in core_round(d, tmp, r + 2, t).items():
                        name = f"{list(CORE_CASES)[k]} [{algo}] {lbl} {t} thread(s)"
                        times.setdefault(name, []).append(sec)
                        weights.setdefault((k, r, t), set()).add(w)
    for name, v in times.items():
        print(f"{name:<80} median {statistics.median(v):7.3f} s  "
              f"min {min(v):7.3f}  max {max(v):7.3f}  (n={len(v)})")
    # Ratios pair by pair (the same round): each core case against diffprivlib,
    # and A against B.
    for name, v in times.items():
        if name == dpl:
            continue
        ratio = [x / z for x, z in zip(v, times[dpl])]
        print(f"{name:<80} / diffprivlib: median {statistics.median(ratio):6.2f}x")
        if name.endswith(" thread(s)") and " A " in name:
            other = name.replace(" A ", " B ")
            if other in times:
                ab = [x / z for x, z in zip(v, times[other])]
                print(f"{name:<80} / B: median {statistics.median(ab):6.3f}")
    if len(drivers) == 2:
        same = all(len(w) == 1 for w in weights.values())
        print("A and B released the same weights in every seeded job: " + ("yes" if same else "NO"))


if __name__ == "__main__":
    main()
