#!/usr/bin/env python3
"""Held-out accuracy of a filtered release (dperm.train_query) against training
on the pre-filtered table, on three real datasets, against a real server.

Run through bench/scripts/queries/query_accuracy.sh (a throw-away cluster,
this worktree's build installed under the lock). For each dataset the rows
are preprocessed as every bench does (bench/load_datasets.py, imported: k-1
one-hot, min-max, rows of norm <= 1), a public filter on a raw column is
chosen, and for each seed a 70/30 split is drawn:

  * `<name>_all`: the training 70 % with the raw filter column, a budget;
  * `<name>_pre`: the same rows pre-filtered (CREATE TABLE AS ... WHERE),
    a budget of its own: what an owner who materialised the subset would
    train on (n public and exact);
  * `<name>_test`: the held-out 30 % that the filter selects (no budget).

Methods (logistic, default algorithm, delta 1e-6, unseeded releases):
  (a) dperm.train on `<name>_pre` at epsilon;
  (b) dperm.train_query with the filter on `<name>_all` at epsilon (a tenth
      of it on the noisy size, the rest on the model);
  (c) dperm.train on `<name>_pre` at 0.9 epsilon: the model's share of (b),
      so (b) - (c) is the cost of the noisy size's rows (dummies or missing
      rows), (a) - (c) the cost of the count's share of epsilon;
  plus the test set's majority class (a floor).
Accuracy = mean over the test rows of (dp_predict(model, features) > 0.5) =
label. Writes markdown (mean ± sd over seeds) to --out and stdout, and the
per-run numbers to --csv. Stdlib only.
"""

import argparse
import datetime
import math
import os
import platform
import random
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2]
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH / "lib"))
import load_datasets as ld  # noqa: E402  (the benches' one preprocessing)
import psql_session  # noqa: E402

# name -> (title, raw filter column, SQL type, filter on column v, its text)
FILTERS = {
    "adult": ("ADULT", "age", "int", lambda v: int(v) >= 30, "age >= 30"),
    "bank": ("BANK", "age", "int", lambda v: int(v) >= 40, "age >= 40"),
    "creditcard": ("CREDIT (default of credit card clients)", "AGE", "int", lambda v: int(v) >= 30,
                   "age >= 30"),
}
METHODS = [("a", "dperm.train, pre-filtered table, ε"),
           ("b", "dperm.train_query, filter on the full table, ε (0.1 ε on the noisy size)"),
           ("c", "dperm.train, pre-filtered table, 0.9 ε"),
           ("majority", "majority class of the test rows (floor)")]


def copy_into(table, rows, columns):
    """\\copy rows (tuples of text) into table via psql."""
    proc = subprocess.Popen(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c",
                             f"\\copy {table} ({columns}) from pstdin"], stdin=subprocess.PIPE, text=True)
    for r in rows:
        proc.stdin.write("\t".join(r) + "\n")
    proc.stdin.close()
    if proc.wait() != 0:
        sys.exit(f"query_accuracy: \\copy into {table} failed")


def farr(f):
    return "{" + ",".join("0" if v == 0 else repr(v) for v in f) + "}"


def prepare(name, data_dir):
    """(filter values, features, labels) of a dataset: bench/load_datasets.py's encoding."""
    loader = ld.DATASETS[name][0]
    cols, rows, raw = loader(data_dir)
    col = FILTERS[name][1]
    j = [c for c, _ in cols].index(col)
    feats = ld.encode(cols, rows)
    return [r[j] for r in rows], feats, raw


def accuracy(sess, model_sql, test):
    v = sess.value(f"SELECT avg(((dp_predict(m, features) > 0.5) = label)::int) FROM {test}, "
                   f"LATERAL (SELECT ({model_sql}) AS m) s")
    return float(v) if v not in (None, "") else float("nan")


