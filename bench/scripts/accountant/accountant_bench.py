#!/usr/bin/env python3
"""dperm accountant benchmark (not a test): releases per budget, and noise
multipliers against the seed papers' closed forms.

Runs against the database psql reaches through the PG* environment (see
bench/scripts/accountant/accountant_bench.sh), with CREATE EXTENSION dperm done and a superuser
role (set_budget on the bench's own tables). Standard library only. Prints a
markdown report on stdout.

Part 1: how many releases fit into one budget (epsilon 3, delta 1e-6) under
basic composition (sums) and under RDP composition (the summed RDP curves,
converted by dperm.rdp_to_epsilon at the delta budget), for
  - output_gd (dp_logreg) at epsilon 0.1, delta 0 (pure; curve min(eps, a eps^2/2))
  - output_gd at epsilon 0.1, delta 1e-8 (Gaussian; curve from dp_explain)
  - a DP-SGD style Poisson-subsampled Gaussian release (q 0.01, 1000 steps,
    noise multiplier calibrated so that one release is (0.5, 1e-8) by RDP),
all from the SQL accountant functions; then end to end: real dp_logreg
releases against real budgets until one is refused (SQLSTATE DP001).

Part 2: the noise multiplier dperm calibrates (RDP and PLD accountants) vs the
closed forms of the seed papers, for a grid of (epsilon, delta, q, T).
"""

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time

BUDGET_EPS = 3.0
BUDGET_DELTA = 1e-6
REL_EPS = 0.1            # output_gd releases
REL_DELTA_GAUSS = 1e-8
SGD_Q, SGD_T, SGD_EPS, SGD_DELTA = 0.01, 1000, 0.5, 1e-8
GRID_EPS = [0.5, 1, 2, 8]
GRID_DELTA = 1e-5
GRID_Q = [0.01, 0.1]
GRID_T = [100, 1000, 10000]
E2E_ROWS = 1000
E2E_CAP = 5000


# ------------------------------------------------------------------ psql

def psql(sql, fatal=True):
    """Run SQL through psql (unaligned, tuples only); its lines, or None on error."""
    out = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-f", "-"],
                         input=sql, capture_output=True, text=True)
    if out.returncode != 0:
        if fatal:
            sys.exit(f"accountant_bench: psql failed:\n{out.stderr}\n--- SQL ---\n{sql[:2000]}")
        return None
    return out.stdout.splitlines()


def scalar(sql, fatal=True):
    lines = psql(sql, fatal)
    if lines is None or not lines:
        return None
    return lines[-1]


def f8(sql, fatal=True):
    v = scalar(sql, fatal)
    return None if v is None or v == "" else float(v)


def arr(values):
    """A float8[] literal with round-trip precision."""
    return "'{" + ",".join(repr(float(v)) for v in values) + "}'::float8[]"


def parse_arr(text):
    return [float(v) for v in text.strip("{}").split(",")]


# ------------------------------------------------------------------ helpers

def within(spent, budget):
    """The ledger's test (src/pg/ledger/ledger.cpp): relative slack 1e-12 for rounding."""
    return spent <= budget + 1e-12 * max(1.0, budget)


def within_delta(spent, budget):
    return spent <= budget + 1e-12 * max(budget, 1e-300)


def max_k(fits, cap=10 ** 7):
    """Largest k >= 0 with fits(k), for fits monotone (true up to some k)."""
    if not fits(1):
        return 0
    lo, hi = 1, 2
    while hi <= cap and fits(hi):
        lo, hi = hi, hi * 2
    if hi > cap:
        return cap
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo


def basic_count(eps, delta):
    """Releases whose running sums stay within the budget (summed as the ledger does)."""
    k, se, sd = 0, 0.0, 0.0
    while True:
        se2, sd2 = se + eps, sd + delta
        if not (within(se2, BUDGET_EPS) and within_delta(sd2, BUDGET_DELTA)):
            return k
        k, se, sd = k + 1, se2, sd2


def rdp_eps(curve, k, orders=None):
    """dperm.rdp_to_epsilon of k times a curve (on dperm.rdp_orders() unless orders are
    given), at the delta budget."""
    o = "dperm.rdp_orders()" if orders is None else arr(orders)
    return f8(f"SELECT dperm.rdp_to_epsilon({o}, {arr([k * c for c in curve])}, {BUDGET_DELTA!r})")


