#!/usr/bin/env python3
"""Held-out quality of unit-level dperm.train against max_rows_per_unit.

Two datasets, both split by PERSON (a person's rows are all train or all test):

* panel: /work/shared/data/panel/psid7682.csv.gz (595 persons x 7 years).
  Task: log wage above the median of the training persons' rows (the
  threshold only defines the task; it is not a private statistic). 11
  features with PUBLIC bounds: experience / 60, weeks / 52, education / 20,
  and 0/1 for occupation = white, industry, south, smsa, married,
  gender = female, union, ethnicity = afam; the vector is divided by
  sqrt(11), so ||x|| <= 1 whatever the data.
* bank (event-style, skewed): bank-full's rows as encoded by
  bench/load_datasets.py (d = 42), shuffled and given synthetic person ids:
  --heavy persons with 200-600 rows each, every other person 1-3 rows.

For every split, max_rows_per_unit k and epsilon: dperm.train(..., 'logistic',
dp_options(epsilon, delta => 1e-6, dimension => d)) (default algorithm) on a
copy of the training rows whose budget names the person column
(privacy_unit, max_rows_per_unit k), and the row-level release (plain budget)
at the same epsilon; accuracy and balanced accuracy of dp_predict > 0.5
on the held-out persons' rows, and the seconds of the dperm.train call.

Run inside pg_virtualenv -t (bench/scripts/units/heldout_units.sh). Stdlib only. Prints
markdown tables to stdout.
"""

import argparse
import csv
import gzip
import math
import os
import random
import subprocess
import sys
import tempfile
import time

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(BENCH, "lib"))
import psql_session  # noqa: E402

SHARED = os.environ.get("DPERM_SHARED", "/work/shared")


def panel_rows():
    """(person, features, log wage) of the panel, features with public bounds."""
    rows = []
    with gzip.open(os.path.join(SHARED, "data/panel/psid7682.csv.gz"), "rt") as f:
        for r in csv.DictReader(f):
            x = [min(float(r["experience"]) / 60, 1), min(float(r["weeks"]) / 52, 1),
                 min(float(r["education"]) / 20, 1), float(r["occupation"] == "white"),
                 float(r["industry"] == "yes"), float(r["south"] == "yes"),
                 float(r["smsa"] == "yes"), float(r["married"] == "yes"),
                 float(r["gender"] == "female"), float(r["union"] == "yes"),
                 float(r["ethnicity"] == "afam")]
            s = math.sqrt(len(x))
            rows.append((int(r["id"]), [v / s for v in x], math.log(float(r["wage"]))))
    return rows


def bank_rows(heavy, seed):
    """(person, features, label) of bank-full with skewed synthetic persons."""
    out = subprocess.run([sys.executable, os.path.join(BENCH, "load_datasets.py"), "--copy", "bank"],
                         capture_output=True, text=True, check=True).stdout
    data = []
    for line in out.splitlines():
        f, y = line.split("\t")
        data.append(([float(v) for v in f.strip("{}").split(",")], y == "t"))
    rng = random.Random(seed)
    rng.shuffle(data)
    rows, i, pid = [], 0, 0
    for _ in range(heavy):
        m = rng.randint(200, 600)
        rows += [(pid, x, y) for x, y in data[i:i + m]]
        i += m
        pid += 1
    while i < len(data):
        m = rng.randint(1, 3)
        rows += [(pid, x, y) for x, y in data[i:i + m]]
        i += m
        pid += 1
    return rows


def copy_table(sess, name, rows, d):
    """Creates name(pid int, f float8[], y boolean) from rows (pid, x, y) via COPY."""
    sess.query(f"DROP TABLE IF EXISTS {name}; CREATE TABLE {name} (pid int, f float8[], y boolean)")
    fd, path = tempfile.mkstemp(prefix="dperm_units_", suffix=".tsv")
    with os.fdopen(fd, "w") as f:
        for pid, x, y in rows:
            f.write(f"{pid}\t{{{','.join(repr(v) for v in x)}}}\t{'t' if y else 'f'}\n")
    os.chmod(path, 0o644)
    try:
        sess.query(f"COPY {name} FROM '{path}'")
    finally:
        os.unlink(path)


