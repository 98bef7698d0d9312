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
training split), ROUNDS seeded jobs per release, and prints the driver's own
seconds (PlanRelease + TrainModel: no PostgreSQL, no scan, no ledger).
Prints one line per case: median, min and max seconds.
"""

import argparse
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


def core_seconds(driver, X, y, rounds):
    """dperm's core alone via the heldout driver: {case: [seconds]}."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        with open(tmp / "data.bin", "wb") as f:  # layout: heldout_main.cpp's header
            f.write(np.array([X.shape[0]], dtype="<i8").tobytes())
            f.write(np.array([X.shape[1], 0], dtype="<i4").tobytes())
            f.write(np.ascontiguousarray(np.column_stack([X, 2.0 * y - 1.0]), dtype="<f8").tobytes())
        with open(tmp / "splits.bin", "wb") as f:
            f.write(np.array([1], dtype="<i4").tobytes())
            f.write(np.array([X.shape[0]], dtype="<i8").tobytes())
            f.write(np.arange(X.shape[0], dtype="<i8").tobytes())
        cases = {"dperm core, epsilon 1 (defaults)": "1.0 0.0 none",  # none: l2 not given (DefaultL2)
                 "dperm core, epsilon 1, delta 1e-6, l2 0.01": "1.0 1e-06 0.01"}
        jobs = "".join(f"{k}_{r} 0 {args} 0 default {r + 1}\n"
                       for k, args in enumerate(cases.values()) for r in range(rounds + 1))
        out = subprocess.run([str(driver), str(tmp / "data.bin"), str(tmp / "splits.bin")],
                             input=jobs, capture_output=True, text=True, check=True).stdout
    secs, algo = {k: [] for k in range(len(cases))}, {}
    for line in out.splitlines():
        parts = line.split()
        assert parts[1] != "ERROR", line
        k, r = map(int, parts[0].split("_"))
        algo[k] = parts[1]
        if r > 0:  # job 0 of each case is the warm-up
            secs[k].append(float(parts[2]))
    res = {f"{name} [{algo[k]}]": secs[k] for k, name in enumerate(cases)}
    return res


def main():
    """Load, warm up, interleave, print medians."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--driver", help="bench/scripts/heldout/heldout_main.cpp, built")
    a = ap.parse_args()
    feats, labels, _ = ld.prepare("bank", a.data_dir)
    X = np.asarray(feats, dtype=float)
    y = np.asarray(labels, dtype=int)
    ld.load(["bank"], a.data_dir, [])
    subprocess.run(["psql", "-X", "-q", "-c", "VACUUM ANALYZE bank"], check=True)
    print(f"BANK: n={X.shape[0]}, d={X.shape[1]}")
    for sql in RELEASES.values():  # what each release is (algorithm, noise)
        if "dp_logreg" in sql:
            plan = sql.replace(" IS NOT NULL FROM bank", "").replace(
                "SELECT dp_logreg(features, label, ", "SELECT dp_explain('logistic', 45211, 42, ")
            out = subprocess.run(["psql", "-X", "-At", "-c", plan], check=True,
                                 capture_output=True, text=True).stdout
            print(f"{plan}:\n  " + out.strip().replace("\n", "\n  ")[:1500])
    times = {"diffprivlib LogisticRegression(epsilon=1, data_norm=1.0).fit": []}
    times.update({k: [] for k in RELEASES})
    dpl_seconds(X, y, 0)  # warm-up (imports, first allocation)
    for sql in RELEASES.values():
        psql_seconds(sql)  # warm-up (buffers, library load)
    for r in range(a.rounds):
        times["diffprivlib LogisticRegression(epsilon=1, data_norm=1.0).fit"].append(
            dpl_seconds(X, y, r + 1))
        for name, sql in RELEASES.items():
            times[name].append(psql_seconds(sql))
    if a.driver:
        times.update(core_seconds(a.driver, X, y, a.rounds))
    for name, v in times.items():
        print(f"{name:<66} median {statistics.median(v):7.3f} s  "
              f"min {min(v):7.3f}  max {max(v):7.3f}  (n={len(v)})")


if __name__ == "__main__":
    main()
