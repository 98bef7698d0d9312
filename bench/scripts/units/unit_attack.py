#!/usr/bin/env python3
"""End-to-end many-rows attack on privacy units, against a real server.

Two tables differ only in one person's rows: person X has 1 ordinary row in
D and --heavy rows of the extreme point x = (1, 0), label false, in D'; the
other persons have 1-3 rows each (features in the unit ball, labels from a
fixed linear model). For each configuration, dperm.train (the default
algorithm, logistic, epsilon 1, a given delta) runs R times on each table
and every model is reduced to its coefficient along X's direction, w[0].
The test is the harness's (bench/lib/audit_harness.hpp): the first half of
each side's runs picks the threshold and tail with the best bound, the
second half counts the event under both tables, and with Clopper-Pearson
bounds at alpha/2 each eps_lb = ln((p_fav_low - delta) / p_other_high).
Configurations: the unit budget (privacy_unit pid, max_rows_per_unit k:
eps_lb must be <= epsilon) and a plain row-level budget (the guarantee is
per row, so X's --heavy rows are not covered: eps_lb is expected > epsilon).

Run inside pg_virtualenv -t (bench/scripts/units/unit_attack.sh). Stdlib only. Prints
markdown to stdout.
"""

import argparse
import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
import psql_session  # noqa: E402


def log_binom_pmf(k, n, p):
    if p <= 0:
        return 0.0 if k == 0 else -math.inf
    if p >= 1:
        return 0.0 if k == n else -math.inf
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
            + k * math.log(p) + (n - k) * math.log1p(-p))


def upper_tail(k, n, p):
    """P(Bin(n, p) >= k)."""
    return min(1.0, sum(math.exp(log_binom_pmf(i, n, p)) for i in range(k, n + 1)))


def cp_lower(k, n, alpha):
    """Clopper-Pearson lower bound (rounded down)."""
    if k <= 0:
        return 0.0
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if upper_tail(k, n, mid) < alpha:
            lo = mid
        else:
            hi = mid
    return lo


def cp_upper(k, n, alpha):
    """Clopper-Pearson upper bound (rounded up)."""
    if k >= n:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if 1 - upper_tail(k + 1, n, mid) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def eps_lb(k_num, k_den, n, delta, alpha):
    num = cp_lower(k_num, n, alpha / 2) - delta
    den = cp_upper(k_den, n, alpha / 2)
    return math.log(num / den) if num > den else 0.0


def evaluate(s_d, s_dp, t, upper, delta, alpha):
    """(eps_lb, k_num, k_den) of E = {s > t} (favours D') or {s <= t} (favours D)."""
    above_d = sum(1 for s in s_d if s > t)
    above_dp = sum(1 for s in s_dp if s > t)
    n = len(s_d)
    k_num, k_den = (above_dp, above_d) if upper else (n - above_d, n - above_dp)
    return eps_lb(k_num, k_den, n, delta, alpha), k_num, k_den


def threshold_test(s_d, s_dp, delta, alpha):
    """Chooses the test on the first half, evaluates it on the second."""
    h = len(s_d) // 2
    best = (-1, None, None, 1)
    # w[0] is not oriented towards D' in advance: both signs are candidates
    # (four events: either tail, favouring either table), chosen on the first half.
    for sign in (1, -1):
        cal_d, cal_dp = [sign * v for v in s_d[:h]], [sign * v for v in s_dp[:h]]
        for t in sorted(cal_d + cal_dp):
            for upper in (True, False):
                e = evaluate(cal_d, cal_dp, t, upper, delta, alpha)[0]
                if e > best[0]:
                    best = (e, t, upper, sign)
    _, t, upper, sign = best
    ev_d, ev_dp = [sign * v for v in s_d[h:2 * h]], [sign * v for v in s_dp[h:2 * h]]
    e, k_num, k_den = evaluate(ev_d, ev_dp, t, upper, delta, alpha)
    return {"eps_lb": e, "cal_eps": best[0], "t": t, "upper": upper, "sign": sign,
            "k_num": k_num, "k_den": k_den, "n": len(ev_d)}


def make_tables(persons, heavy, seed):
    """Rows (pid, x1, x2, y) of D and D': X = pid 0."""
    rng = random.Random(seed)
    base = []
    for pid in range(1, persons + 1):
        for _ in range(rng.randint(1, 3)):
            r = math.sqrt(rng.random())
            a = rng.uniform(0, 2 * math.pi)
            x1, x2 = r * math.cos(a), r * math.sin(a)
            y = 1.5 * x1 - x2 + 0.3 + rng.gauss(0, 0.5) > 0
            base.append((pid, x1, x2, y))
    d = base + [(0, 0.1, 0.2, True)]
    dp = base + [(0, 1.0, 0.0, False)] * heavy
    return d, dp