def rdp_count(curve, orders=None):
    return max_k(lambda k: within(rdp_eps(curve, k, orders), BUDGET_EPS))


# A fine reference grid of Renyi orders (401 orders, geometric from 1.01 to 256),
# to separate the loss of the ledger's 24-order grid from that of RDP itself.
FINE_ORDERS = [1 + 0.01 * 25500 ** (i / 400) for i in range(401)]


def advanced_eps(k, eps0, delta0):
    """Dwork-Rothblum-Vadhan 2010 advanced composition, delta' = budget - k delta0."""
    dprime = BUDGET_DELTA - k * delta0
    if dprime <= 0:
        return math.inf
    return eps0 * math.sqrt(2 * k * math.log(1 / dprime)) + k * eps0 * math.expm1(eps0)


def advanced_count(eps0, delta0):
    return max_k(lambda k: advanced_eps(k, eps0, delta0) <= BUDGET_EPS, cap=10 ** 6)


def fmt(x, digits=4):
    if x is None:
        return "n/a"
    if isinstance(x, str):
        return x
    if x == math.inf:
        return "∞"
    if x != 0 and (abs(x) >= 1e5 or abs(x) < 1e-3):
        return f"{x:.{digits - 1}e}"
    return f"{x:.{digits}g}"


def table(header, rows, align=None):
    out = ["| " + " | ".join(header) + " |"]
    align = align or ["r"] * len(header)
    out.append("|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|")
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def machine():
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    osname = platform.system()
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    osname = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} CPUs{mem}; {osname}, Linux {platform.release()}"


def git_rev():
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        rev = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", here, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return rev + (" (with uncommitted changes)" if dirty else "") if rev else "unknown"
    except OSError:
        return "unknown"


# ------------------------------------------------------------------ part 1

def explain_accounting(delta):
    opts = f"dp_options(epsilon => {REL_EPS!r}, delta => {delta!r}, l2 => 0.1, dimension => 2)" if delta > 0 \
        else f"dp_options(epsilon => {REL_EPS!r}, l2 => 0.1, dimension => 2)"
    j = scalar(f"SELECT dp_explain('logistic', {E2E_ROWS}, 2, {opts})->'accounting'")
    return json.loads(j)


