// Rényi DP of the Gaussian mechanism on a batch drawn uniformly WITHOUT
// replacement, under replace-one neighbours (n public): the accountant of
// dperm's sampled-step algorithms (dp_sgd, dp_lssgd, rrpsgd, the sampled part
// of dp_svrg / dp_svrg_pp). Derivations beside the code in src/core/accounting/rdp_wor.cpp.
//
// Units (as RdpSampledWithoutReplacementGaussian in rdp.hpp): a batch of
// m = γn rows, each contributing at most C in L2 norm to the batch sum, plus
// N(0, σ² I); `sigma` is the noise multiplier σ/C. A replaced row moves the
// sum by up to Δ = 2C, so in the convention of dp_accounting (noise over
// sensitivity) the multiplier is s = σ/Δ = sigma/2.
#pragma once

#include "dperm/util/errors.hpp"

#include <cstdint>
#include <vector>

namespace dperm {

// Wang, Balle & Kasiviswanathan 2019 (AISTATS), Thm 27, for the Gaussian
// base mechanism: an upper bound on the RDP of one step at `order`. Integer
// orders ≥ 2 use the theorem's bound; other orders interpolate (α−1)ε(α)
// linearly between the neighbouring integers (orders in (1, 2) use the
// chord from α = 1), valid because (α−1)ε(α) is convex in α. Never above the
// unsampled 2α/sigma². gamma in (0, 1], sigma > 0 finite, order in (1, 256].
double RdpWorGaussianWbk27(double gamma, double sigma, double order);

// The RDP at `order` of the symmetric dominating pair of one step (the
// tradeoff function min{f_γ, f_γ^{-1}}** of Dong, Roth & Su, Thm 4.2, with
// f = G_{2/sigma}; Zhu, Dong & Wang 2022, Prop. 30): exact up to quadrature
// error (made one-sided by a small inflation). gamma in (0, 1], sigma > 0
// finite, order in (1, 1e4].
double RdpWorGaussianDominatingPair(double gamma, double sigma, double order);

// The RDP dperm records for one sampled step: RdpWorGaussianDominatingPair
// (capped by the unsampled 2α/sigma²). Thm 27 is a valid bound too but was
// never smaller on the tests' grid and costs far more.
double RdpWorGaussian(double gamma, double sigma, double order);

// The smallest of three upper bounds on the RDP of one step at `order`: the
// dominating pair's (RdpWorGaussianDominatingPair), WBK 2019 Thm 9
// (RdpSampledWithoutReplacementGaussian) and the unsampled 2α/sigma². Where
// the pair's quadrature is long (large orders, little noise) a closed-form
// bound on the pair's RDP replaces it when that bound is within 1e-6 of the
// Poisson-subsampled Gaussian's RDP, a lower bound of the pair's
// (derivation in rdp_wor.cpp). So it is never above either bound, and within
// 1e-6 (relative) of the pair's RDP or below it. Used by the SVRG split
// (svrg_common.cpp). gamma in (0, 1], sigma > 0 finite, order in (1, 1e4].
double RdpWorGaussianTight(double gamma, double sigma, double order);

// RdpWorGaussianDominatingPair (or, with `wbk27`, RdpWorGaussianWbk27) on
// every order, times `steps` (Mironov 2017, Prop. 1).
std::vector<double> RdpWorGaussianCurve(double gamma, double sigma, std::int64_t steps,
                                        const std::vector<double>& orders, bool wbk27 = false);

// log E_{N(0,1)}[(e^{y/s − 1/(2s²)} − 1)^l] for even l ≥ 2: the order-l
// Pearson–Vajda pseudo-divergence of N(1, s²) from N(0, s²), the B_l of
// Thm 27, by quadrature of its positive integrand. Exposed for the tests.
double LogGaussianPearsonVajda(double s, int l);

}  // namespace dperm
