#!/usr/bin/env python3
"""Neighbour distinguishing test of dperm.train_query at epsilon = 1, end to end.

Each configuration is a pair of tables D, D' and a filtered query
`SELECT f, y FROM <table> WHERE g = 1`; D' is D plus rows the filter selects:

  row          plain row budget (a row is the unit, k = 1); D' = D + one canary
               row x = (1, 0), label false, g = 1.
  unit         privacy_unit => 'pid', max_rows_per_unit => k; D' = D + one whole
               new person of k canary rows, all with g = 1.
  row_dup      BROKEN input (power check): the row budget, but D' = D + --dup
               copies of the canary row: not neighbours at the row, so a sound
               test must be able to give eps_lb > epsilon.
  unit_dup     BROKEN input at the unit: D' = D + --dup-units new persons of k
               canary rows each.

dperm.train_query (default algorithm, logistic, dp_options(epsilon, delta,
dimension 2), no seed) runs R times on each table, as a non-superuser role
that owns the tables: every release draws its own key from pg_strong_random
(noise_key.cpp), so the count's noise, the random order of units and the
model's noise are fresh and independent across runs, exactly the releases an
analyst gets. (A seeded release derives the unit order and the noise from the
8-byte seed, privacy_unit.cpp and noise_key.cpp; it is not private and a
seed needs dperm.allow_seed, a superuser setting. Unseeded releases are what
the guarantee is about, so the audit uses them.)

Two statistics per release: the released noisy size n (model JSON "n"), and
the coefficient along the canary's direction w[0]. Each goes through the
threshold test of bench/scripts/units/unit_attack.py (threshold and tail
chosen on the first half of each side's runs, the event counted on the second
half, Clopper-Pearson) at alpha/2; the reported eps_lb is the larger of the
two, valid at alpha (Bonferroni). eps_lb must be <= epsilon for the honest
configurations.

Run inside pg_virtualenv -t (bench/query_audit.sh). Stdlib only. Prints
markdown to stdout, progress to stderr.
"""

import argparse
import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts", "units"))
import psql_session  # noqa: E402
from unit_attack import threshold_test  # noqa: E402

CANARY = (1.0, 0.0, False)
ROLE = "query_audit_owner"


def base_rows(rows, k, seed):
    """Rows (pid, g, x1, x2, y): persons of 1..k rows, about half with g = 1."""
    rng = random.Random(seed)
    out, pid = [], 0
    while len(out) < rows:
        pid += 1
        for _ in range(rng.randint(1, k)):
            rad = math.sqrt(rng.random())
            a = rng.uniform(0, 2 * math.pi)
            x1, x2 = rad * math.cos(a), rad * math.sin(a)
            y = 1.5 * x1 - x2 + 0.3 + rng.gauss(0, 0.5) > 0
            out.append((pid, rng.randint(0, 1), x1, x2, y))
    return out[:rows], pid


def configurations(a):
    """name -> (unit clause of the budget, rows of D, rows of D', honest?, what D' adds)."""
    b, last = base_rows(a.rows, a.k, a.seed)
    canary = lambda pid: (pid, 1) + CANARY  # noqa: E731
    unit = f"privacy_unit => 'pid', max_rows_per_unit => {a.k}"
    return {
        "row": ("", b, b + [canary(last + 1)], True, "1 canary row"),
        "unit": (unit, b, b + [canary(last + 1)] * a.k, True, f"1 person of {a.k} canary rows"),
        "row_dup": ("", b, b + [canary(last + 1 + i) for i in range(a.dup)], False,
                    f"{a.dup} canary rows (broken: not neighbours at the row)"),
        "unit_dup": (unit, b, b + [canary(last + 1 + i) for i in range(a.dup_units) for _ in range(a.k)],
                     False, f"{a.dup_units} persons of {a.k} canary rows (broken: not neighbours at the unit)"),
    }


def load(sess, name, rows):
    sess.query(f"DROP TABLE IF EXISTS {name}; CREATE TABLE {name} (pid int, g int, f float8[], y boolean)")
    values = ",".join(f"({p},{g},ARRAY[{x1!r},{x2!r}]::float8[],{str(y).lower()})" for p, g, x1, x2, y in rows)
    sess.query(f"INSERT INTO {name} VALUES {values}")
    sess.query(f"ALTER TABLE {name} OWNER TO {ROLE}")


