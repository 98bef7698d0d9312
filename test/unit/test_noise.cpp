// Unit tests for the output-perturbation noise samplers (noise.hpp).
#include "dperm/noise.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace dperm {
namespace {

// E‖z‖² = dim·σ² and Var‖z‖² = 2·dim·σ⁴ (σ²·chi-square with dim d.o.f.).
void CheckGaussianSecondMoment(int dim, double sigma, int n, uint64_t seed) {
  SecureRng rng = SecureRng::FromSeed(seed);
  double sum = 0.0;
  for (int i = 0; i < n; ++i) {
    const Eigen::VectorXd z = GaussianNoise(rng, dim, sigma);
    ASSERT_EQ(z.size(), dim);
    sum += z.squaredNorm();
  }
  const double s2 = sigma * sigma;
  const double se = std::sqrt(2.0 * dim * s2 * s2 / n);
  EXPECT_NEAR(sum / n, dim * s2, 5.0 * se) << "dim " << dim;
}

TEST(GaussianNoise, SecondMomentIsDimTimesSigmaSquared) {
  CheckGaussianSecondMoment(5, 1.7, 50000, 11);
  CheckGaussianSecondMoment(42, 0.3, 20000, 12);
}

TEST(GaussianNoise, ZeroSigmaGivesZeros) {
  SecureRng rng = SecureRng::FromSeed(13);
  EXPECT_EQ(GaussianNoise(rng, 7, 0.0), Eigen::VectorXd::Zero(7));
}

// For r ~ Gamma(dim, scale): E r = dim·s, Var r = dim·s²,
// E r² = dim(dim+1)s², E r⁴ = dim(dim+1)(dim+2)(dim+3)s⁴. Direction u is
// uniform on the sphere: E u = 0, E u_i² = 1/dim, Var u_i = 1/dim.
void CheckLaplaceVector(int dim, double scale, int n, uint64_t seed) {
  SecureRng rng = SecureRng::FromSeed(seed);
  double sum_r = 0.0, sum_r2 = 0.0;
  Eigen::VectorXd sum_u = Eigen::VectorXd::Zero(dim);
  Eigen::VectorXd sum_u2 = Eigen::VectorXd::Zero(dim);
  for (int i = 0; i < n; ++i) {
    const Eigen::VectorXd z = LaplaceVectorNoise(rng, dim, scale);
    ASSERT_EQ(z.size(), dim);
    const double r = z.norm();
    ASSERT_GT(r, 0.0);
    sum_r += r;
    sum_r2 += r * r;
    sum_u += z / r;
    sum_u2 += (z / r).cwiseAbs2();
  }
  const double d = dim, s = scale;
  const double er2 = d * (d + 1) * s * s;
  const double er4 = d * (d + 1) * (d + 2) * (d + 3) * s * s * s * s;
  EXPECT_NEAR(sum_r / n, d * s, 5.0 * std::sqrt(d * s * s / n)) << "dim " << dim;
  EXPECT_NEAR(sum_r2 / n, er2, 5.0 * std::sqrt((er4 - er2 * er2) / n))
      << "dim " << dim;
  const double se_u = std::sqrt(1.0 / (d * n));
  // E u_i⁴ = 3/(d(d+2)), so Var u_i² = 3/(d(d+2)) − 1/d².
  const double se_u2 = std::sqrt((3.0 / (d * (d + 2)) - 1.0 / (d * d)) / n);
  for (int j = 0; j < dim; ++j) {
    EXPECT_NEAR(sum_u[j] / n, 0.0, 5.0 * se_u) << "coordinate " << j;
    EXPECT_NEAR(sum_u2[j] / n, 1.0 / d, 5.0 * se_u2) << "coordinate " << j;
  }
}

TEST(LaplaceVectorNoise, MomentsAndIsotropy) {
  CheckLaplaceVector(5, 0.8, 50000, 21);
  CheckLaplaceVector(42, 2.5, 20000, 22);
  CheckLaplaceVector(1, 1.0, 50000, 23);  // dim 1 is the scalar Laplace
}

TEST(LaplaceVectorNoise, ZeroScaleGivesZeros) {
  SecureRng rng = SecureRng::FromSeed(24);
  EXPECT_EQ(LaplaceVectorNoise(rng, 3, 0.0), Eigen::VectorXd::Zero(3));
}

TEST(NoiseArguments, InvalidArgumentsThrow) {
  SecureRng rng = SecureRng::FromSeed(25);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (int dim : {0, -3}) {
    EXPECT_THROW(GaussianNoise(rng, dim, 1.0), Error);
    EXPECT_THROW(LaplaceVectorNoise(rng, dim, 1.0), Error);
  }
  for (double bad : {-1.0, nan, inf}) {
    EXPECT_THROW(GaussianNoise(rng, 3, bad), Error);
    EXPECT_THROW(LaplaceVectorNoise(rng, 3, bad), Error);
  }
  try {
    LaplaceVectorNoise(rng, 3, -2.0);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidParameter);
  }
}

}  // namespace
}  // namespace dperm