def part1(out):
    orders = parse_arr(scalar("SELECT dperm.rdp_orders()"))
    results = {}

    # (a) output_gd, pure: the curve from dp_explain, checked against min(eps, a eps^2 / 2)
    pure = explain_accounting(0)
    pure_curve = pure["rdp"]
    expect = [min(REL_EPS, a * REL_EPS ** 2 / 2) for a in orders]
    pure_ok = max(abs(x - y) for x, y in zip(pure_curve, expect)) < 1e-15
    # (a) output_gd, Gaussian: the curve from dp_explain, checked against a / (2 z^2)
    gauss = explain_accounting(REL_DELTA_GAUSS)
    g_curve = gauss["rdp"]
    z_g = gauss["noise_multiplier"]
    z_sql = f8(f"SELECT dperm.gaussian_sigma({REL_EPS!r}, {REL_DELTA_GAUSS!r})")
    g_ok = max(abs(c - a / (2 * z_sql ** 2)) for c, a in zip(g_curve, orders)) < 1e-12
    z_tight = f8(f"SELECT dperm.gaussian_sigma({BUDGET_EPS!r}, {BUDGET_DELTA!r})")

    # (b) DP-SGD style release
    z_sgd = f8(f"SELECT dperm.calibrate_noise_multiplier({SGD_Q!r}, {SGD_T}, {SGD_EPS!r}, {SGD_DELTA!r}, 'rdp')")
    eps_sgd = f8(f"SELECT dperm.epsilon_subsampled_gaussian({SGD_Q!r}, {z_sgd!r}, {SGD_T}, {SGD_DELTA!r}, 'rdp')")
    eps_sgd_pld = f8(f"SELECT dperm.epsilon_subsampled_gaussian({SGD_Q!r}, {z_sgd!r}, {SGD_T}, {SGD_DELTA!r}, 'pld')")
    sgd_curve = parse_arr(scalar(
        f"SELECT dperm.rdp_subsampled_gaussian({SGD_Q!r}, {z_sgd!r}, {SGD_T}, dperm.rdp_orders())"))

    # the same curves on the fine reference grid
    fine = FINE_ORDERS
    fine_curves = {
        "pure": [min(REL_EPS, a * REL_EPS ** 2 / 2) for a in fine],
        "gauss": [a / (2 * z_g ** 2) for a in fine],
        "sgd": parse_arr(scalar(
            f"SELECT dperm.rdp_subsampled_gaussian({SGD_Q!r}, {z_sgd!r}, {SGD_T}, {arr(fine)})")),
    }

    cases = [
        ("output_gd (dp_logreg), pure", f"({REL_EPS}, 0)", REL_EPS, 0.0, pure_curve, "pure", None),
        ("output_gd (dp_logreg), Gaussian", f"({REL_EPS}, {REL_DELTA_GAUSS:g})", REL_EPS, REL_DELTA_GAUSS,
         g_curve, "gauss", "gauss"),
        (f"DP-SGD: Poisson q = {SGD_Q}, T = {SGD_T}, z = {z_sgd:.4f} ¶",
         f"({SGD_EPS}, {SGD_DELTA:g})", SGD_EPS, SGD_DELTA, sgd_curve, "sgd", "pld"),
    ]
    rows = []
    for name, claim, eps0, delta0, curve, fine_key, tight in cases:
        nb = basic_count(eps0, delta0)
        nr = rdp_count(curve)
        nf = rdp_count(fine_curves[fine_key], fine)
        nl = max(nb, nr)          # the ledger's rule: the better of the two bounds
        na = advanced_count(eps0, delta0)
        e_at = rdp_eps(curve, nr)
        e_next = rdp_eps(curve, nr + 1)
        if tight == "gauss":
            # k Gaussian releases of multiplier z are one Gaussian release of z / sqrt(k):
            # exact, by the analytic Gaussian mechanism (Balle & Wang 2018)
            nt = max_k(lambda k: z_g / math.sqrt(k) >= z_tight)
            tight_s = f"{nt} (analytic Gaussian, exact)"
        elif tight == "pld":
            # k releases of T steps each are kT steps of the same subsampled Gaussian
            nt = max_k(lambda k: within(f8(
                f"SELECT dperm.epsilon_subsampled_gaussian({SGD_Q!r}, {z_sgd!r}, {k * SGD_T}, "
                f"{BUDGET_DELTA!r}, 'pld')"), BUDGET_EPS))
            tight_s = f"{nt} (PLD of kT steps)"
        else:
            nt = None
            tight_s = "—"
        results[name] = dict(basic=nb, rdp=nr, ledger=nl, adv=na, tight=nt, fine=nf)
        rows.append([name, claim, nb, na, nr, f"{e_at:.4f} / {e_next:.4f}", nl, nf, tight_s])

    out.append("## 1. Releases that fit into one budget: ε = 3, δ = 1e-6\n")
    out.append(
        "Each row is one kind of release, repeated on the same relation until the budget is "
        "exhausted. *basic*: Σε ≤ 3 and Σδ ≤ 1e-6. *advanced*: Dwork–Rothblum–Vadhan "
        "composition ε√(2k ln(1/δ′)) + kε(e^ε − 1) with δ′ = 1e-6 − kδ (reference only, not in "
        "dperm). *RDP*: the largest k with `dperm.rdp_to_epsilon(dperm.rdp_orders(), k·curve, "
        "1e-6) ≤ 3`, where the curve is the release's RDP curve on the ledger's 24 orders. "
        "*ledger 'rdp'*: what a relation with `accounting => 'rdp'` admits — the ledger reports "
        "the smaller of the RDP bound and the plain sums (when Σδ fits), so the count is "
        "max(basic, RDP). *RDP, 401 orders*: the same curves on a fine grid of orders "
        "(geometric, 1.01 to 256; reference), to tell the loss of the 24-order grid from that of "
        "RDP itself. *tight*: the count an exact accountant for that mechanism allows "
        "(reference). Counts are computed with the SQL functions; no training.\n")
    out.append(table(["release", "per release (ε, δ)", "basic", "advanced", "RDP",
                      "RDP ε at k / k+1", "ledger 'rdp'", "RDP, 401 orders", "tight"],
                     rows, ["l", "l", "r", "r", "r", "r", "r", "r", "l"]))
    out.append("")
    out.append("¶ At this commit dperm has no DP-SGD release (dp_logreg and dp_huber run "
               "output_gd, full batch); this row is the arithmetic the ledger would apply to rows carrying this "
               "curve.\n")
    out.append(
        f"Curves: pure output_gd from `dp_explain(...)->'accounting'->'rdp'` "
        f"{'equals' if pure_ok else 'DIFFERS FROM'} min(ε, αε²/2) (Bun & Steinke); Gaussian output_gd "
        f"has noise multiplier {z_g:.4f} (`dperm.gaussian_sigma(0.1, 1e-8)` = {z_sql:.4f}) and its "
        f"curve {'equals' if g_ok else 'DIFFERS FROM'} α/(2z²); one Gaussian release alone converts "
        f"to ε = {gauss['epsilon_at_delta'].get('rdp', float('nan')):.4f} by RDP at δ = 1e-8 "
        f"(0.1 by the analytic Gaussian). The DP-SGD release: z = "
        f"`dperm.calibrate_noise_multiplier({SGD_Q}, {SGD_T}, {SGD_EPS}, {SGD_DELTA:g})` = {z_sgd:.6f}; "
        f"one release is ε = {eps_sgd:.4f} (RDP) / {eps_sgd_pld:.4f} (PLD) at δ = {SGD_DELTA:g}; "
        f"its curve is `dperm.rdp_subsampled_gaussian({SGD_Q}, z, {SGD_T}, dperm.rdp_orders())` and k "
        f"releases compose to k·curve. The exact Gaussian count is ⌊(z / σ(3, 1e-6))²⌋ with "
        f"σ(3, 1e-6) = `dperm.gaussian_sigma(3, 1e-6)` = {z_tight:.4f}.\n")
    return results


