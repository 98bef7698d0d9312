// An exact standard normal, rounded to a dyadic grid, from ChaCha20 bits
// alone: Karney, "Sampling exactly from the normal distribution", ACM TOMS
// 42(1), 2016 (Algorithm N, with his Algorithms H, G, P, B and C).
//
// Objective perturbation needs a *continuous* Gaussian b (its privacy proof
// changes variables b -> minimiser, which a lattice-valued b would break), so
// the CKS20 discrete samplers of noise.hpp do not apply there. Algorithm N
// draws X ~ N(0, 1) exactly: the integer part k and the sign are integers,
// and the fraction x is a uniform deviate whose bits are drawn from the CSPRNG
// only when a comparison needs them, so no floating-point value ever
// influences the distribution. dperm then reads the first `frac_bits` + 1
// bits of x to return round(X 2^frac_bits) -- a deterministic function of the
// exact X (ties have probability 0), which is what the coupling arguments of
// objective_perturbation.cpp and objective_approx.cpp need.
#pragma once

#include <cstdint>

#include <Eigen/Dense>

#include "dperm/noise/random.hpp"

namespace dperm {

// The largest |X| kept: a round whose step N1 proposes k >= kExactNormalBound
// is refused with an internal error -- probability exp(-128) per round,
// < 3 exp(-128) per draw, a function of the CSPRNG's bits alone, never of
// the data -- so a draw that returns is N(0, 1) truncated to |X| < 256
// (excluded mass < exp(-32000)). noise.hpp, SAMPLER FAILURE, bounds both
// against delta (the floor kMinDelta).
constexpr int kExactNormalBound = 256;
// The fraction bits objective perturbation keeps of each coordinate.
constexpr int kObjectiveNoiseBits = 20;

// round(X 2^frac_bits) for X ~ N(0, 1) drawn exactly (Algorithm N);
// 0 <= frac_bits <= 40.
int64_t RoundedExactNormal(SecureRng& rng, int frac_bits);

// sigma rounded up to a dyadic rational with at most kObjectiveNoiseBits
// significant bits (relative increase < 2^-19; more noise only ever helps
// privacy). With it, sigma K 2^-kObjectiveNoiseBits is exact in a double for
// every |K| < kExactNormalBound 2^kObjectiveNoiseBits (a product of 20 and
// 28 significant bits).
double DyadicNoiseScale(double sigma);

// Objective perturbation's linear term: b_i = sigma round(X_i 2^20) 2^-20,
// X_i ~ N(0, 1) i.i.d. exact; sigma must be DyadicNoiseScale(sigma). Each
// coordinate is within sigma 2^-21 of sigma X_i, so ||b - sigma X|| <=
// ObjectiveNoiseRounding(sigma, dim), and ||b|| <= ObjectiveNoiseNormBound.
Eigen::VectorXd ObjectiveNoise(SecureRng& rng, int dim, double sigma);
double ObjectiveNoiseRounding(double sigma, int dim);
double ObjectiveNoiseNormBound(double sigma, int dim);

// Pure epsilon-DP objective perturbation's linear term (Chaudhuri, Monteleoni
// & Sarwate 2011, Algorithm 2): b with density proportional to
// exp(-||b||/theta) on R^dim -- a uniform direction and a Gamma(dim, theta)
// norm. Drawn from exact normals alone as b = theta ||Z|| X, X ~ N(0, I_dim)
// and Z ~ N(0, I_{dim+1}) independent, each coordinate rounded to 2^-40
// (derivation in exact_normal.cpp: the law of theta ||Z|| X is exactly that
// density). ||b - theta ||Z|| X|| <= GammaNormNoiseRounding(theta, dim) for
// every draw the sampler returns (|X_i|, |Z_j| < 256).
constexpr int kGammaNormNoiseBits = 40;
Eigen::VectorXd GammaNormNoise(SecureRng& rng, int dim, double theta);
// theta sqrt(dim (dim + 1)) 2^-31.
double GammaNormNoiseRounding(double theta, int dim);

}  // namespace dperm