def releases(sess, table, runs, batch, epsilon, delta):
    """(n, w0) of `runs` unseeded releases, `batch` per statement, as ROLE."""
    sql = (f"SET ROLE {ROLE}; SELECT m->>'n', m->'coefficients'->>0, m->>'algorithm' FROM "
           f"(SELECT dperm.train_query($q$SELECT f, y FROM public.{table} WHERE g = 1$q$, 'f', 'y', "
           f"'logistic', dp_options(epsilon => {epsilon}, delta => {delta}, dimension => 2))::jsonb AS m "
           f"FROM generate_series(1, %d)) s; RESET ROLE")
    ns, ws, algo = [], [], None
    while len(ns) < runs:
        for n, w, alg in sess.query(sql % min(batch, runs - len(ns))):
            # A noisy size of 0 releases NULL: n = 0, w0 = 0 (a function of the count).
            ns.append(float(n) if n else 0.0)
            ws.append(float(w) if w else 0.0)
            algo = alg or algo
    return ns, ws, algo


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000, help="releases per table and configuration")
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--dup", type=int, default=30)
    ap.add_argument("--dup-units", type=int, default=30)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--seed", type=int, default=20261207, help="seed of the data (not of the releases)")
    ap.add_argument("--configs", default="row,unit,row_dup,unit_dup")
    ap.add_argument("--repo", default=os.getcwd())
    a = ap.parse_args()

    (sess,), build, waited = psql_session.installed_session(a.repo)
    print(f"<!-- dperm.so build {build}; waited {waited:.0f} s for the install lock -->", file=sys.stderr)
    sess.query(f"DO $$BEGIN CREATE ROLE {ROLE}; EXCEPTION WHEN duplicate_object THEN NULL; END$$")
    sess.query(f"GRANT CREATE ON SCHEMA public TO {ROLE}")
    configs = {k: v for k, v in configurations(a).items() if k in a.configs.split(",")}
    budget = 10 * a.runs * a.epsilon
    for name, (unit, d, dp, _, _) in configs.items():
        for side, rows in (("d", d), ("dp", dp)):
            table = f"qaudit_{name}_{side}"
            load(sess, table, rows)
            sess.query(f"SET ROLE {ROLE}; SELECT dperm.set_budget('public.{table}', epsilon => {budget}, "
                       f"delta => 0.5, accounting => 'basic'{', ' + unit if unit else ''}); RESET ROLE")

    results = []
    started = time.time()
    for name, (unit, d, dp, honest, adds) in configs.items():
        stats, seconds, algo = {}, {}, {}
        for side in ("d", "dp"):
            t0 = time.time()
            stats[side] = releases(sess, f"qaudit_{name}_{side}", a.runs, a.batch, a.epsilon, a.delta)
            algo[side] = stats[side][2]
            seconds[side] = (time.time() - t0) / a.runs
        tests = {}
        for i, stat in ((0, "n"), (1, "w0")):
            tests[stat] = threshold_test(stats["d"][i], stats["dp"][i], a.delta, a.alpha / 2)
        eps_lb = max(t["eps_lb"] for t in tests.values())
        means = {s: [sum(v) / len(v) for v in stats[s][:2]] for s in stats}
        sel = {"d": sum(1 for r in d if r[1] == 1), "dp": sum(1 for r in dp if r[1] == 1)}
        results.append((name, honest, adds, len(d), len(dp), sel, algo, means, tests, eps_lb, seconds))
        print(f"{name}: eps_lb {eps_lb:.3f} (n {tests['n']['eps_lb']:.3f}, w0 {tests['w0']['eps_lb']:.3f}) "
              f"({time.time() - started:.0f} s)", file=sys.stderr)

    print(f"* dperm.train_query($$SELECT f, y FROM t WHERE g = 1$$, 'f', 'y', 'logistic', "
          f"dp_options(epsilon => {a.epsilon:g}, delta => {a.delta:g}, dimension => 2)), unseeded, as a "
          f"non-superuser owner; D: {a.rows} rows (persons of 1-{a.k} rows, features in the unit disc, "
          f"about half with g = 1); canary x = (1, 0), label false, g = 1. {a.runs} releases per table; "
          f"statistics n (released noisy size) and w[0], each through the threshold test "
          f"(bench/scripts/units/unit_attack.py: chosen on the first half, counted on the second) at "
          f"α/2 = {a.alpha / 2:g}, Clopper-Pearson; ε_lb = the larger (valid at α = {a.alpha:g}). "
          f"Data seed {a.seed}. {time.time() - started:.0f} s.\n")
    print("| configuration | D' adds | rows D / D' (filter selects) | algorithm | mean n D / D' | mean w[0] D / D' "
          "| test on n | test on w[0] | ε_lb | ε | ε_lb > ε? | s per release |")
    print("|:---|:---|:---|:---|:---|:---|:---|:---|---:|---:|:---|---:|")
    for name, honest, adds, nd, ndp, sel, algo, means, tests, eps_lb, seconds in results:
        def ev(t, stat):
            s = stat if t["sign"] == 1 else "−" + stat
            return f"{{{s} {'>' if t['upper'] else '≤'} {t['t']:.3g}}}: {t['k_num']} vs {t['k_den']} of {t['n']} → {t['eps_lb']:.3f}"
        label = name if honest else f"{name} (broken)"
        print(f"| {label} | {adds} | {nd} ({sel['d']}) / {ndp} ({sel['dp']}) | {algo['d']} | "
              f"{means['d'][0]:.1f} / {means['dp'][0]:.1f} | {means['d'][1]:.3f} / {means['dp'][1]:.3f} | "
              f"{ev(tests['n'], 'n')} | {ev(tests['w0'], 'w0')} | **{eps_lb:.3f}** | {a.epsilon:g} | "
              f"{'yes' if eps_lb > a.epsilon else 'no'} | {(seconds['d'] + seconds['dp']) / 2:.3f} |")
    sess.close()


if __name__ == "__main__":
    main()