E2E_SQL = r"""
SET max_parallel_workers_per_gather = 0;
CREATE TABLE IF NOT EXISTS acct_src AS
  SELECT i, ARRAY[sin(i) / 2, cos(i) / 2] AS f, sin(5 * i) > 0 AS y FROM generate_series(1, %(rows)d) i;
DROP TABLE IF EXISTS %(rel)s;
CREATE TABLE %(rel)s AS SELECT * FROM acct_src;
SELECT dperm.set_budget('%(rel)s', %(eps)r, %(delta)r, accounting => '%(acct)s');
CREATE OR REPLACE FUNCTION pg_temp.releases_until_refused(rel regclass, opts jsonb, cap int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE k int := 0;
BEGIN
  LOOP
    EXIT WHEN k >= cap;
    BEGIN
      EXECUTE format('SELECT dp_logreg(f, y, %%L) FROM %%s', opts, rel);
    EXCEPTION WHEN SQLSTATE 'DP001' THEN
      RETURN k;
    END;
    k := k + 1;
  END LOOP;
  RETURN k;
END $$;
SELECT pg_temp.releases_until_refused('%(rel)s', %(opts)s, %(cap)d);
-- a new statement (and snapshot) sees the releases
SELECT s.epsilon_spent || '|' || s.delta_spent || '|' ||
       (SELECT sum(epsilon) FROM dperm.ledger WHERE '%(rel)s'::regclass = ANY (relations))
  FROM dperm.budget_status s WHERE s.relation = '%(rel)s'::regclass;
"""