def run_dataset(sess, label, rows, d, splits, ks, epsilons, delta, seed, median_label,
                explicit=(), explicit_k=7):
    """Results (split, level, k, eps) -> (acc, bal_acc, seconds, n, units, algorithm).

    explicit: algorithms also run at unit level k = explicit_k with
    dp_options(algorithm => ...) named (level "unit_<algorithm>"), beside the
    default choice."""
    persons = sorted({p for p, _, _ in rows})
    results = {}
    for s in range(splits):
        rng = random.Random(seed * 1000 + s)
        ps = persons[:]
        rng.shuffle(ps)
        train_p = set(ps[:int(0.75 * len(ps))])
        train = [r for r in rows if r[0] in train_p]
        test = [r for r in rows if r[0] not in train_p]
        if median_label:  # label: target above the training rows' median
            ts = sorted(t for _, _, t in train)
            med = ts[len(ts) // 2]
            train = [(p, x, t > med) for p, x, t in train]
            test = [(p, x, t > med) for p, x, t in test]
        base = f"{label}_s{s}"
        copy_table(sess, base + "_test", test, d)
        copy_table(sess, base + "_train", train, d)
        configs = ([("row", 0)] + [("unit", k) for k in ks] +
                   [(f"unit_{a}", explicit_k) for a in explicit])
        for level, k in configs:
            t = f"{base}_{level}{k}"
            sess.query(f"DROP TABLE IF EXISTS {t}; CREATE TABLE {t} AS TABLE {base}_train")
            unit = (f", privacy_unit => 'pid', max_rows_per_unit => {k}"
                    if level.startswith("unit") else "")
            named = f"algorithm => '{level[5:]}', " if level.startswith("unit_") else ""
            sess.query(f"SELECT dperm.set_budget('{t}', epsilon => 1e6, delta => 0.5, "
                       f"accounting => 'basic'{unit})")
            for eps in epsilons:
                t0 = time.time()
                sess.query(f"DROP TABLE IF EXISTS cur; CREATE TEMP TABLE cur AS SELECT dperm.train("
                           f"'{t}', 'f', 'y', 'logistic', dp_options({named}epsilon => {eps}, "
                           f"delta => {delta}, dimension => {d})) AS m")
                secs = time.time() - t0
                acc, bal, n, units, alg = sess.query(
                    f"SELECT avg((p = y)::int), (avg(p::int) FILTER (WHERE y) + "
                    f"avg((NOT p)::int) FILTER (WHERE NOT y)) / 2, "
                    f"(SELECT m::jsonb->>'n' FROM cur), "
                    f"(SELECT coalesce(m::jsonb->'privacy_unit'->>'units', '') FROM cur), "
                    f"(SELECT m::jsonb->>'algorithm' FROM cur) "
                    f"FROM (SELECT y, dp_predict(cur.m, t.f) > 0.5 AS p FROM cur, "
                    f"{base}_test t) q")[0]
                results[(s, level, k, eps)] = (float(acc), float(bal), secs, int(n), units, alg)
                print(f"{label} split {s} {level} k={k} eps={eps}: acc {float(acc):.3f} bal "
                      f"{float(bal):.3f} {secs:.2f} s n={n} {alg}", file=sys.stderr)
    return results


def table(label, results, splits, ks, epsilons, k_row_note, explicit=(), explicit_k=7):
    print(f"| {label}: ε (δ = 1e-6) | release | per-person guarantee | n (slots or rows) | algorithm "
          f"| accuracy | balanced accuracy | s per dperm.train |")
    print("|---:|:---|:---|---:|:---|---:|---:|---:|")
    for eps in epsilons:
        for level, k in ([("unit", k) for k in ks] + [(f"unit_{a}", explicit_k) for a in explicit]
                         + [("row", 0)]):
            vals = [results[(s, level, k, eps)] for s in range(splits)]
            m = lambda i: sum(v[i] for v in vals) / len(vals)  # noqa: E731
            sd = lambda i: math.sqrt(sum((v[i] - m(i)) ** 2 for v in vals) / max(len(vals) - 1, 1))  # noqa: E731
            name = (f"unit, k = {k}" if level == "unit" else
                    f"unit, k = {k}, algorithm => '{level[5:]}'" if level.startswith("unit_")
                    else "row level (no unit)")
            guarantee = f"ε = {eps:g}" if level.startswith("unit") else k_row_note(eps)
            algs = "/".join(sorted({v[5] for v in vals}))
            print(f"| {eps:g} | {name} | {guarantee} | {m(3):.0f} | {algs} | {m(0):.3f} ± {sd(0):.3f} "
                  f"| {m(1):.3f} ± {sd(1):.3f} | {m(2):.2f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--bank-splits", type=int, default=2)
    ap.add_argument("--ks", default="1,2,4,7")
    ap.add_argument("--epsilons", default="1,3,10")
    ap.add_argument("--bank-epsilons", default="1,3")
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--heavy", type=int, default=30)
    ap.add_argument("--seed", type=int, default=20261127)
    ap.add_argument("--skip-bank", action="store_true")
    ap.add_argument("--explicit", default="",
                    help="algorithms also named explicitly at unit level k = --explicit-k (panel)")
    ap.add_argument("--explicit-k", type=int, default=7)
    ap.add_argument("--repo", default=os.getcwd())
    a = ap.parse_args()
    ks = [int(v) for v in a.ks.split(",")]
    eps = [float(v) for v in a.epsilons.split(",")]
    beps = [float(v) for v in a.bank_epsilons.split(",")]

    (sess,), build, waited = psql_session.installed_session(a.repo)
    print(f"dperm.so build {build}; waited {waited:.0f} s for the install lock", file=sys.stderr)
    sess.query("SET client_min_messages = warning")

    panel = panel_rows()
    explicit = [v for v in a.explicit.split(",") if v]
    res = run_dataset(sess, "panel", panel, 11, a.splits, ks, eps, a.delta, a.seed, True,
                      explicit, a.explicit_k)
    print(f"### Panel (PSID7682: 595 persons x 7 rows; {a.splits} splits by person, 75 % of persons "
          f"train; mean ± sd over splits)\n")
    table("panel", res, a.splits, ks, eps,
          lambda e: f"ε = {e:g} per row; a person's 7 rows: only ~{7 * e:g} by group privacy",
          explicit, a.explicit_k)
    print()
    if a.skip_bank:
        return
    bank = bank_rows(a.heavy, a.seed)
    sizes = {}
    for p, _, _ in bank:
        sizes[p] = sizes.get(p, 0) + 1
    big = sorted(sizes.values(), reverse=True)
    res = run_dataset(sess, "bank", bank, 42, a.bank_splits, ks, beps, a.delta, a.seed, False)
    print(f"### Bank, skewed synthetic persons ({len(bank)} rows, {len(sizes)} persons: {a.heavy} with "
          f"{big[a.heavy - 1]}-{big[0]} rows, the others 1-3; {a.bank_splits} splits by person, 75 % "
          f"train; mean ± sd over splits)\n")
    table("bank", res, a.bank_splits, ks, beps,
          lambda e: f"ε = {e:g} per row; a person of m rows: ~m·{e:g} (up to {big[0]}·{e:g})")
    sess.close()


if __name__ == "__main__":
    main()
