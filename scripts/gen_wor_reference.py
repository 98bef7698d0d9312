#!/usr/bin/env python3
"""Reference values for sampling without replacement under replace-one
(test/unit/test_rdp_wor.cpp), computed independently of dperm's C++ with
mpmath (Debian python3-mpmath) only: no dperm code, no dp_accounting.

Units as dperm's rdp_wor.hpp: sigma = noise std / C (per-row bound C), so
the replace-one sensitivity is 2C and s = sigma / 2 in units of it. The
dominating pair of one step is described through the Poisson-style pair
R = (1-g) N(0, s^2) + g N(-1, s^2) ("remove" side) and Q = N(0, s^2).

Rows (kind, gamma, sigma, steps, order_or_eps, value):
  wbk27      Wang-Balle-Kasiviswanathan 2019 Thm 27 at integer orders (and the
             CGF interpolation at fractional ones), with the even
             Pearson-Vajda moments as exact alternating sums at 400 digits.
  pair_rdp   RDP of the symmetric dominating pair, by quadrature of
             E[(P*/Q*)^a] - 1 = int_{x<-1/2} Q (g^a + g^(1-a) - g - 1) dx.
  remove_rdp RDP of the remove pair D_a(R || Q) (an attainable lower bound).
  sym_delta  hockey-stick delta(eps) of `steps` in {1, 2} compositions of the
             symmetric pair: steps 2 as E_{L~w*}[delta_1(eps - L)].
  remove_delta the same for the remove pair alone (attainable lower bound).
  three_point delta(eps) of the pair ((1-g)N(0)+gN(1/2), (1-g)N(0)+gN(-1/2))
             (other rows at 0, the changed row +-C), steps 1: must be below
             sym_delta (domination).

Usage: python3 scripts/gen_wor_reference.py > test/unit/wor_reference.csv
"""
import sys
import mpmath as mp

mp.mp.dps = 30
DPS_ALT = 400


def phi(x, s):
    return mp.exp(-x * x / (2 * s * s)) / (s * mp.sqrt(2 * mp.pi))


def cdf(x, s):
    return mp.ncdf(x / s)


# ---- WBK Thm 27 -------------------------------------------------------------
def pearson_vajda(s, l):
    """B_l = sum_i (-1)^(l-i) C(l,i) exp(i(i-1)/(2 s^2)), exactly."""
    with mp.workdps(DPS_ALT):
        s = mp.mpf(s)
        tot = mp.mpf(0)
        for i in range(l + 1):
            tot += (-1) ** (l - i) * mp.binomial(l, i) * mp.exp(mp.mpf(i * (i - 1)) / (2 * s * s))
        return +tot