def part1_e2e(out, results):
    cases = [
        ("acct_pure_basic", "basic", 0.0, "output_gd (dp_logreg), pure"),
        ("acct_pure_rdp", "rdp", 0.0, "output_gd (dp_logreg), pure"),
        ("acct_gauss_basic", "basic", REL_DELTA_GAUSS, "output_gd (dp_logreg), Gaussian"),
        ("acct_gauss_rdp", "rdp", REL_DELTA_GAUSS, "output_gd (dp_logreg), Gaussian"),
    ]
    rows, all_ok, exact = [], True, True
    for rel, acct, delta, key in cases:
        opts = (f"dp_options(epsilon => {REL_EPS!r}, delta => {delta!r}, l2 => 0.1, dimension => 2)" if delta > 0
                else f"dp_options(epsilon => {REL_EPS!r}, l2 => 0.1, dimension => 2)")
        t0 = time.time()
        lines = psql(E2E_SQL % dict(rows=E2E_ROWS, rel=rel, eps=BUDGET_EPS, delta=BUDGET_DELTA,
                                    acct=acct, opts=opts, cap=E2E_CAP))
        dt = time.time() - t0
        k = lines[-2]
        eps_spent, delta_spent, eps_sum = lines[-1].split("|")
        k = int(k)
        predicted = results[key]["basic"] if acct == "basic" else results[key]["ledger"]
        ok = abs(k - predicted) <= 1
        all_ok &= ok
        exact &= k == predicted
        rows.append([f"`{rel}`", "pure" if delta == 0 else f"Gaussian, δ = {delta:g}", f"'{acct}'",
                     predicted, k, "yes" if ok else "**NO**", f"{float(eps_spent):.6f}",
                     f"{float(delta_spent):.3g}", f"{float(eps_sum):.4g}", f"{dt:.1f}"])
    out.append("### End to end: real releases against real budgets\n")
    out.append(
        f"A {E2E_ROWS}-row table with 2 features (the shape of `test/sql/rdp_ledger.sql`) is copied once "
        f"per case; `dperm.set_budget(rel, 3, 1e-6, accounting => ...)`; then `dp_logreg(f, y, "
        f"dp_options(epsilon => 0.1[, delta => 1e-8], l2 => 0.1))` runs in a PL/pgSQL loop until the "
        f"ledger refuses a release with SQLSTATE DP001. *predicted* is the arithmetic above (basic "
        f"count for 'basic', ledger 'rdp' count for 'rdp'); the spent ε/δ are from "
        f"`dperm.budget_status` after the loop.\n")
    out.append(table(["relation", "release", "accounting", "predicted", "releases before DP001",
                      "match (±1)", "ε spent", "δ spent", "Σε of ledger rows", "seconds"],
                     rows, ["l", "l", "l", "r", "r", "l", "r", "r", "r", "r"]))
    out.append("")
    return "exactly" if exact else ("within 1" if all_ok else None)


# ------------------------------------------------------------------ part 2

