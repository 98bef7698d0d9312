// Private Newton passes, a few-pass candidate measured by bench/scripts/algorithms/few_pass.cpp
// and bench/scripts/heldout/heldout_main.cpp ("pnewton=K"); not a dperm mechanism.
// Logistic loss, labels +-1, rows of features with norm <= 1 and the
// intercept as the last coordinate (t = (x, 1), |t|^2 <= 2).
//
// Each pass releases, at the current w, the gradient sum plus N(0, sg^2 I)
// and the Hessian sum plus a symmetric Gaussian matrix, then steps
// w -= (H + ridge I)^{-1} g. One pass is one Gaussian mechanism whose RDP
// is split between the two sums, a share s to the gradient and 1 - s to
// the Hessian: sigma / sensitivity = z / sqrt(s) and z / sqrt(1 - s)
// (1/z^2 = s/z^2 + (1 - s)/z^2 adds up to one Gaussian's), where z is the
// sigma / sensitivity of one of dp_gd's T steps at T = the number of
// passes, so K passes cost what dp_gd at T = K costs.
//  * Gradient: a row adds f'(m, y) t with |f'| <= 1, so a replaced row
//    moves the sum by at most grad_sens (2 |t| and dp_gd's rounding term:
//    the plan's sensitivity times n).
//  * Hessian: a row adds f''(m) t t^T with 0 <= f'' <= 1/4, so a replaced
//    row moves it by D = a t t^T - b t' t'^T, |D|_F^2 <= a^2 |t|^4 +
//    b^2 |t'|^4 <= 2 (2/4)^2: sqrt(2)/2. The upper triangle with the
//    off-diagonal entries times sqrt(2) is a vector of that norm, so the
//    noise is sh on the diagonal and sh/sqrt(2) off it.
// The ridge ridge_scale sqrt(dim) sh is of the noise matrix's spectral
// norm (about sqrt(2 dim) sh); the step uses only released values
// (post-processing).
#pragma once
#include <Eigen/Dense>

#include <cmath>
#include <cstdint>
#include <random>

namespace dperm::testing {

inline Eigen::VectorXd PrivateNewtonPasses(const double* rows, int64_t n, int d, Eigen::VectorXd w,
                                           int passes, double z, double grad_sens, uint64_t seed,
                                           double gradient_share = 0.9, double ridge_scale = 1) {
  std::mt19937_64 gen(seed * 7919);
  std::normal_distribution<double> normal(0, 1);
  const int dim = d + 1;
  const double hess_sens = std::sqrt(2.0) / 2;
  const double sg = z * grad_sens / std::sqrt(gradient_share);
  const double sh = z * hess_sens / std::sqrt(1 - gradient_share);
  Eigen::VectorXd t(dim);
  for (int pass = 0; pass < passes; pass++) {
    Eigen::VectorXd g = Eigen::VectorXd::Zero(dim);
    Eigen::MatrixXd h = Eigen::MatrixXd::Zero(dim, dim);
    for (int64_t i = 0; i < n; i++) {
      const double* r = rows + size_t(i) * size_t(d + 1);
      for (int c = 0; c < d; c++) t(c) = r[c];
      t(d) = 1;
      const double margin = w.dot(t), label = r[d];
      const double p = 1 / (1 + std::exp(-margin));
      g += (-label / (1 + std::exp(label * margin))) * t;
      h.selfadjointView<Eigen::Lower>().rankUpdate(t, p * (1 - p));
    }
    h = h.selfadjointView<Eigen::Lower>();
    for (int a = 0; a < dim; a++) {
      g(a) += sg * normal(gen);
      for (int b = 0; b <= a; b++) {
        const double v = sh * normal(gen) / (a == b ? 1 : std::sqrt(2.0));
        h(a, b) += v;
        if (a != b) h(b, a) += v;
      }
    }
    h += ridge_scale * std::sqrt(double(dim)) * sh * Eigen::MatrixXd::Identity(dim, dim);
    w -= h.ldlt().solve(g);
  }
  return w;
}

}  // namespace dperm::testing