def run_dataset(sess, name, data_dir, seeds, eps, budget, out_rows):
    title, col, sqltype, keep, ftext = FILTERS[name]
    fvals, feats, labels = prepare(name, data_dir)
    d = len(feats[0])
    where = f"v {ftext.split(' ', 1)[1]}"  # the filter on the raw column v
    n_sel_total = sum(1 for v in fvals if keep(v))
    info = {"n": len(feats), "d": d, "selected": n_sel_total, "filter": ftext}
    for seed in range(seeds):
        rng = random.Random(1000 + seed)
        idx = list(range(len(feats)))
        rng.shuffle(idx)
        cut = int(0.7 * len(idx))
        train, test = idx[:cut], idx[cut:]
        t = f"{name}_{seed}"  # a budgeted table cannot be dropped: one set of tables per split
        sess.query(f"CREATE TABLE {t}_all (id int PRIMARY KEY, v {sqltype}, features float8[], label boolean); "
                   f"CREATE TABLE {t}_test (id int PRIMARY KEY, features float8[], label boolean)")
        copy_into(f"{t}_all", ((str(i), fvals[i], farr(feats[i]), "t" if labels[i] else "f") for i in train),
                  "id, v, features, label")
        copy_into(f"{t}_test", ((str(i), farr(feats[i]), "t" if labels[i] else "f")
                                   for i in test if keep(fvals[i])), "id, features, label")
        sess.query(f"CREATE TABLE {t}_pre AS SELECT id, features, label FROM {t}_all WHERE {where}; "
                   f"ANALYZE {t}_all, {t}_pre, {t}_test; "
                   f"SELECT dperm.set_budget('{t}_all', epsilon => {budget}, delta => 0.5, accounting => 'basic'); "
                   f"SELECT dperm.set_budget('{t}_pre', epsilon => {budget}, delta => 0.5, accounting => 'basic')")
        n_pre = int(sess.value(f"SELECT count(*) FROM {t}_pre"))
        n_test = int(sess.value(f"SELECT count(*) FROM {t}_test"))
        opts = lambda e: f"dp_options(epsilon => {e}, delta => 1e-6, dimension => {d})"  # noqa: E731
        models = {
            "a": f"SELECT dperm.train('{t}_pre', 'features', 'label', 'logistic', {opts(eps)})",
            "b": (f"SELECT dperm.train_query($q$SELECT features, label FROM {t}_all WHERE {where}$q$, "
                  f"'features', 'label', 'logistic', {opts(eps)})"),
            "c": f"SELECT dperm.train('{t}_pre', 'features', 'label', 'logistic', {opts(0.9 * eps)})",
        }
        for method, sql in models.items():
            t0 = time.time()
            sess.query(f"DROP TABLE IF EXISTS qa_model; CREATE TEMP TABLE qa_model AS {sql} AS m")
            secs = time.time() - t0
            meta = sess.query("SELECT m::jsonb->>'algorithm', m::jsonb->>'n' FROM qa_model")[0]
            acc = accuracy(sess, "SELECT m FROM qa_model", f"{t}_test")
            out_rows.append((name, seed, method, acc, meta[0], meta[1], n_pre, n_test, secs))
            print(f"{name} seed {seed} {method}: acc {acc:.4f} ({meta[0]}, n {meta[1]} / {n_pre}, {secs:.1f} s)",
                  file=sys.stderr)
        pos = float(sess.value(f"SELECT avg(label::int) FROM {t}_test"))
        out_rows.append((name, seed, "majority", max(pos, 1 - pos), "", "", n_pre, n_test, 0.0))
    return info


def mean_sd(v):
    m = sum(v) / len(v)
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
    return m, sd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="adult,bank,creditcard")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--data-dir", default=os.environ.get("DPERM_DATA_DIR", str(REPO.parent / "shared" / "data" / "raw")))
    ap.add_argument("--out", default=str(BENCH / "reports" / "query_accuracy.md"))
    ap.add_argument("--csv", default=str(BENCH / "results" / "query_accuracy_runs.csv"))
    ap.add_argument("--command", default="bash bench/scripts/queries/query_accuracy.sh")
    ap.add_argument("--repo", default=str(REPO))
    a = ap.parse_args()

    (sess,), build, waited = psql_session.installed_session(a.repo)
    sess.query("SET client_min_messages = warning")
    started = time.time()
    rows, infos = [], {}
    names = a.datasets.split(",")
    for name in names:
        infos[name] = run_dataset(sess, name, a.data_dir, a.seeds, a.eps, 100 * a.seeds * a.eps, rows)
    sess.close()

    with open(a.csv, "w") as f:
        f.write("dataset,seed,method,accuracy,algorithm,n_model,n_prefiltered,n_test,seconds\n")
        for r in rows:
            f.write(",".join(str(x) for x in r) + "\n")
    commit = subprocess.run(["git", "-C", a.repo, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [
        "# Held-out accuracy of a filtered release (`dperm.train_query`)", "",
        f"Command: `{a.command}` ({datetime.date.today()}, {platform.node()}, {platform.machine()}, "
        f"{os.cpu_count()} cores; commit {commit}, dperm.so build {build}; {time.time() - started:.0f} s).", "",
        f"Logistic, default algorithm, δ = 1e-6, ε = {a.eps:g}, unseeded releases; {a.seeds} random 70/30 "
        "splits per dataset (bench/load_datasets.py's preprocessing); accuracy on the held-out rows the filter "
        "selects, mean ± sd over the splits. (a) `dperm.train` on the pre-filtered table at ε; (b) "
        "`dperm.train_query` with the filter on the full table at ε, which spends 0.1 ε on the noisy size "
        "and reads exactly that many rows (a random subset, or public dummy rows); (c) `dperm.train` on the "
        "pre-filtered table at 0.9 ε (the model's share of (b)).", "",
        "| dataset | filter | n train (selected) | d | (a) train, pre-filtered, ε | (b) train_query, ε "
        "| (c) train, pre-filtered, 0.9 ε | majority | (b) − (a) | (b) − (c) |",
        "|:---|:---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name in names:
        acc = {m: [r[3] for r in rows if r[0] == name and r[2] == m] for m, _ in METHODS}
        ms = {m: mean_sd(v) for m, v in acc.items()}
        n_pre = [r[6] for r in rows if r[0] == name][0]
        n_all = round(0.7 * infos[name]["n"])
        diff = lambda x, y: mean_sd([p - q for p, q in zip(acc[x], acc[y])])  # noqa: E731
        cell = lambda t: f"{t[0]:.4f} ± {t[1]:.4f}"  # noqa: E731
        dcell = lambda t: f"{t[0]:+.4f} ± {t[1]:.4f}"  # noqa: E731
        lines.append(f"| {FILTERS[name][0]} | {infos[name]['filter']} | {n_all} ({n_pre}) | {infos[name]['d']} | "
                     f"{cell(ms['a'])} | {cell(ms['b'])} | {cell(ms['c'])} | {cell(ms['majority'])} | "
                     f"{dcell(diff('b', 'a'))} | {dcell(diff('b', 'c'))} |")
    lines += ["", f"Per-run numbers: `{os.path.relpath(a.csv, a.repo)}`."]
    text = "\n".join(lines) + "\n"
    with open(a.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
