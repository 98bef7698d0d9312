// The two noise distributions of output perturbation (Zhang, Zheng, Mou & Wang
// 2017, "Efficient Private ERM for Smooth Objectives", Algorithm 1, lines 5
// and 7). The noise scale is calibrated by the caller (the mechanism / Plan:
// plan/plan_noise.hpp plans and adds a plan's noise); these functions only
// sample.
//
// Floating-point samplers are exposed to the least-significant-bit attack
// of Mironov (CCS 2012), so dperm has none: every release uses the secure
// samplers below (integer arithmetic only, outputs on a grid 2^k Z), and
// objective perturbation's continuous linear term comes from the exact
// normal sampler of exact_normal.hpp.
#pragma once

#include "dperm/util/errors.hpp"
#include "dperm/noise/noise_kind.hpp"
#include "dperm/noise/random.hpp"

#include <Eigen/Dense>
#include <cstdint>

namespace dperm {

// ---- Secure (exact, integer-only) samplers -------------------------------
// Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential
// Privacy", NeurIPS 2020 (CKS20). Every draw uses only integer arithmetic on
// ChaCha20 words: no floating-point value ever influences the distribution.

// ---- SAMPLER FAILURE AND THE FLOOR ON DELTA ------------------------------
// Which draws can fail, and why delta has a floor (options.hpp, kMinDelta).
//  * DiscreteLaplace: exact, never fails (128-bit, no cap). Every pure
//    epsilon-DP release (output perturbation with delta = 0, the stage-0
//    offset, dperm.evaluate, l2 selection's Laplace scores) draws only it,
//    so its guarantee is exactly epsilon-DP.
//  * DiscreteGaussian: exact too. A discrete Laplace proposal with
//    |Y| t den >= 2^63 (with den = 1 and sigma <= 2^28 grid units,
//    MaxGridUnits, that needs |Y| >= 128 t: probability < 2 exp(-128)) is
//    tested in 256-bit arithmetic instead of aborting, as dperm did up to
//    0.6.0; every caller's t den < 2^29 keeps |Y| t den < 2^126. (With
//    sigma >= 2^10 grid units, SnapGrid, a proposal is accepted with
//    probability >= 0.38, so a draw takes fewer than 4 proposals on
//    average: test_delta_floor.cpp.) So output perturbation with delta > 0
//    and l2 selection's Gaussian scores are exact.
//  * RoundedExactNormal (exact_normal.hpp): aborts when step N1 proposes
//    k >= 256, probability exp(-128) per round; a round is accepted with
//    probability > 1/3 (k = 0 and step N4 at k = 0: (1 - e^(-1/2)) 0.85),
//    so a draw aborts with probability < 3 exp(-128).
// What the exact normal's abort does to privacy (it is kept: objective
// perturbation's solver bound needs |b_i| < 256 sigma, exact_normal.hpp).
// It is an event of the generator's bits alone, with the same probability
// under both neighbours (a refusal that says nothing about the data), and
// conditioned on no abort every round's proposal is conditioned on k < 256,
// so the accepted value has the exact law truncated to |X| < 256.
// Truncation divides every density by one normaliser common to both
// neighbours, so on the region G where no draw of either neighbour's law is
// near its cap the privacy loss is the ideal one; G's complement has
// probability at most 2 exp(-(256 - s)^2/2) per draw, s the largest shift of
// a draw's mean between neighbours in units of its sigma
// (MaxShiftPerSigma). Hence the release is (epsilon, (delta + tail)/(1 -
// tail))-DP with tail = draws 2 exp(-(256 - s)^2/2), and the abort has
// probability <= draws 3 exp(-128). The floor: CheckDeltaFloor (plan_noise.hpp) requires
// both to be at most 2^-20 delta for the plan's number of draws
// (PlannedNoiseDraws, public) and its s; with delta >= kMinDelta = 1e-30
// the abort term holds for every plan of fewer than 10^18 draws and the
// tail term whenever s <= 240 (a noise multiplier sigma/C below 1/120:
// epsilon in the thousands). So a release charged (epsilon, delta) is
// (epsilon, (1 + 2^-19) delta)-DP with its real samplers: their failure is
// dominated by delta, not the other way round (as it was for delta =
// 1e-100 against aborts of up to exp(-128) a draw).
constexpr double kAbortPerDraw = 3;  // aborts <= 3 exp(-128) per draw
constexpr double kAbortExponent = 128;
constexpr double kTruncationSigmas = 256;  // the exact normal's cap: 256 sigma
constexpr double kFailureShareBits = 20;   // both terms <= 2^-20 delta

// Bernoulli(exp(-num/den)), den >= 1 (CKS20 Algorithm 1; for num/den > 1
// the product of floor(num/den) Bernoulli(exp(-1)) and one
// Bernoulli(exp(-frac))).
bool BernoulliExpNeg(SecureRng& rng, unsigned __int128 num, unsigned __int128 den);

// The discrete Laplace distribution on Z with scale t/s (t, s >= 1):
// P[Y = y] ∝ exp(-|y| s / t) (CKS20 Algorithm 2). Needs t, s <= 2^32.
// Exact: never refuses, never truncates (a 128-bit value).
__int128 DiscreteLaplace(SecureRng& rng, uint64_t t, uint64_t s);

// The discrete Gaussian N_Z(0, sigma^2) with sigma^2 = num/den exactly:
// P[Y = y] ∝ exp(-y^2 / (2 sigma^2)) (CKS20 Algorithm 3: discrete Laplace
// proposals of scale t = floor(sigma) + 1, accepted with probability
// exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2))). Needs 1 <= num, den <= 2^62 and
// 2 num den t^2 < 2^127, and t den < 2^29 for exactness in the far tail
// (SAMPLER FAILURE above; beyond it a proposal past 2^126 throws).
__int128 DiscreteGaussian(SecureRng& rng, uint64_t num, uint64_t den);

// ---- Snapping: releases on the grid g Z^dim, g = 2^k ---------------------
// A release of v + noise becomes g (round(v/g) + Z), Z integer noise of
// scale sigma/g, so every released coordinate is an exact multiple of g and
// carries no floating-point artefact of the noise (the defence of Mironov
// 2012 §5, with exact discrete noise in place of snapping's clamp+round of
// a float sample).
//
// Sensitivity of the rounded query (stated here, used by every plan). Let
// r(v) = g round(v/g), nearest rounding per coordinate, so r(v) = v + e with
// |e_i| <= g/2. For neighbours, r(v) - r(v') = (v - v') + (e - e') and
// |e_i - e'_i| <= g, hence
//   ||r(v) - r(v')||_2 <= ||v - v'||_2 + sqrt(dim) g   (triangle inequality),
//   ||r(v) - r(v')||_1 <= ||v - v'||_1 + dim g.
// The issue proposed sqrt(dim) 2^(k-1) = sqrt(dim) g/2: that bounds one
// vector's rounding error ||e||, not the difference of two. It is wrong:
// dim = 1, v = g/2 - t, v' = g/2 + t round to 0 and g, a move of g for
// ||v - v'|| = 2t -> 0, beyond 2t + g/2. So the inflation is sqrt(dim) g.
// Coordinates are first clamped to [-2^52 g, 2^52 g] (coordinate-wise
// clamping is non-expansive in every l_p norm, so the bound still holds) and
// a NaN is read as 0, so the integer arithmetic cannot overflow.

// Grid choice (k): the largest power of two g with
//   g <= sensitivity / (2^10 sqrt(dim))   (the inflation sqrt(dim) g is at
//                                           most 2^-10 of the sensitivity) and
//   g <= sigma / 2^10                      (noise of >= 2^10 grid units),
// raised, if needed, to the smallest power of two with sigma/g <=
// MaxGridUnits(noise): 2^28 for the discrete Gaussian (sigma^2 in grid units
// fits its 64-bit sampler, and a proposal overflows |Y| t < 2^63 only with
// probability exp(-128)), 2^20 for the discrete Laplace (t/s with s = 2^10
// fits 32 bits). A raised grid's inflation is at most sqrt(dim) sigma 2^-27
// (Gaussian) or 2^-19 (Laplace). The Gaussian cap is the higher because
// noise far above one release's sensitivity is the rule for many-step
// mechanisms (an SVRG snapshot gradient is released at every inner step).
// `sensitivity` is the L2 sensitivity (Gaussian) or, for Laplace, the L2
// sensitivity whose sqrt(dim) multiple is the L1 sensitivity.
double MaxGridUnits(NoiseKind noise);
double SnapGrid(double sensitivity, int dim, double sigma, NoiseKind noise);

// sigma^2 in grid units, rounded up to an integer: ceil((sigma/g)^2);
// needs 1 <= sigma/g <= 2^28. With sigma/g >= 2^10 the rounding adds at most 2^-20 relative variance and only
// ever adds noise (more noise is more private: the RDP of CKS20 Thm 14 falls
// as sigma grows).
uint64_t GridSigmaSq(double sigma, double grid);

// The discrete Laplace scale in grid units as t/s with s = 2^10 and t =
// ceil(2^10 scale/g) (rounded up: more noise).
void GridLaplaceScale(double scale, double grid, uint64_t& t, uint64_t& s);

// round(v_i/g) as an integer, after the clamp described above.
int64_t GridRound(double v, double grid);

// v <- g (round(v/g) + Z), Z_i ~ N_Z(0, sigma_sq_grid) i.i.d.
void SnapDiscreteGaussian(SecureRng& rng, double grid, uint64_t sigma_sq_grid, double* v, int dim);
// v <- g (round(v/g) + Z), Z_i i.i.d. discrete Laplace of scale t/s.
void SnapDiscreteLaplace(SecureRng& rng, double grid, uint64_t t, uint64_t s, double* v, int dim);

// ---- Rounded exact Gaussian: the step noise of gradient perturbation -----
// The sampled-step accountants that are tight (Wang, Balle & Kasiviswanathan
// 2019 Thm 27; the dominating pair of Zhu, Dong & Wang 2022 Prop. 30, PLD and
// RDP: rdp_wor.hpp, pld_wor.hpp) are proven for a *continuous* Gaussian base
// mechanism, not for CKS20's discrete one. This release is a post-processing
// of a continuous Gaussian mechanism, so every continuous-Gaussian
// accountant applies to it.
//
// THE BRIDGE. sigma is dyadic (DyadicNoiseScale: <= 20 significant bits)
// and the grid is u = sigma 2^-b for an integer b in [10, 40] chosen from
// public quantities (ExactGaussianBits). The query value g (a batch mean
// gradient) is snapped deterministically to integers K = round(g/u), with
// |u K_i - g_i| <= u per coordinate (below), so u K has L2 sensitivity
// Delta + 2 sqrt(dim) u for a query of sensitivity Delta (|e_i - e'_i| <= 2u;
// per-row contribution C' = C + sqrt(dim) u). The release is
//   u (K + N),  N_i = round(2^b X_i),  X ~ N(0, I) exact (Karney 2016, Alg. N;
//   RoundedExactNormal). Since u K lies on the grid u Z and sigma X / u = 2^b X,
//   u (K + N) = u round(K + 2^b X) = round_u(u K + sigma X),
// a deterministic function (rounding to the grid u Z) of the continuous
// Gaussian mechanism u K + sigma X, whose L2 sensitivity is that of u K.
// Post-processing never weakens DP, RDP or a PLD bound, so the release is at
// least as private as the continuous Gaussian mechanism with sensitivity
// 2C' and noise sigma, composed and subsampled like it.
// Subsampling needs more than a sensitivity: the without-replacement
// accountants (rdp_wor.hpp, pld_wor.hpp) model a batch mean whose value for
// a batch S + {z} is c(S) + h(z) with ||h(z)|| <= C. The snapped mean is not
// of that form, but for every fixed S and every z it lies within C' = C +
// sqrt(dim) u of the same centre c(S) (|u K_i - g_i| <= u per coordinate),
// which is what the pair's domination argument uses (each batch's Gaussian
// is centred in the ball of radius C' about c(S); joint convexity over S),
// so the pair applies with per-row bound C'.
//
// RANGES. g/u is clamped to [-2^50, 2^50] (coordinate-wise clamping is
// non-expansive; NaN reads as 0), so |K| <= 2^50, and g/u is computed with
// relative error <= 2^-53, i.e. absolute error <= 2^-3: |K - g/u| <= 5/8,
// hence |u K - g| <= u. |N| < 256 2^b <= 2^48 (a draw with |X| >= 256 is
// refused, below), so |K + N| < 2^51: exact in int64 and in a double. The
// released double is u (K + N) exactly when |K + N| < 2^33 (u has 20
// significant bits; always so unless |g| > 2^(33-b) sigma), else the double
// nearest to it: either way a deterministic function of the integer K + N.
//
// THE REFUSAL. A round whose step N1 proposes k >= kExactNormalBound
// throws (nothing is released from that step on): an event of the
// CSPRNG's bits alone, probability < 3 exp(-128) per draw whatever the
// data; conditioned on no refusal the draw is N(0, 1) truncated to
// |X| < 256 (excluded mass < exp(-32000)). SAMPLER FAILURE above bounds
// both against delta, and kMinDelta keeps them below 2^-20 delta.
//
// b from public quantities: the smallest b >= 10 with sqrt(dim) sigma 2^-b
// <= 2^-10 C for sigma/C up to multiplier (1 + 2^-9), capped at 40 (the
// sampler's limit; past it the inflation sqrt(dim) u is larger, and still
// accounted in C').
int ExactGaussianBits(double multiplier, int dim);

// v <- u (round(v/u) + round(2^bits X)), u = sigma 2^-bits, X ~ N(0, I) exact.
// sigma must be a DyadicNoiseScale value; 10 <= bits <= 40.
void SnapExactGaussian(SecureRng& rng, double sigma, int bits, double* v, int dim);

}  // namespace dperm
