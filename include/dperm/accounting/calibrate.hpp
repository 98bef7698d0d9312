// Noise calibration: the smallest noise multiplier whose accounted ε meets a
// target. Any accountant that maps σ to ε can be plugged in.
#pragma once

#include "dperm/util/errors.hpp"

#include <cstdint>
#include <functional>

namespace dperm {

// The smallest σ in [1e-6, 1e6] with epsilon_of_sigma(σ) ≤ target_epsilon,
// for an ε(σ) that is non-increasing in σ. The returned σ always satisfies
// epsilon_of_sigma(σ) ≤ target_epsilon as evaluated (it is nudged up if
// rounding would put it on the unsafe side) and is within ~1e-13 relative of
// the true root. ThrowInvalid if the target is not reached by σ = 1e6, or
// is already met at σ = 1e-6 (then ε does not constrain σ); target_epsilon
// must be finite and > 0. A NaN from epsilon_of_sigma is a kInternal error.
double CalibrateNoiseMultiplier(const std::function<double(double sigma)>& epsilon_of_sigma,
                                double target_epsilon);

// The smallest noise multiplier for which `steps` compositions of the
// Poisson-subsampled Gaussian mechanism (rate q in (0, 1]) are
// (target_epsilon, delta)-DP by EpsilonPoissonSubsampledGaussianRdp.
double CalibratePoissonSubsampledGaussianRdp(double q, std::int64_t steps, double target_epsilon,
                                             double delta);

}  // namespace dperm
