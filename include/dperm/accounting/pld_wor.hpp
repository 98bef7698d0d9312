// PLD accountant for the Gaussian mechanism on batches drawn uniformly
// without replacement under replace-one neighbours, its noise calibration,
// and a lower bound that no sound accountant can go below. Units as in
// rdp_wor.hpp: `sigma` is σ/C with per-row contribution C (sensitivity 2C);
// gamma = m/n. Derivations in src/core/accounting/rdp_wor.cpp (the dominating pair) and
// src/core/accounting/pld_wor.cpp (discretisation, lower bound).
#pragma once

#include "dperm/util/errors.hpp"
#include "dperm/accounting/pld.hpp"

#include <cstdint>

namespace dperm {

// One step's PLD of the symmetric dominating pair, discretised by
// pessimistic connect-the-dots on the grid of the given width: its δ(ε) is
// at least the pair's for every ε ∈ R, so compositions stay upper bounds.
DiscretePld WorGaussianPld(double gamma, double sigma, double discretization = 1e-4);

// ε(δ) of `steps` adaptive steps by the PLD above (an upper bound).
// gamma in (0, 1], sigma > 0, steps ≥ 1, delta in (0, 1).
double EpsilonWorGaussianPld(double gamma, double sigma, std::int64_t steps, double delta,
                             double discretization = 1e-4);

// δ(ε) of the same composition (an upper bound), epsilon ≥ 0.
double DeltaWorGaussianPld(double gamma, double sigma, std::int64_t steps, double epsilon,
                           double discretization = 1e-4);

// A LOWER bound on the true ε(δ) of `steps` steps: the "remove" pair
// ((1−γ)N(0, s²) + γN(−1, s²) vs N(0, s²), s = sigma/2) is the exact output
// law of a real pair of neighbouring datasets (every other row's
// contribution equal to the replacing row's), composed non-adaptively; its
// privacy losses are rounded DOWN onto the grid, which can only lower δ(ε).
double EpsilonWorGaussianLowerBound(double gamma, double sigma, std::int64_t steps, double delta,
                                    double discretization = 1e-4);

// Plans calibrate sampled steps with CalibrateWorGaussian up to this
// epsilon. Above it the privacy loss's range (it grows as sigma shrinks)
// makes the PLD slow (over a minute per calibration at epsilon = 1e4), and
// they use WBK 2019 Thm 9 instead (PlanGradientNoise).
constexpr double kWorPldMaxEpsilon = 10;

// How CalibrateWorGaussian got its answer.
struct WorCalibration {
  double rdp_sigma = 0;  // smallest sigma by the dominating pair's RDP (0 if not computed)
  double pld_sigma = 0;  // smallest sigma found by the PLD (0 if not tried / failed)
  double sigma = 0;      // the smaller of the two: the answer
  bool used_pld = false;
};

// The smallest noise multiplier (to ~1e-3 relative, rounded up) whose
// `steps` steps are (epsilon, delta)-DP: by bisection with the PLD above
// (grid width 1e-3 min(1, epsilon)) when `use_pld`, otherwise (or when the
// PLD cannot be computed, e.g. too many grid points) by the dominating
// pair's RDP on LedgerOrders() (Balle et al. 2020, Thm 21). With `detail`
// both are computed and the smaller returned. All answers are sound.
double CalibrateWorGaussian(double gamma, std::int64_t steps, double epsilon, double delta,
                            bool use_pld = true, WorCalibration* detail = nullptr);

// The smallest sigma whose EpsilonWorGaussianLowerBound is at most epsilon
// (to 1e-4 relative, rounded down): below it the mechanism is certainly not
// (epsilon, delta)-DP.
double LowerBoundWorGaussianSigma(double gamma, std::int64_t steps, double epsilon, double delta,
                                  double discretization = 1e-4);

}  // namespace dperm
