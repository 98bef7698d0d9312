#!/usr/bin/env python3
"""High-precision reference constants of the unit tests, computed with mpmath
(Debian python3-mpmath) alone: no dperm code.

  GaussianDelta        test/unit/test_analytic_gaussian.cpp,
                       GaussianDelta.MatchesHighPrecisionValues: the exact
                       delta of the Gaussian mechanism (Balle & Wang 2018,
                       Thm 8) at sensitivity 1,
                       delta = Phi(1/(2 s) - eps s) - e^eps Phi(-1/(2 s) - eps s),
                       at 80 digits.
  AnalyticGaussianSigma  the same file, ExtremeRegimesMatchHighPrecisionRoots:
                       the root s of delta(s, eps) = delta, at 80 digits.
  RdpPoissonSubsampledGaussian  test/unit/test_rdp.cpp,
                       MatchesHighPrecisionFractionalOrders: the RDP of the
                       Poisson-subsampled Gaussian (Mironov, Talwar & Zhang
                       2019), log(A_a)/(a - 1) with
                       A_a = E_{z~N(0,s^2)}[(1 - q + q e^{(2z - 1)/(2 s^2)})^a],
                       by 50-digit quadrature split at the modes.

Usage:
  python3 scripts/gen_reference_constants.py          # print the tables
  python3 scripts/gen_reference_constants.py --check  # compare with the tests
--check parses each table from its test file and fails (exit 1) when a value
differs from the recomputed one by more than 1e-10 relative (the tests
themselves allow 1e-9 or 1e-10).
"""
import os
import re
import sys

import mpmath as mp

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def gaussian_delta(sigma, eps):
    s, e = mp.mpf(sigma), mp.mpf(eps)
    return mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s)


def analytic_sigma(eps, delta):
    # delta(s) falls as s grows: bisection on log s (300 halvings of a
    # width-200 bracket is far below 80 digits).
    lo, hi = mp.mpf(-100), mp.mpf(100)
    for _ in range(300):
        mid = (lo + hi) / 2
        if gaussian_delta(mp.exp(mid), eps) > delta:
            lo = mid
        else:
            hi = mid
    return mp.exp((lo + hi) / 2)


def rdp_poisson_gaussian(q, sigma, order):
    q, s, a = mp.mpf(q), mp.mpf(sigma), mp.mpf(order)
    f = lambda z: mp.npdf(z, 0, s) * ((1 - q) + q * mp.exp((2 * z - 1) / (2 * s * s))) ** a
    # The integrand's mass sits near 0, 1/2 and 1 (and, for large a, near a).
    points = sorted({-mp.inf, mp.mpf(0), mp.mpf(1) / 2, mp.mpf(1), a, mp.inf})
    return mp.log(mp.quad(f, points)) / (a - 1)


# (test file, test name, column count, function of the leading columns)
TABLES = [
    ("test/unit/test_analytic_gaussian.cpp", "GaussianDelta, MatchesHighPrecisionValues", 3, 80,
     lambda sigma, eps: gaussian_delta(sigma, eps)),
    ("test/unit/test_analytic_gaussian.cpp", "AnalyticGaussianSigma, ExtremeRegimesMatchHighPrecisionRoots",
     3, 80, lambda eps, delta: analytic_sigma(eps, delta)),
    ("test/unit/test_rdp.cpp", "RdpPoissonSubsampledGaussian, MatchesHighPrecisionFractionalOrders",
     4, 50, lambda q, sigma, order: rdp_poisson_gaussian(q, sigma, order)),
]

NUMBER = r"[-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?"


def table_rows(path, test, columns):
    text = open(os.path.join(ROOT, path)).read()
    start = text.index("cases[] = {", text.index("TEST(" + test + ")"))
    body = text[start:text.index("};", start)]
    row = re.compile(r"\{\s*" + r"\s*,\s*".join(["(" + NUMBER + ")"] * columns) + r"\s*\}")
    return [m.groups() for m in row.finditer(body)]


def main():
    check = "--check" in sys.argv[1:]
    worst, failures = 0.0, 0
    for path, test, columns, digits, fn in TABLES:
        mp.mp.dps = digits
        rows = table_rows(path, test, columns)
        if not rows:
            sys.exit("no rows found for %s in %s" % (test, path))
        print("// %s (%s), %d digits" % (test, path, digits))
        for row in rows:
            inputs = [mp.mpf(float(x)) for x in row[:-1]]  # the tests pass doubles
            value = fn(*inputs)
            print("      {%s, %s}," % (", ".join(row[:-1]), mp.nstr(value, 25)))
            if check:
                stated = mp.mpf(row[-1])
                rel = abs(stated - value) / abs(value) if value != 0 else abs(stated)
                worst = max(worst, float(rel))
                if rel > mp.mpf("1e-10"):
                    failures += 1
                    print("MISMATCH %s: %s stated, %s recomputed" % (row, row[-1], mp.nstr(value, 25)))
    if check:
        print("gen_reference_constants: worst relative difference %.3g, %d mismatch(es)" % (worst, failures))
        sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
