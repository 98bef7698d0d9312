// Laplacian smoothing (Osher et al. 2018; DP-LSSGD, [LSSGD], eq. (3)):
// the solve u = A_sigma^{-1} v with A_sigma = I - sigma L, L the 1-D discrete
// Laplacian with periodic boundary, i.e. the circulant matrix with 1 + 2 sigma
// on the diagonal and -sigma on the two cyclic off-diagonals (corners
// included; for d = 2 the two neighbours coincide and the off-diagonal entry
// is -2 sigma, for d = 1 A_sigma = 1).
//
// A_sigma^{-1} is symmetric with eigenvalues 1 / (1 + 2 sigma - 2 sigma
// cos(2 pi k / d)) in (0, 1], the largest (1) on the constant vector: it
// never lengthens a vector and leaves constants unchanged.
#pragma once
#include "dperm/util/errors.hpp"

namespace dperm {

// The plan's Laplacian smoothing sigma (Plan::mechanism_fields; dp_lssgd
// sets it, not set reads 0: no smoothing).
inline constexpr const char kLsSigma[] = "ls_sigma";

class LaplacianSmoother {
 public:
  // sigma >= 0 finite; sigma = 0 is the identity.
  explicit LaplacianSmoother(double sigma);
  double sigma() const { return sigma_; }
  // v <- A_sigma^{-1} v for the d = length entries of v, in O(d) time and
  // no extra memory (never forms a d x d matrix).
  void Apply(double* v, int length) const;

 private:
  double sigma_;
  double a_;      // the root in [0, 1) of sigma a^2 - (1 + 2 sigma) a + sigma
  double scale_;  // a / sigma (1 at sigma = 0)
};

// lambda_k = 1 + 2 sigma - 2 sigma cos(2 pi k / d), k = 0 .. d-1: the
// eigenvalues of A_sigma ([LSSGD], Lemma 4).
double LaplacianEigenvalue(double sigma, int d, int k);

// gamma = 1/d sum_k 1/lambda_k = E||x||^2_{A_sigma^{-1}} / d for standard
// Gaussian x (Lemma 4): the factor by which smoothing shrinks the noise in
// Theorem 2's utility bound; 1 at sigma = 0.
double LaplacianSmoothingGamma(double sigma, int d);

}  // namespace dperm
