#!/usr/bin/python3
"""What l2 => 'auto' costs a candidate, against the alternatives
(docs/accountant.md, "Choosing l2 privately"; numbers quoted there).

A candidate is a Gaussian release of noise multiplier z (RDP alpha/(2 z^2),
Mironov 2017, Prop. 7), as bolton and output_gd are. For a request
(epsilon, delta) the script finds the smallest z each method allows:
  * one release, no selection (l2 given);
  * the split dperm runs (select_l2.hpp): G candidates compose on the
    training part (G alpha/(2 z^2)); parallel composition with the scores
    (pure epsilon_s-DP on the validation part, curve min(e, alpha e^2/2))
    gives the curve max(...); z is calibrated with the scores' epsilon_s
    as in CalibrateJointly (each part to a target t, t as large as fits);
  * Papernot & Steinke 2022, Thm 2 (K ~ TNB(eta, gamma), mean mu) --
    valid only while K stays hidden, which a release's running time does
    not allow (select_l2.hpp).
Conversion: RdpToEpsilon's (Balle et al. 2020, Thm 21) on dperm's orders.
Run: /usr/bin/python3 bench/scripts/accountant/select_l2_cost.py
"""
import math

ORDERS = [1.25, 1.5, 1.75, 2, 2.25, 2.5, 3, 3.5, 4, 4.5, 5, 6, 8, 10, 12, 14, 16, 20, 24, 28,
          32, 64, 128, 256]


def to_eps(rdp, delta):
    best = math.inf
    for a, r in zip(ORDERS, rdp):
        if math.isinf(r):
            continue
        if delta * delta + math.expm1(-r) > 0:
            return 0.0
        best = min(best, r + math.log1p(-1 / a) - (math.log(delta) + math.log(a)) / (a - 1))
    return max(best, 0.0)


def gauss(z, times=1):
    return [times * a / (2 * z * z) for a in ORDERS]


def pure(e):
    return [min(e, a * e * e / 2) for a in ORDERS]


def smallest_z(eps_of_z, target):
    lo, hi = 1e-3, 1e4
    for _ in range(100):
        mid = math.sqrt(lo * hi)
        if eps_of_z(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi


def largest(fits, lo, hi):
    for _ in range(100):
        mid = math.sqrt(lo * hi)
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo


def tnb_gamma(mu, eta):
    def mean(g):
        if eta == 0:
            return (1 / g - 1) / math.log(1 / g)
        return eta * (1 - g) / (g * (1 - g ** eta))
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if mean(mid) >= mu:
            lo = mid
        else:
            hi = mid
    return lo, mean(lo)


def ps(rdp, mu, eta):
    g, m = tnb_gamma(mu, eta)
    c = (1 + eta) * min((1 - 1 / a) * r + math.log(1 / g) / a for a, r in zip(ORDERS, rdp))
    out = [r + c + math.log(m) / (a - 1) for a, r in zip(ORDERS, rdp)]
    for i in range(len(out) - 2, -1, -1):
        out[i] = min(out[i], out[i + 1])
    return out


def split_z(eps, delta, g):
    """The split: the largest target t <= eps whose joint curve fits."""
    def joint(t):
        z = smallest_z(lambda z: to_eps(gauss(z, g), delta), t)
        es = largest(lambda e: to_eps(pure(e), delta) <= t, 1e-6, t)
        return z, es, to_eps([max(x, y) for x, y in zip(gauss(z, g), pure(es))], delta)
    lo, hi = 1e-3 * eps, eps
    if joint(hi)[2] <= eps:
        return joint(hi)
    for _ in range(60):
        mid = (lo + hi) / 2
        if joint(mid)[2] <= eps:
            lo = mid
        else:
            hi = mid
    return joint(lo)


def main():
    delta, g = 1e-6, 4
    print(f"delta = {delta:g}, grid of G = {g}; smallest noise multiplier z per candidate")
    print("| epsilon | one release | split (dperm) | split: score epsilon | P&S geometric, mu = 4 "
          "| P&S logarithmic, mu = 4 | P&S geometric, mu = 10 |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for eps in (0.1, 0.5, 1, 2, 4):
        one = smallest_z(lambda z: to_eps(gauss(z), delta), eps)
        zs, es, _ = split_z(eps, delta, g)
        p1 = smallest_z(lambda z: to_eps(ps(gauss(z), 4, 1), delta), eps)
        p0 = smallest_z(lambda z: to_eps(ps(gauss(z), 4, 0), delta), eps)
        p10 = smallest_z(lambda z: to_eps(ps(gauss(z), 10, 1), delta), eps)
        print(f"| {eps:g} | {one:.3f} | {zs:.3f} ({zs / one:.2f}×) | {es:.3f} | {p1:.3f} ({p1 / one:.2f}×) "
              f"| {p0:.3f} ({p0 / one:.2f}×) | {p10:.3f} ({p10 / one:.2f}×) |")


if __name__ == "__main__":
    main()
