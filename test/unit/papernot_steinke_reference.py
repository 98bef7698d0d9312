#!/usr/bin/python3
"""Independent values of Papernot & Steinke (ICLR 2022), Theorem 2, for
test/unit/test_select_l2.cpp (PapernotSteinke.MatchesPythonReference).

Theorem 2: K ~ TNB(eta, gamma) (Definition 1), one run (lambda, eps(lambda))-RDP
for every lambda; the best of K runs is (lambda, eps'(lambda))-RDP with
  eps'(lambda) = eps(lambda) + (1 + eta) (1 - 1/lhat) eps(lhat)
                 + (1 + eta) log(1/gamma)/lhat + log(E[K])/(lambda - 1)
for every lhat; minimised over lhat on the same order grid, then made
non-decreasing in lambda (an RDP bound at a higher order holds below).

Written apart from the C++: exact rationals (fractions) for the orders and
the base curve, mpmath-free high-precision logs via decimal, and gamma for a
given mean by bisection in Decimal at 50 digits.

Run: /usr/bin/python3 test/unit/papernot_steinke_reference.py
"""
from decimal import Decimal, getcontext

getcontext().prec = 50

ORDERS = [Decimal(x) for x in ("1.25", "1.5", "1.75", "2", "2.25", "2.5", "3", "3.5", "4", "4.5",
                               "5", "6", "8", "10", "12", "14", "16", "20", "24", "28", "32",
                               "64", "128", "256")]


def tnb_mean(gamma, eta):
    if gamma == 1:
        return Decimal(1)
    if eta == 0:
        return (1 / gamma - 1) / (-gamma.ln())
    return eta * (1 - gamma) / (gamma * (1 - (eta * gamma.ln()).exp()))


def tnb_gamma(mu, eta):
    lo, hi = Decimal(0), Decimal(1)
    for _ in range(300):
        mid = (lo + hi) / 2
        if mid == 0 or tnb_mean(mid, eta) >= mu:
            lo = mid
        else:
            hi = mid
    return lo


def bound(rdp, mu, eta):
    gamma = tnb_gamma(mu, eta)
    mean = tnb_mean(gamma, eta)
    c = min((1 - 1 / l) * e + (1 / gamma).ln() / l for l, e in zip(ORDERS, rdp)) * (1 + eta)
    out = [e + c + mean.ln() / (l - 1) for l, e in zip(ORDERS, rdp)]
    for i in range(len(out) - 2, -1, -1):
        out[i] = min(out[i], out[i + 1])
    return out


def main():
    # One run: the Gaussian mechanism of noise multiplier sigma,
    # eps(lambda) = lambda / (2 sigma^2) (Mironov 2017, Prop. 7).
    for sigma, mu, eta in ((Decimal(2), Decimal(10), Decimal(1)),
                           (Decimal(5), Decimal(10), Decimal(0)),
                           (Decimal(3), Decimal(20), Decimal("0.5"))):
        rdp = [l / (2 * sigma * sigma) for l in ORDERS]
        out = bound(rdp, mu, eta)
        print(f"sigma={sigma} mu={mu} eta={eta}:")
        for i in (0, 3, 8, 13, 20, 23):
            print(f"  order {ORDERS[i]}: {float(out[i])!r}")


if __name__ == "__main__":
    main()
