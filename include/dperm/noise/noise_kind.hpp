// The kinds of noise a release adds (a plan names one, plan.hpp; the
// samplers' grids depend on it, noise.hpp).
#pragma once

namespace dperm {

enum class NoiseKind {
  kGaussian,       // (epsilon, delta)-DP: N(0, sigma^2 I)
  kLaplaceVector,  // epsilon-DP: density ~ exp(-||z|| / scale), scale = Delta/eps
                   // (floating point; no plan uses it since snapping)
  kLaplace,        // epsilon-DP: i.i.d. discrete Laplace per coordinate on the
                   // grid, scale = sqrt(dim) Delta / eps (L1 sensitivity / eps)
};

// Its name in plans and dp_explain.
inline const char* NoiseName(NoiseKind noise) {
  switch (noise) {
    case NoiseKind::kGaussian: return "gaussian";
    case NoiseKind::kLaplaceVector: return "laplace_vector";
    case NoiseKind::kLaplace: return "laplace";
  }
  return "?";
}

}  // namespace dperm
