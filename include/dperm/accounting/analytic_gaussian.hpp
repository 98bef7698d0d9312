// Calibration of the Gaussian mechanism: the exact (ε, δ) curve and the
// analytic Gaussian mechanism of Balle & Wang (ICML 2018, "Improving the
// Gaussian mechanism for differential privacy: analytical calibration and
// optimal denoising"), plus the classical Dwork–Roth calibration for
// comparison. Δ is the L2 sensitivity under whichever neighbouring relation
// the calling mechanism states; these functions do not depend on it.
#pragma once

#include "dperm/util/errors.hpp"

namespace dperm {

// Exact δ(ε) of adding N(0, sigma²) noise to a query of L2 sensitivity Δ
// (Balle & Wang 2018, Thm 8): Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ).
// Evaluated without overflow or underflow of the intermediate terms (valid
// for ε up to 1e9 and δ down to ~1e-300). sigma > 0, epsilon ≥ 0, Δ > 0,
// all finite; otherwise ThrowInvalid.
double GaussianDelta(double sigma, double epsilon, double sensitivity);

// The smallest epsilon >= 0 at which the Gaussian mechanism with noise sigma
// on L2 sensitivity Delta is (epsilon, delta)-DP: the inverse of
// GaussianDelta in epsilon (Balle & Wang 2018, Theorem 8), by bisection,
// rounded up so that GaussianDelta(sigma, result, Delta) <= delta.
double GaussianEpsilon(double sigma, double delta, double sensitivity);

// The smallest sigma with GaussianDelta(sigma, ε, Δ) ≤ δ (Balle & Wang 2018,
// Algorithm 1, solved by root finding instead of their series search). The
// result is nudged up so that GaussianDelta(result) ≤ δ always holds as
// computed. Requires ε > 0 finite, δ in (0,1), Δ > 0 finite.
double AnalyticGaussianSigma(double epsilon, double delta, double sensitivity = 1.0);

// sqrt(2 ln(1.25/δ)) Δ/ε (Dwork & Roth 2014, Thm A.1). That theorem is proven
// only for ε < 1; for larger ε this value may not be private (e.g. ε = 8,
// δ = 1e-3) and is returned for comparison only. Same argument checks as
// AnalyticGaussianSigma.
double ClassicGaussianSigma(double epsilon, double delta, double sensitivity);

}  // namespace dperm