def part2(out):
    d = GRID_DELTA
    L = math.log(1 / d)
    rows_a, rows_b, ratios = [], [], dict(bassily=[], lssgd=[])
    valid_ratios = dict(bassily=[], lssgd=[])
    c2s, below = [], []
    timing = dict(rdp=0.0, pld=0.0)
    for q in GRID_Q:
        for T in GRID_T:
            for eps in GRID_EPS:
                t0 = time.time()
                z_rdp = f8(f"SELECT dperm.calibrate_noise_multiplier({q!r}, {T}, {eps!r}, {d!r}, 'rdp')")
                t1 = time.time()
                z_pld = f8(f"SELECT dperm.calibrate_noise_multiplier({q!r}, {T}, {eps!r}, {d!r}, 'pld')")
                t2 = time.time()
                timing["rdp"] += t1 - t0
                timing["pld"] += t2 - t1
                # Bassily et al. 2019, Alg. 1: sigma^2 = 8 T L^2 log(1/d) / (n^2 eps^2) on the
                # mini-batch mean; z = sigma m / L = q sqrt(8 T log(1/d)) / eps
                z_b = q * math.sqrt(8 * T * L) / eps
                # DP-LSSGD Thm 1: nu^2 = 8 T alpha G^2 / (n^2 eps), alpha = 2 log(1/d)/eps + 1,
                # on the mini-batch mean; z = nu b / G = q sqrt(8 T alpha / eps)
                alpha = 2 * L / eps + 1
                z_l = q * math.sqrt(8 * T * alpha / eps)
                # Abadi et al. / Wang-Ye-Xu Thm 3.1: z = c2 q sqrt(T log(1/d)) / eps, c2 unstated:
                # the c2 at which the form equals dperm's calibration
                c2_rdp = z_rdp * eps / (q * math.sqrt(T * L))
                c2_pld = z_pld * eps / (q * math.sqrt(T * L))
                b_valid = eps <= 1
                l_valid = eps ** 2 <= 5 * T * L * q ** 2
                c2s.append((c2_rdp, c2_pld, eps <= q * q * T))
                ratios["bassily"].append((z_b / z_rdp, z_b / z_pld))
                ratios["lssgd"].append((z_l / z_rdp, z_l / z_pld))
                if b_valid:
                    valid_ratios["bassily"].append((z_b / z_rdp, z_b / z_pld))
                if l_valid:
                    valid_ratios["lssgd"].append((z_l / z_rdp, z_l / z_pld))
                # what the closed forms' noise is actually worth (dperm PLD, same delta)
                act_b = f8(f"SELECT dperm.epsilon_subsampled_gaussian({q!r}, {z_b!r}, {T}, {d!r}, 'pld')",
                           fatal=False)
                act_l = f8(f"SELECT dperm.epsilon_subsampled_gaussian({q!r}, {z_l!r}, {T}, {d!r}, 'pld')",
                           fatal=False)
                mark_b = "" if b_valid else " †"
                mark_l = "" if l_valid else " ‡"
                rows_a.append([eps, q, T, fmt(z_rdp), fmt(z_pld),
                               fmt(z_b) + mark_b, f"{z_b / z_rdp:.2f}", f"{z_b / z_pld:.2f}",
                               fmt(z_l) + mark_l, f"{z_l / z_rdp:.2f}", f"{z_l / z_pld:.2f}",
                               f"{c2_rdp:.2f}", f"{c2_pld:.2f}"])
                below.append(dict(form="Bassily", eps=eps, q=q, T=T, valid=b_valid,
                                  ratio=z_b / z_pld, actual=act_b))
                below.append(dict(form="DP-LSSGD", eps=eps, q=q, T=T, valid=l_valid,
                                  ratio=z_l / z_pld, actual=act_l))
                rows_b.append([eps, q, T, fmt(q * q * T), fmt(eps / (q * q * T)),
                               "yes" if b_valid else "no (ε > 1)",
                               "yes" if l_valid else f"no (ε² > {fmt(5 * T * L * q * q)})",
                               fmt(act_b), fmt(act_l)])

    out.append("## 2. Noise multiplier: dperm vs the seed papers' closed forms\n")
    out.append(
        f"δ = {d:g} throughout; q is the sampling rate, T the number of steps. dperm: "
        "`dperm.calibrate_noise_multiplier(q, T, ε, δ, 'rdp' | 'pld')` — the smallest noise "
        "multiplier z (noise std on the summed, clipped gradients over the clip norm; Poisson "
        "sampling; add/remove neighbours) whose accounted ε is at most the target.\n")
    out.append("Conversions of the closed forms to a noise multiplier z (noise std on the batch *sum* "
               "over the per-example gradient bound L = G = clip norm):\n")
    out.append(
        "* **Bassily, Feldman, Talwar, Thakurta 2019** (seed 002), Algorithm 1 ANSGD: "
        "σ² = 8TL² log(1/δ)/(n²ε²) is added to the mini-batch *mean* of m gradients, so the "
        "noise on the sum is σm and z = σm/L = (m/n)·√(8T log(1/δ))/ε = **q√(8T log(1/δ))/ε**. "
        "Validity as stated: ε ≤ 1, δ ≤ 1/n² (n is not fixed here), batches drawn uniformly "
        "with replacement, m = max(n√(ε/(4T)), 1); privacy is by [ACG+16, Thm 1], so Abadi et "
        "al.'s ε < c₁q²T also applies. Rows with ε > 1 are marked †.")
    out.append(
        "* **DP-LSSGD** (seed 001), Theorem 1: ν² = 8TαG²/(n²ε) per coordinate on the mini-batch "
        "mean of b gradients, where α is the Rényi order the proof picks, α = 2 log(1/δ)/ε + 1 "
        "(Appendix A.1; the RDP of T steps is ε/2 at that order and log(1/δ)/(α−1) = ε/2). "
        "z = νb/G = (b/n)√(8Tα/ε) = **q√(8T(2 log(1/δ)/ε + 1)/ε)** ≈ √2 × Bassily's form. "
        "Validity as stated: ε² ≤ 5T log(1/δ) b²/n² = 5q²T log(1/δ) (it comes from Lemma 1's "
        "ν²/Δ² ≥ 1/1.25); sampling without replacement. Rows outside are marked ‡. The paper's "
        "proof takes sensitivity 2G/b (replace-one), so per unit of *its* sensitivity the "
        "multiplier would be half of z; z is used here as for Bassily, in units of G.")
    out.append(
        "* **Abadi et al. 2016, as restated by Wang, Ye, Xu 2017** (seed 003, Theorem 3.1): "
        "z ≥ c₂q√(T log(1/δ))/ε for ε < c₁q²T, \"there exist constants c₁ and c₂\" — neither "
        "constant is stated in the seeds. Wang–Ye–Xu's DP-SVRG (Theorem 4.1) uses "
        "σ² = c·G²Tm ln(1/δ)/(n²ε²) with one sample per step (q = 1/n, Tm steps), i.e. the same "
        "form with c = c₂², again with c unstated. So instead of a ratio the table gives the "
        "**implied c₂** = z_dperm·ε/(q√(T log(1/δ))) at which this form equals dperm's "
        "calibration; Bassily's form is this form with c₂ = √8 ≈ 2.83.")
    out.append("")
    out.append(table(["ε", "q", "T", "z dperm RDP", "z dperm PLD", "z Bassily", "Bassily / RDP",
                      "Bassily / PLD", "z DP-LSSGD", "LSSGD / RDP", "LSSGD / PLD",
                      "implied c₂ (RDP)", "implied c₂ (PLD)"], rows_a))
    out.append("")
    out.append("† outside Bassily et al.'s stated range (ε ≤ 1). ‡ outside DP-LSSGD's stated range "
               "(ε² ≤ 5q²T log(1/δ)).\n")
    out.append(
        "Validity of the closed forms, and what their noise actually buys: *actual ε* is "
        "`dperm.epsilon_subsampled_gaussian(q, z_closed_form, T, δ, 'pld')` — the ε of the closed "
        "form's multiplier under dperm's PLD accountant (Poisson, add/remove). Abadi et al.'s "
        "condition ε < c₁q²T cannot be checked without c₁; the column ε/(q²T) shows how far each "
        "row is from the regime where it holds for c₁ of order 1. Caveat: the papers state "
        "their guarantees for replace-one neighbours (and Bassily et al. sample with "
        "replacement, DP-LSSGD without); dperm's accountant is Poisson add/remove. Under "
        "replace-one the same noise is worth a larger ε, so an actual ε above the target here "
        "is not rescued by the papers' own neighbouring relation.\n")
    out.append(table(["ε", "q", "T", "q²T", "ε/(q²T)", "Bassily valid", "DP-LSSGD valid",
                      "actual ε of z Bassily", "actual ε of z DP-LSSGD"], rows_b))
    out.append("")
    return dict(ratios=ratios, valid=valid_ratios, c2s=c2s, timing=timing, cells=below)


