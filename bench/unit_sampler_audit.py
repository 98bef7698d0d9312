#!/usr/bin/env python3
"""End-to-end audit of the SQL unit sampler, against a real server.

Each configuration is a pair of tables D, D' that are neighbours at the unit
level (or the same units written differently), with adversarial unit
representations and session settings: the cases where 0.7.0 ranked units by
their text but counted and partitioned them by equality, and failed after
the charge on one table and not on the other ("counted X rows but read Y").
dperm.train runs R times on each table; every outcome is reduced to one
number s: the model's w[0], or +inf when the release raised an error, so an
error that occurs on one table and not the other is an event like any other.
Two tests, each at alpha/2 (the reported eps_lb is the larger, valid at
alpha): bench/scripts/units/unit_attack.py's threshold test on s (the first half of each
side's runs picks the threshold and tail, the second half counts the
event), and the event E = {an error} over all runs, with Clopper-Pearson
bounds: eps_lb = ln((P_low(E | one table) - delta) / P_high(E | the other)).
eps_lb must be <= epsilon per unit.

Configurations (k = max_rows_per_unit):
  numeric_text   numeric unit; X's rows written 1000.0 in D, one of them 1000
                 in D' (the same units by equality)
  float_zero     float8 unit; X is 0 in D, one of X's rows -0 in D'
  float_digits   float8 units 1 + i 1e-12 (distinct, one text at
                 extra_float_digits = -15), the session SETs it; D' adds X's
                 heavy rows as a new unit next to the others
  collation      text unit under a nondeterministic collation; X is 'x' in D,
                 'X' in one row in D' (one unit), plus X's heavy rows
  heavy_mixed    numeric unit; D has X with 1 row, D' X with `heavy` extreme
                 rows written 7, 7.0 and 7.00 (one unit)

Run inside pg_virtualenv -t (bench/unit_sampler_audit.sh). Stdlib only.
Prints markdown to stdout.
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
from unit_attack import cp_lower, threshold_test  # noqa: E402


def error_event(errors_d, errors_dp, runs, delta, alpha):
    """eps_lb of E = {the release raised an error}, the more frequent side first."""
    hi, lo = max(errors_d, errors_dp), min(errors_d, errors_dp)
    p_low = cp_lower(hi, runs, alpha / 2)
    p_high = 1 - cp_lower(runs - lo, runs, alpha / 2)
    if p_low - delta <= 0:
        return 0.0
    return max(0.0, math.log((p_low - delta) / p_high))


def base_rows(persons, seed, unit_of):
    """Rows (unit text literal, x1, x2, y) of persons 1..persons, 1-3 rows each."""
    rng = random.Random(seed)
    rows = []
    for pid in range(1, persons + 1):
        for r in range(rng.randint(1, 3)):
            rad = math.sqrt(rng.random())
            a = rng.uniform(0, 2 * math.pi)
            x1, x2 = rad * math.cos(a), rad * math.sin(a)
            y = 1.5 * x1 - x2 + 0.3 + rng.gauss(0, 0.5) > 0
            rows.append((unit_of(pid, r), x1, x2, y))
    return rows


def configurations(persons, heavy, seed):
    """name -> (unit SQL type, rows of D, rows of D', SET before train)."""
    # D is written in one spelling per person; D' differs from D only in
    # the audited person X (its spelling, and its rows where stated).
    num = lambda p, r: f"'{p}'"  # noqa: E731
    flt = lambda p, r: f"'{1 + p * 1e-12!r}'"  # noqa: E731
    txt = lambda p, r: f"'p{p}'"  # noqa: E731
    extreme = (1.0, 0.0, False)
    out = {}
    b = base_rows(persons, seed, num)
    out["numeric_text"] = ("numeric", b + [("'1000.0'", 0.1, 0.2, True)] * 3,
                           b + [("'1000.0'", 0.1, 0.2, True)] * 2 + [("'1000'", 0.1, 0.2, True)], "")
    b = base_rows(persons, seed, lambda p, r: f"'{p}'")
    out["float_zero"] = ("float8", b + [("'0'", 0.1, 0.2, True)] * 3,
                         b + [("'0'", 0.1, 0.2, True)] * 2 + [("'-0'", 0.1, 0.2, True)], "")
    b = base_rows(persons, seed, flt)
    out["float_digits"] = ("float8", b, b + [(f"'{1 + 0.5e-12!r}'",) + extreme] * heavy,
                           "SET extra_float_digits = -15;")
    b = base_rows(persons, seed, txt)
    out["collation"] = ("text COLLATE audit_ci", b + [("'x'", 0.1, 0.2, True)],
                        b + [("'X'", 0.1, 0.2, True)] + [("'x'",) + extreme] * heavy, "")
    b = base_rows(persons, seed, num)
    spell = ["'7000'", "'7000.0'", "'7000.00'"]
    out["heavy_mixed"] = ("numeric", b + [("'7000'", 0.1, 0.2, True)],
                          b + [(spell[i % 3],) + extreme for i in range(heavy)], "")
    return out


def load(sess, name, unit_type, rows):
    sess.query(f"DROP TABLE IF EXISTS {name}; CREATE TABLE {name} (u {unit_type}, f float8[], y boolean)")
    values = ",".join(f"({u},ARRAY[{a!r},{c!r}]::float8[],{str(y).lower()})" for u, a, c, y in rows)
    sess.query(f"INSERT INTO {name} VALUES {values}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100, help="trainings per table and configuration")
    ap.add_argument("--persons", type=int, default=120)
    ap.add_argument("--heavy", type=int, default=30)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=20261207)
    ap.add_argument("--repo", default=os.getcwd())
    a = ap.parse_args()

    (sess,), build, waited = psql_session.installed_session(a.repo)
    print(f"<!-- dperm.so build {build}; waited {waited:.0f} s for the install lock -->", file=sys.stderr)
    sess.query("CREATE COLLATION IF NOT EXISTS audit_ci (provider = icu, locale = 'und-u-ks-level2', "
               "deterministic = false)")
    configs = configurations(a.persons, a.heavy, a.seed)
    budget = 10 * a.runs * a.epsilon
    for name, (unit_type, d, dp, _) in configs.items():
        for side, rows in (("d", d), ("dp", dp)):
            table = f"sampler_{name}_{side}"
            load(sess, table, unit_type, rows)
            sess.query(f"SELECT dperm.set_budget('{table}', epsilon => {budget}, delta => 0.5, "
                       f"accounting => 'basic', privacy_unit => 'u', max_rows_per_unit => {a.k})")

    results = []
    started = time.time()
    for name, (_, d, dp, setting) in configs.items():
        stats, errors = {}, {}
        for side in ("d", "dp"):
            table = f"sampler_{name}_{side}"
            sql = (f"{setting} SELECT (m::jsonb->'coefficients'->>0) FROM (SELECT dperm.train('{table}', 'f', 'y', "
                   f"'logistic', dp_options(epsilon => {a.epsilon}, delta => {a.delta}, dimension => 2)) AS m) s; "
                   "RESET extra_float_digits")
            out, errs = [], 0
            for _ in range(a.runs):
                rows = sess.query(sql, check=False)
                if rows and rows[0] and rows[0][0] not in ("", None):
                    out.append(float(rows[0][0]))
                else:  # an error (or no model): an event of its own
                    out.append(math.inf)
                    errs += 1
            stats[side], errors[side] = out, errs
        test = threshold_test(stats["d"], stats["dp"], a.delta, a.alpha / 2)
        test["err_lb"] = error_event(errors["d"], errors["dp"], a.runs, a.delta, a.alpha / 2)
        test["eps_lb"] = max(test["eps_lb"], test["err_lb"])
        results.append((name, errors, test))
        print(f"{name}: eps_lb {test['eps_lb']:.3f}, errors {errors} ({time.time() - started:.0f} s)",
              file=sys.stderr)

    print(f"* {a.persons} persons with 1-3 rows each and the audited person X; k = {a.k}; "
          f"dperm.train(..., 'logistic', dp_options(epsilon => {a.epsilon}, delta => {a.delta:g})), default "
          f"algorithm; {a.runs} trainings per table; statistic w[0], +inf for an error; threshold on the first "
          f"half, counted on the second; Clopper-Pearson {100 * (1 - a.alpha):g} %. Seed {a.seed}. "
          f"{time.time() - started:.0f} s.\n")
    print("| configuration | errors D / D' | threshold test | ε_lb of {error} | ε_lb | ε per unit | ε_lb > ε? |")
    print("|:---|---:|:---|---:|---:|---:|:---|")
    for name, errors, test in results:
        ev = f"{'>' if test['upper'] else '≤'} {test['t']:.3g}: {test['k_num']} vs {test['k_den']} of {test['n']}"
        print(f"| {name} | {errors['d']} / {errors['dp']} | {ev} | {test['err_lb']:.3f} | **{test['eps_lb']:.3f}** | {a.epsilon:g} "
              f"| {'yes' if test['eps_lb'] > a.epsilon else 'no'} |")
    sess.close()


if __name__ == "__main__":
    main()
