// The three evaluations of log A_α behind RdpPoissonSubsampledGaussian
// (rdp.hpp), exposed so the unit tests can check them against each other.
// Callers outside the tests should use rdp.hpp.
//
// A_α = E_{z ~ N(0, σ²)} [(1 − q + q·exp((2z − 1)/(2σ²)))^α] (Mironov, Talwar
// & Zhang 2019, Sec. 3), and the RDP of one step is log(A_α)/(α − 1).
// All three require 0 < q < 1, σ > 0 finite; arguments are not re-checked.
#pragma once

#include "dperm/util/errors.hpp"

#include <cstdint>

namespace dperm {

// log A_α for integer α ≥ 2 by the finite binomial sum (MTZ 2019, Sec. 3.2),
// summed as A_α − 1 with positive terms only, so tiny values keep full
// relative accuracy.
double LogAPoissonGaussianInteger(double q, double sigma, std::int64_t alpha);

// Outcome of the two-sided series of MTZ 2019, Sec. 3.3, for fractional α.
struct LogASeries {
  double log_a = 0.0;      // log of the sum
  double rel_error = 0.0;  // conservative estimate of |Δ log A| / |log A|
  int terms = 0;           // terms summed on each side
  bool converged = false;  // the tail fell below the requested accuracy
};

// log A_α for fractional α by the signed two-sided series (as TF Privacy
// 0.8.0 `_compute_log_a_frac`, keeping the signs of the generalised binomial
// coefficients).
LogASeries LogAPoissonGaussianSeries(double q, double sigma, double alpha);

// log A_α for any α > 1 by adaptive Gauss–Kronrod quadrature of
// A_α − 1 = E[g(q(X − 1))], g(u) = (1 + u)^α − 1 − αu ≥ 0, X = e^{(2z−1)/(2σ²)}
// (the αu term integrates to 0 since E[X] = 1), so the integrand is positive
// and tiny values keep their relative accuracy.
double LogAPoissonGaussianQuadrature(double q, double sigma, double alpha);

}  // namespace dperm
