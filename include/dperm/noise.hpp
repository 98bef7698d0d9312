// The two noise distributions of output perturbation (Zhang, Zheng, Mou & Wang
// 2017, "Efficient Private ERM for Smooth Objectives", Algorithm 1, lines 5
// and 7). The noise scale is calibrated by the caller (the mechanism / Plan);
// these functions only sample.
//
// Known limitation: the samplers use IEEE doubles, so, like every
// floating-point Laplace/Gaussian sampler, they are exposed to the
// least-significant-bit attack of Mironov (CCS 2012); no snapping is applied.
#pragma once

#include "dperm/core.hpp"
#include "dperm/random.hpp"

#include <Eigen/Dense>

namespace dperm {

// dim i.i.d. N(0, sigma^2) coordinates; sigma = 0 gives zeros. This is the
// (ε,δ) branch of Zhang et al. 2017 Alg. 1 line 7 (density ∝ exp(−ε²‖z‖²/
// (4 log(2/δ) Δ²)), i.e. sigma² = 2 log(2/δ) Δ²/ε²) and the Gaussian
// mechanism generally (Dwork & Roth 2014, Thm A.1; Balle & Wang 2018).
Eigen::VectorXd GaussianNoise(SecureRng& rng, int dim, double sigma);

// A sample from the density ∝ exp(−‖z‖₂/scale) on R^dim, scale = Δ/ε: the
// ε-DP branch of Zhang et al. 2017 Alg. 1 line 5. Radius ~ Gamma(dim, scale),
// direction uniform on the sphere; E‖z‖² = dim(dim+1)·scale². scale = 0 gives
// zeros.
Eigen::VectorXd LaplaceVectorNoise(SecureRng& rng, int dim, double scale);

}  // namespace dperm