def wbk27_log_moment(g, s, a):
    g, s = mp.mpf(g), mp.mpf(s)
    e2 = 1 / (s * s)
    tot = 1 + g ** 2 * mp.binomial(a, 2) * min(4 * mp.expm1(e2), 2 * mp.exp(e2))
    for j in range(3, a + 1):
        lo, hi = 2 * (j // 2), 2 * ((j + 1) // 2)
        pv = 4 * mp.sqrt(pearson_vajda(s, lo) * pearson_vajda(s, hi))
        plain = 2 * mp.exp(mp.mpf(j * (j - 1)) / (2 * s * s))
        tot += g ** j * mp.binomial(a, j) * min(pv, plain)
    return mp.log(tot)


def wbk27(g, sigma, order):
    s = mp.mpf(sigma) / 2
    unsampled = 2 * mp.mpf(order) / (mp.mpf(sigma) ** 2)
    if order == int(order):
        k = wbk27_log_moment(g, s, int(order))
    else:
        lo = int(mp.floor(order))
        t = mp.mpf(order) - lo
        klo = 0 if lo <= 1 else wbk27_log_moment(g, s, lo)
        k = (1 - t) * klo + t * wbk27_log_moment(g, s, lo + 1)
    return min(k / (order - 1), unsampled)


# ---- the pairs --------------------------------------------------------------
def ratio(g, s, x):  # g(x) = R/Q
    return 1 - g + g * mp.exp((-2 * x - 1) / (2 * s * s))


def pair_rdp(g, sigma, a):
    s = mp.mpf(sigma) / 2
    a = mp.mpf(a)
    f = lambda x: phi(x, s) * (ratio(g, s, x) ** a + ratio(g, s, x) ** (1 - a) - ratio(g, s, x) - 1)
    peak = -a  # the g^a bump sits near x = -a (ratio ~ e^{-x/s^2})
    i = mp.quad(f, [-mp.inf, peak - 10 * s, peak, peak + 10 * s, -0.5] if peak + 10 * s < -0.5
                else [-mp.inf, peak - 10 * s, -0.5])
    return mp.log1p(i) / (a - 1)


def remove_rdp(g, sigma, a):
    s = mp.mpf(sigma) / 2
    a = mp.mpf(a)
    f = lambda x: phi(x, s) * ratio(g, s, x) ** a
    return mp.log(mp.quad(f, [-mp.inf, -a - 10 * s, -a, -a + 10 * s, 0, mp.inf])) / (a - 1)


def loss_remove(g, s, x):
    return mp.log(ratio(g, s, x))


def xinv(g, s, eps):  # loss_remove(x) = eps, eps > log(1-g)
    return -mp.mpf(1) / 2 - s * s * mp.log(1 + mp.expm1(eps) / g)


def delta_remove1(g, s, eps):
    if eps <= mp.log(1 - g):
        return -mp.expm1(eps)
    x = xinv(g, s, eps)  # loss > eps  <=>  X < x
    return (1 - g) * cdf(x, s) + g * cdf(x + 1, s) - mp.exp(eps) * cdf(x, s)


def delta_add1(g, s, eps):
    # H_{e^eps}(Q || R): loss log(Q/R) = -loss_remove, > eps iff X > xinv(-eps)
    if eps >= -mp.log(1 - g):
        return mp.mpf(0)
    x = xinv(g, s, -eps)
    return (1 - cdf(x, s)) - mp.exp(eps) * ((1 - g) * (1 - cdf(x, s)) + g * (1 - cdf(x + 1, s)))


def delta_sym1(g, s, eps):
    return max(delta_remove1(g, s, eps), delta_add1(g, s, eps))


def sym_delta(g, sigma, steps, eps):
    s = mp.mpf(sigma) / 2
    eps = mp.mpf(eps)
    if steps == 1:
        return delta_sym1(g, s, eps)
    # L ~ w*: +L(x) with density R(x), -L(x) with density Q(x), x < -1/2; atom at 0.
    R = lambda x: (1 - g) * phi(x, s) + g * phi(x + 1, s)
    Q = lambda x: phi(x, s)
    f = lambda x: (R(x) * delta_sym1(g, s, eps - loss_remove(g, s, x)) +
                   Q(x) * delta_sym1(g, s, eps + loss_remove(g, s, x)))
    xe = xinv(g, s, eps) if eps > mp.log(1 - g) else -mp.mpf(1) / 2
    cuts = sorted(set([-mp.inf, min(xe, -0.5), -2, -1 - 8 * s, -0.5]))
    cont = mp.quad(f, cuts)
    ra = (1 - g) * cdf(-0.5, s) + g * cdf(0.5, s)
    qa = cdf(-0.5, s)
    return cont + (1 - ra - qa) * delta_sym1(g, s, eps)


def remove_delta(g, sigma, steps, eps):
    s = mp.mpf(sigma) / 2
    eps = mp.mpf(eps)
    if steps == 1:
        return delta_remove1(g, s, eps)
    R = lambda x: (1 - g) * phi(x, s) + g * phi(x + 1, s)
    f = lambda x: R(x) * delta_remove1(g, s, eps - loss_remove(g, s, x))
    cuts = [-mp.inf, -1 - 8 * s, -0.5, 8 * s, mp.inf]
    return mp.quad(f, cuts)


def three_point_delta(g, sigma, eps):
    s = mp.mpf(sigma) / 2
    eps = mp.mpf(eps)
    P = lambda x: (1 - g) * phi(x, s) + g * phi(x - 0.5, s)
    Qd = lambda x: (1 - g) * phi(x, s) + g * phi(x + 0.5, s)
    f = lambda x: max(mp.mpf(0), P(x) - mp.exp(eps) * Qd(x))
    # P/Q is increasing in x: find the crossing, integrate beyond it.
    lo, hi = -60 * s - 1, 60 * s + 1
    for _ in range(200):
        mid = (lo + hi) / 2
        if mp.log(P(mid)) - mp.log(Qd(mid)) > eps:
            hi = mid
        else:
            lo = mid
    x0 = lo
    return mp.quad(f, [x0, x0 + 10 * s, mp.inf])


def main():
    out = sys.stdout
    out.write("# generated by scripts/gen_wor_reference.py (mpmath %s); see its docstring\n" % mp.__version__)
    out.write("kind,gamma,sigma,steps,arg,value\n")
    for g in (0.01, 0.1):
        for sigma in (2.0, 8.0):
            for order in (2, 3, 4, 8, 16, 2.5, 1.5):
                out.write("wbk27,%r,%r,1,%r,%s\n" % (g, sigma, order, mp.nstr(wbk27(g, sigma, order), 17)))
            for order in (1.5, 2, 3, 8, 32):
                out.write("pair_rdp,%r,%r,1,%r,%s\n" % (g, sigma, order, mp.nstr(pair_rdp(g, sigma, order), 17)))
                out.write("remove_rdp,%r,%r,1,%r,%s\n" % (g, sigma, order, mp.nstr(remove_rdp(g, sigma, order), 17)))
    for g, sigma in ((0.1, 2.0), (0.1, 8.0), (0.01, 2.0), (0.5, 4.0)):
        for steps in (1, 2):
            for eps in (0.05, 0.2, 0.5, 1.0):
                out.write("sym_delta,%r,%r,%d,%r,%s\n" % (g, sigma, steps, eps, mp.nstr(sym_delta(g, sigma, steps, eps), 17)))
                out.write("remove_delta,%r,%r,%d,%r,%s\n" % (g, sigma, steps, eps, mp.nstr(remove_delta(g, sigma, steps, eps), 17)))
        for eps in (0.05, 0.2, 0.5, 1.0):
            out.write("three_point,%r,%r,1,%r,%s\n" % (g, sigma, eps, mp.nstr(three_point_delta(g, sigma, eps), 17)))


if __name__ == "__main__":
    main()
