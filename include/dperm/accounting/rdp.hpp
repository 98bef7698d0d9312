// Rényi differential privacy (Mironov 2017, "Rényi Differential Privacy",
// CSF) accounting for the Gaussian mechanism and its subsampled variants,
// composition, and conversion of an RDP curve to (ε, δ)-DP.
//
// An RDP curve is a vector of ε(α) values on a vector of orders α > 1; +inf
// means "no guarantee at this order". Noise multipliers (sigma) are the noise
// standard deviation divided by the per-record L2 contribution bound C (the
// clipping norm), except RdpGaussian, which takes σ/Δ directly.
#pragma once

#include "dperm/util/errors.hpp"

#include <cstdint>
#include <vector>

namespace dperm {

// The 24 orders 1.25, 1.5, …, 128, 256 used by every RDP-to-DP conversion
// and calibration in dperm (the grid of ../shared/accounting/README.md).
std::vector<double> StandardOrders();

// ε(α) = α/(2 (σ/Δ)²) of the Gaussian mechanism with noise σ and L2
// sensitivity Δ (Mironov 2017, Prop. 7). sigma_over_sensitivity > 0 finite,
// order > 1 finite.
double RdpGaussian(double sigma_over_sensitivity, double order);

// One step of the Poisson-subsampled Gaussian mechanism under add/remove-one
// neighbours: each record joins the batch with probability q, the batch sum
// of contributions of L2 norm ≤ 1 gets N(0, σ²) noise. Exact RDP
// log(A_α)/(α−1) (Mironov, Talwar & Zhang 2019, "Rényi Differential Privacy
// of the Sampled Gaussian Mechanism", Sec. 3). q in [0, 1] (q = 0 gives 0,
// q = 1 gives α/(2σ²) exactly), sigma > 0 finite, order in (1, 1e5].
double RdpPoissonSubsampledGaussian(double q, double sigma, double order);

// One step of the Gaussian mechanism on a batch of m = γn records drawn
// uniformly WITHOUT replacement, under replace-one neighbours (n public).
// Upper bound of Wang, Balle & Kasiviswanathan 2019 ("Subsampled Rényi
// Differential Privacy and Analytical Moments Accountant", AISTATS, Thm 9),
// with the base mechanism's RDP taken at replace-one sensitivity Δ = 2 (a
// replaced record changes the batch sum by up to 2C), i.e.
// ε(α) = αΔ²/(2σ²) = 2α/σ². Non-integer α use the bound at ⌈α⌉ (α < 2 use
// 2), valid because RDP is non-decreasing in α. Never above the unsampled
// 2α/σ², to which it reduces at γ = 1. gamma in (0, 1], sigma > 0 finite,
// order in (1, 1e5].
double RdpSampledWithoutReplacementGaussian(double gamma, double sigma, double order);

// RDP curve of `steps` adaptive compositions of the Poisson-subsampled
// Gaussian mechanism on `orders` (Mironov 2017, Prop. 1: RDP adds up).
std::vector<double> RdpPoissonSubsampledGaussianCurve(double q, double sigma, std::int64_t steps,
                                                      const std::vector<double>& orders);

// Element-wise sum of RDP curves on one order grid (Mironov 2017, Prop. 1).
// All curves must have the same non-zero length.
std::vector<double> ComposeRdp(const std::vector<std::vector<double>>& curves);

// The curve of `times` ≥ 1 compositions of one mechanism: times · rdp.
std::vector<double> SelfComposeRdp(const std::vector<double>& rdp, std::int64_t times);

// min_α rdp(α) − log δ/(α−1) (Mironov 2017, Prop. 3). Orders with rdp = +inf
// are skipped; if all are, returns +inf and best_index −1. Ties go to the
// first order. best_index (may be null) receives the minimising index.
double RdpToEpsilonClassic(const std::vector<double>& orders, const std::vector<double>& rdp,
                           double delta, int* best_index = nullptr);

// min_α rdp(α) + log(1 − 1/α) − (log δ + log α)/(α − 1), clipped at 0
// (Balle et al. 2020, AISTATS, "Hypothesis testing interpretations and Rényi
// DP", Thm 21; Canonne, Kamath & Steinke 2020, Prop. 12), with dp_accounting's
// conventions: an order with δ² + expm1(−rdp) > 0 gives 0, orders ≤ 1.01 and
// rdp = +inf are skipped, ties go to the first order. Never larger than
// RdpToEpsilonClassic. Orders > 1 finite, rdp ≥ 0 (or +inf), δ in (0, 1).
double RdpToEpsilon(const std::vector<double>& orders, const std::vector<double>& rdp, double delta,
                    int* best_index = nullptr);

// ε of `steps` compositions of the Poisson-subsampled Gaussian mechanism at
// δ: the exact RDP on StandardOrders() and RdpToEpsilon. best_order (may be
// null) receives the minimising order (NaN if the result is +inf).
double EpsilonPoissonSubsampledGaussianRdp(double q, double sigma, std::int64_t steps, double delta,
                                           double* best_order = nullptr);

}  // namespace dperm
