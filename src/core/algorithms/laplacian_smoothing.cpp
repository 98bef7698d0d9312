// A_sigma^{-1} in O(d) by an exact factorisation of the circulant matrix.
//
// With S the cyclic shift (S u)_i = u_{i-1 mod d}, A_sigma = (1 + 2 sigma) I
// - sigma (S + S^{-1}). For the root a of sigma a^2 - (1 + 2 sigma) a +
// sigma = 0 in [0, 1) (the paper's alpha in Proposition 1),
//   (sigma / a) (I - a S)(I - a S^{-1}) = sigma (1 + a^2)/a I - sigma (S + S^{-1})
//                                       = A_sigma,
// since sigma (1 + a^2) / a = 1 + 2 sigma. So A_sigma^{-1} v = (a / sigma)
// (I - a S^{-1})^{-1} (I - a S)^{-1} v, two first-order cyclic recursions:
//  * (I - a S) y = v:  y_i = v_i + a y_{i-1}, started from the closed form
//    y_0 = sum_{k<d} a^k v_{-k mod d} / (1 - a^d);
//  * (I - a S^{-1}) u = y:  u_i = y_i + a u_{i+1}, started from
//    u_{d-1} = sum_{k<d} a^k y_{d-1+k mod d} / (1 - a^d).
// |a| < 1, so both recursions damp rounding errors. The same identity holds
// for d = 1 and d = 2 (where S = S^{-1}), so no size needs a special case.
// a is computed as 2 sigma / (1 + 2 sigma + sqrt(1 + 4 sigma)) (the product
// of the two roots is 1), which has no cancellation for small sigma, and
// a / sigma = 2 / (1 + 2 sigma + sqrt(1 + 4 sigma)) is 1 at sigma = 0.
#include "dperm/algorithms/laplacian_smoothing.hpp"

#include <cmath>
#include <string>

namespace dperm {

LaplacianSmoother::LaplacianSmoother(double sigma) : sigma_(sigma) {
  if (!std::isfinite(sigma) || sigma < 0) ThrowInvalid("ls_sigma must be finite and >= 0");
  double denom = 1 + 2 * sigma + std::sqrt(1 + 4 * sigma);
  a_ = 2 * sigma / denom;
  scale_ = 2 / denom;
}

void LaplacianSmoother::Apply(double* v, int length) const {
  if (a_ == 0 || length < 1) return;  // sigma = 0: the identity
  const int d = length;
  const double a = a_;
  // 1 / (1 - a^d), with 1 - a^d = -expm1(d log a) accurate when a^d ~ 1.
  const double geo = 1 / -std::expm1(d * std::log(a));
  // Forward recursion, in place: v becomes y.
  double s = 0, p = 1;
  for (int k = 0; k < d && p > 0; k++, p *= a) s += p * v[(d - k) % d];
  v[0] = s * geo;
  for (int i = 1; i < d; i++) v[i] += a * v[i - 1];
  // Backward recursion, in place: v becomes u.
  s = 0;
  p = 1;
  for (int k = 0; k < d && p > 0; k++, p *= a) s += p * v[(d - 1 + k) % d];
  v[d - 1] = s * geo;
  for (int i = d - 2; i >= 0; i--) v[i] += a * v[i + 1];
  for (int i = 0; i < d; i++) v[i] *= scale_;
}

double LaplacianEigenvalue(double sigma, int d, int k) {
  const double pi = 3.14159265358979323846;
  return 1 + 2 * sigma - 2 * sigma * std::cos(2 * pi * k / d);
}

double LaplacianSmoothingGamma(double sigma, int d) {
  double s = 0;
  for (int k = 0; k < d; k++) s += 1 / LaplacianEigenvalue(sigma, d, k);
  return s / d;
}

}  // namespace dperm
