// Samplers for output-perturbation noise (Zhang et al. 2017, Algorithm 1).
#include "dperm/noise.hpp"

#include <cmath>
#include <sstream>

namespace dperm {
namespace {

// Rejects a dimension below 1 and a scale that is negative, NaN or infinite:
// a bad scale would silently release an unprotected (or NaN) model.
void CheckNoiseArgs(const char* func, const char* name, int dim, double value) {
  if (dim < 1) {
    std::ostringstream msg;
    msg << func << ": dimension must be at least 1, got " << dim;
    ThrowInvalid(msg.str());
  }
  if (!std::isfinite(value) || value < 0.0) {
    std::ostringstream msg;
    msg.precision(17);
    msg << func << ": " << name << " must be finite and >= 0, got " << value;
    ThrowInvalid(msg.str());
  }
}

}  // namespace

// i.i.d. N(0, sigma²) per coordinate: the Gaussian mechanism's noise
// (Dwork & Roth 2014, Thm A.1; Zhang et al. 2017, Alg. 1 line 7).
Eigen::VectorXd GaussianNoise(SecureRng& rng, int dim, double sigma) {
  CheckNoiseArgs("GaussianNoise", "sigma", dim, sigma);
  Eigen::VectorXd z(dim);
  for (int i = 0; i < dim; ++i) z[i] = sigma * rng.Gaussian();
  return z;
}

// Density ∝ exp(−‖z‖/scale), Zhang et al. 2017, Alg. 1 line 5 (scale = Δ/ε).
// In polar form the density of r = ‖z‖ is ∝ r^(dim−1) exp(−r/scale), i.e.
// Gamma(dim, scale), independent of a uniform direction (the same sampler as
// the output perturbation of Chaudhuri, Monteleoni & Sarwate 2011, JMLR).
Eigen::VectorXd LaplaceVectorNoise(SecureRng& rng, int dim, double scale) {
  CheckNoiseArgs("LaplaceVectorNoise", "scale", dim, scale);
  // Gamma(dim, 1) for integer shape is a sum of dim Exponential(1) draws.
  double radius = 0.0;
  for (int i = 0; i < dim; ++i) radius += rng.Exponential();
  radius *= scale;
  // A standard Gaussian vector divided by its norm is uniform on the sphere
  // (rotation invariance); a zero vector has probability 0 but is redrawn.
  Eigen::VectorXd g(dim);
  double norm = 0.0;
  do {
    for (int i = 0; i < dim; ++i) g[i] = rng.Gaussian();
    norm = g.norm();
  } while (!(norm > 0.0));
  return g * (radius / norm);
}

}  // namespace dperm