# ------------------------------------------------------------------ main

def rng(pairs, idx):
    vals = [p[idx] for p in pairs]
    return (min(vals), max(vals)) if vals else (float("nan"), float("nan"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--command", default="bash bench/scripts/accountant/accountant_bench.sh")
    args = ap.parse_args()
    start = time.time()
    pg = scalar("SELECT split_part(version(), ' on ', 1)")
    ext = scalar("SELECT extversion FROM pg_extension WHERE extname = 'dperm'")

    body = []
    results = part1(body)
    t_counts = time.time() - start
    t0 = time.time()
    e2e_ok = part1_e2e(body, results)
    t_e2e = time.time() - t0
    t0 = time.time()
    p2 = part2(body)
    t_grid = time.time() - t0
    total = time.time() - start

    head = ["# dperm accountant benchmark: releases per budget, noise multipliers vs closed forms\n",
            "Not a test: a measurement of how much the RDP ledger and the RDP/PLD calibration buy "
            "over plain sums and over the seed papers' closed forms.\n",
            f"* Command: `{args.command}` (builds and installs dperm, starts a throwaway "
            "PostgreSQL 15 with `pg_virtualenv`, runs `bench/scripts/accountant/accountant_bench.py`, writes this file)",
            f"* Date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
            f"* Machine: {machine()}",
            f"* Software: {pg}; dperm {ext}, commit {git_rev()}",
            f"* Runtime of bench/scripts/accountant/accountant_bench.py: {total:.0f} s (release counts {t_counts:.1f} s, "
            f"end-to-end releases {t_e2e:.1f} s, noise-multiplier grid {t_grid:.1f} s, of which "
            f"calibration by RDP {p2['timing']['rdp']:.1f} s and by PLD {p2['timing']['pld']:.1f} s)",
            ""]

    g = results["output_gd (dp_logreg), Gaussian"]
    p = results["output_gd (dp_logreg), pure"]
    sg = [v for k, v in results.items() if k.startswith("DP-SGD")][0]
    rb_all, rl_all = p2["ratios"]["bassily"], p2["ratios"]["lssgd"]
    rb_v, rl_v = p2["valid"]["bassily"], p2["valid"]["lssgd"]
    cells = p2["cells"]
    under = [c for c in cells if c["ratio"] < 1]
    under_valid = [c for c in under if c["valid"]]
    over_target = [c for c in cells if c["actual"] is not None and c["actual"] > c["eps"]]
    in_regime = [c for c in p2["c2s"] if c[2]]
    out_regime = [c for c in p2["c2s"] if not c[2]]
    worst = max(over_target, key=lambda c: c["actual"] / c["eps"]) if over_target else None

    def r(pairs, i):
        lo, hi = rng(pairs, i)
        return f"{lo:.2f}–{hi:.2f}"

    take = ["## Takeaways\n",
            f"* Gaussian output_gd releases at (0.1, 1e-8) into (3, 1e-6): **{g['basic']} by sums, "
            f"{g['rdp']} by RDP** ({g['rdp'] / g['basic']:.0f}×). The exact Gaussian composition "
            f"allows {g['tight']}; the loss is RDP's conversion, not the ledger's 24-order grid "
            f"(a 401-order grid gets {g['fine']}).",
            f"* Pure ε = 0.1 output_gd releases: **{p['basic']} by sums, {p['rdp']} by RDP** (the "
            f"ledger admits the better, {p['ledger']}): min(ε, αε²/2) is a weak curve, and the same "
            f"ε spent as Gaussian noise with δ = 1e-8 composes {g['rdp'] / p['rdp']:.0f}× further. "
            + (f"End to end, real dp_logreg releases were refused {e2e_ok} where the arithmetic "
             f"said (four cases: pure and Gaussian, 'basic' and 'rdp')." if e2e_ok else
             "End to end, real dp_logreg releases did NOT stop where the arithmetic said: see "
             "the table."),
            f"* DP-SGD releases (q = {SGD_Q}, T = {SGD_T}, each (0.5, 1e-8) by RDP): **{sg['basic']} "
            f"by sums, {sg['rdp']} by RDP**; PLD on the composed steps allows {sg['tight']}.",
            f"* Noise multiplier, closed form / dperm over the whole grid: Bassily et al. "
            f"{r(rb_all, 0)}× RDP ({r(rb_all, 1)}× PLD), DP-LSSGD {r(rl_all, 0)}× RDP "
            f"({r(rl_all, 1)}× PLD). Inside each form's stated range: Bassily {r(rb_v, 0)}× RDP, "
            f"DP-LSSGD {r(rl_v, 0)}× RDP — dperm's PLD calibration needs up to "
            f"{rng(rl_v, 1)[1]:.1f}× less noise for the same (ε, δ); DP-LSSGD's Remark 1 (\"tight\") does not hold by this measure.",
            f"* {len(under)} of {len(cells)} closed-form values are below dperm's PLD calibration, "
            f"{len(under_valid)} of them inside the form's stated range; "
            f"{len(over_target)} buy an actual ε above the target"
            + (f", worst {worst['form']} at ε = {worst['eps']}, q = {worst['q']}, T = {worst['T']}: "
               f"actual ε = {worst['actual']:.3g}" if worst else "")
            + (f". All of these have ε/(q²T) ≥ {min(c['eps'] / (c['q'] ** 2 * c['T']) for c in under + over_target):.0f}, "
               f"far outside Abadi et al.'s ε < c₁q²T" if under + over_target else "")
            + f". The moments-accountant "
            f"form matches dperm (RDP) with c₂ = {r(in_regime, 0)} where ε ≤ q²T (Bassily's "
            f"√8 ≈ 2.83 over-noises there) and {r(out_regime, 0)} elsewhere: no one constant fits.",
            ""]
    print("\n".join(head + take + body))


if __name__ == "__main__":
    main()