def load(sess, name, rows):
    sess.query(f"DROP TABLE IF EXISTS {name}; CREATE TABLE {name} (pid int, f float8[], y boolean)")
    values = ",".join(f"({p},ARRAY[{a!r},{b!r}]::float8[],{str(y).lower()})" for p, a, b, y in rows)
    sess.query(f"INSERT INTO {name} VALUES {values}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=120, help="trainings per table and configuration")
    ap.add_argument("--persons", type=int, default=150)
    ap.add_argument("--heavy", type=int, default=40)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--deltas", default="1e-6,0")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=20261127)
    ap.add_argument("--repo", default=os.getcwd())
    a = ap.parse_args()

    (sess,), build, waited = psql_session.installed_session(a.repo)
    print(f"<!-- dperm.so build {build}; waited {waited:.0f} s for the install lock -->",
          file=sys.stderr)
    d, dp = make_tables(a.persons, a.heavy, a.seed)
    deltas = [float(x) for x in a.deltas.split(",")]
    budget_eps = 10 * a.runs * a.epsilon * len(deltas)
    levels = {
        "unit": f"privacy_unit => 'pid', max_rows_per_unit => {a.k}",
        "row": "",
    }
    for level, unit in levels.items():
        for side, rows in (("d", d), ("dp", dp)):
            name = f"attack_{level}_{side}"
            load(sess, name, rows)
            extra = (", " + unit) if unit else ""
            sess.query(f"SELECT dperm.set_budget('{name}', epsilon => {budget_eps}, delta => 0.5, "
                       f"accounting => 'basic'{extra})")

    results = []
    started = time.time()
    for delta in deltas:
        for level in levels:
            stats, meta, seconds = {}, {}, {}
            for side in ("d", "dp"):
                name = f"attack_{level}_{side}"
                sql = (f"SELECT (m::jsonb->'coefficients'->>0), m::jsonb->>'algorithm', "
                       f"m::jsonb->>'n', m::jsonb->>'privacy_unit' FROM (SELECT dperm.train('{name}', 'f', 'y', "
                       f"'logistic', dp_options(epsilon => {a.epsilon}, delta => {delta}, dimension => 2)) AS m) s")
                t0 = time.time()
                out = []
                for _ in range(a.runs):
                    row = sess.query(sql)[0]
                    out.append(float(row[0]))
                    meta[side] = row[1:]
                seconds[side] = (time.time() - t0) / a.runs
                stats[side] = out
            test = threshold_test(stats["d"], stats["dp"], delta, a.alpha)
            mean = {s: sum(v) / len(v) for s, v in stats.items()}
            sd = {s: math.sqrt(sum((x - mean[s]) ** 2 for x in v) / (len(v) - 1)) for s, v in stats.items()}
            results.append((level, delta, meta, mean, sd, test, seconds))
            print(f"{level} delta={delta}: eps_lb {test['eps_lb']:.3f} ({time.time() - started:.0f} s)",
                  file=sys.stderr)

    print(f"* D: {len(d)} rows, {a.persons + 1} persons (1-3 rows each; X has 1 row); D': X has "
          f"{a.heavy} rows of x = (1, 0), label false ({len(dp)} rows). dperm.train(..., 'logistic', "
          f"dp_options(epsilon => {a.epsilon}, delta => δ)), default algorithm, {a.runs} trainings per "
          f"table per row; statistic w[0]; threshold chosen on the first {a.runs // 2} runs per side, "
          f"counted on the other {a.runs - a.runs // 2 if a.runs % 2 == 0 else a.runs // 2}; "
          f"Clopper-Pearson {100 * (1 - a.alpha):g} %. Seed of the data {a.seed}.\n")
    print("| budget | δ | algorithm (D / D') | n (D / D') | privacy_unit (model JSON of D') | w[0] D / D' (mean ± sd) "
          "| test | ε_lb | claimed ε per person | ε_lb > ε? | s per train |")
    print("|:---|---:|:---|:---|:---|:---|:---|---:|---:|:---|---:|")
    for level, delta, meta, mean, sd, test, seconds in results:
        budget = (f"unit (pid, max_rows_per_unit {a.k})" if level == "unit" else "row (plain budget)")
        w = "w0" if test["sign"] == 1 else "−w0"
        ev = f"{{{w} {'>' if test['upper'] else '≤'} {test['t']:.3g}}}: {test['k_num']} vs {test['k_den']} of {test['n']}"
        claim = f"{a.epsilon:g}" if level == "unit" else f"none ({a.epsilon:g} per row; X has {a.heavy} rows)"
        print(f"| {budget} | {delta:g} | {meta['d'][0]} / {meta['dp'][0]} | {meta['d'][1]} / {meta['dp'][1]} "
              f"| {meta['dp'][2]} | {mean['d']:.3f} ± {sd['d']:.3f} / {mean['dp']:.3f} ± {sd['dp']:.3f} | {ev} | **{test['eps_lb']:.3f}** "
              f"| {claim} | {'yes' if test['eps_lb'] > a.epsilon else 'no'} "
              f"| {(seconds['d'] + seconds['dp']) / 2:.3f} |")
    sess.close()


if __name__ == "__main__":
    main()
