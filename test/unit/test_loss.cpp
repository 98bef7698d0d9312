// Unit tests of the losses (include/dperm/losses/loss.hpp): values, derivatives and
// curvatures against finite differences, the public constants L and beta,
// and the regularised objective F(w) = 1/n sum f(<w,x_i>+b, y_i) + l2/2 ||w||^2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <random>
#include <vector>

#include "dperm/losses/loss.hpp"

namespace {

using dperm::HuberLoss;
using dperm::LinearObjective;
using dperm::LogisticLoss;
using dperm::Loss;

// Central difference of g at x with step h.
template <typename G>
double CentralDiff(G g, double x, double h) {
  return (g(x + h) - g(x - h)) / (2 * h);
}

// Reference logistic loss log(1 + exp(-y m)), written independently of the
// core: for t = -y m, log(1 + e^t) = max(t, 0) + log(1 + e^{-|t|}).
double RefLogistic(double m, double y) {
  double t = -y * m;
  return std::max(t, 0.0) + std::log1p(std::exp(-std::fabs(t)));
}

// Reference Huber loss h_delta(m - y).
double RefHuber(double m, double y, double delta) {
  double u = std::fabs(m - y);
  return u <= delta ? u * u / 2 : delta * u - delta * delta / 2;
}

std::vector<double> Margins() {
  return {-1e3, -200, -40, -7.5, -2, -1, -0.3, 0, 1e-9, 0.25, 0.9, 1.7, 3, 12, 35, 200, 1e3};
}

// Logistic values match the formula log(1 + exp(-y m)) everywhere, including
// margins of +-1e3 where a naive exp would overflow.
TEST(LogisticLoss, ValueMatchesFormulaWithoutOverflow) {
  LogisticLoss f;
  for (double y : {-1.0, 1.0}) {
    for (double m : Margins()) {
      double v = f.Value(m, y);
      ASSERT_TRUE(std::isfinite(v)) << "m=" << m << " y=" << y;
      EXPECT_NEAR(v, RefLogistic(m, y), 1e-12 * std::max(1.0, std::fabs(m)))
          << "m=" << m << " y=" << y;
      EXPECT_GE(v, 0.0);
    }
  }
  // Exact asymptotes at the extremes: ~ -y m when -y m is huge, ~0 otherwise.
  EXPECT_DOUBLE_EQ(f.Value(-1e3, 1), 1e3);
  EXPECT_DOUBLE_EQ(f.Value(1e3, -1), 1e3);
  EXPECT_EQ(f.Value(1e3, 1), 0.0);
  EXPECT_DOUBLE_EQ(f.Value(0, 1), std::log(2.0));
}

// Logistic df/dm agrees with a central difference of the value, and d2f/dm2
// with a central difference of the derivative, at many margins and labels.
TEST(LogisticLoss, DerivativeAndCurvatureMatchFiniteDifferences) {
  LogisticLoss f;
  for (double y : {-1.0, 1.0}) {
    for (double m : Margins()) {
      double h = 1e-5 * std::max(1.0, std::fabs(m));
      double fd1 = CentralDiff([&](double t) { return f.Value(t, y); }, m, h);
      double fd2 = CentralDiff([&](double t) { return f.Derivative(t, y); }, m, h);
      double d1 = f.Derivative(m, y);
      double d2 = f.Curvature(m, y);
      ASSERT_TRUE(std::isfinite(d1) && std::isfinite(d2)) << "m=" << m;
      EXPECT_NEAR(d1, fd1, 1e-7) << "m=" << m << " y=" << y;
      EXPECT_NEAR(d2, fd2, 1e-7) << "m=" << m << " y=" << y;
      // Closed forms: f' = -y s(-y m), f'' = s(m) s(-m) with s the sigmoid.
      double s = 1 / (1 + std::exp(y * m));  // s(-y m)
      EXPECT_NEAR(d1, -y * s, 1e-15);
      double sm = 1 / (1 + std::exp(-m));
      EXPECT_NEAR(d2, sm * (1 - sm), 1e-15);
      // The bounds MaxDerivative() and MaxCurvature() hold.
      EXPECT_LE(std::fabs(d1), f.MaxDerivative());
      EXPECT_LE(d2, f.MaxCurvature());
      EXPECT_GE(d2, 0.0);
    }
  }
  // The curvature bound 1/4 is attained at m = 0, so it is the sup.
  EXPECT_DOUBLE_EQ(f.Curvature(0, 1), 0.25);
}

// Huber values match h_delta(m - y) for several deltas and targets.
// The derivative's own exp (logistic.cpp, ExpNonPositive): within a few
// ulp of libm's 1/(1 + e^{y m}) over margins from -800 to 800 (and within
// 3.4e-308 where the value underflows), and the batch kernel (AVX2 where the
// CPU has it) returns Derivative's bits for every margin, NaN and the
// infinities included.
TEST(LogisticLoss, DerivativeIsAccurateAndTheBatchIsTheSameBits) {
  dperm::LogisticLoss f;
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> wide(-800, 800), narrow(-3, 3);
  std::vector<double> m, y;
  for (int i = 0; i < 200000; i++) {
    m.push_back(i % 2 ? wide(gen) : narrow(gen));
    y.push_back(i % 3 ? 1.0 : -1.0);
  }
  for (double v : {0.0, -0.0, 1e-300, -1e-300, 708.0, -708.0, 709.5, -709.5, 745.2, -745.2, 1e308,
                   -1e308, double(INFINITY), -double(INFINITY), double(NAN)}) {
    m.push_back(v);
    y.push_back(1.0);
    m.push_back(v);
    y.push_back(-1.0);
  }
  double worst_ulps = 0;
  for (size_t i = 0; i < m.size(); i++) {
    const double got = f.Derivative(m[i], y[i]);
    const double t = -y[i] * m[i];
    const double ref = -y[i] * (t >= 0 ? 1 / (1 + std::exp(-t)) : std::exp(t) / (1 + std::exp(t)));
    if (std::isnan(m[i])) {
      EXPECT_TRUE(std::isnan(got));
      continue;
    }
    const double err = std::fabs(got - ref);
    if (err <= 3.4e-308) continue;  // exp(-708) = 3.3e-308: the clamp
    worst_ulps = std::max(worst_ulps, err / (std::fabs(ref) * std::ldexp(1.0, -52)));
  }
  EXPECT_LE(worst_ulps, 4.0);
  RecordProperty("worst_ulps", std::to_string(worst_ulps));
  std::printf("worst error: %.2f ulp\n", worst_ulps);
  std::vector<double> batch(m.size());
  f.Derivatives(m.data(), y.data(), 1, Eigen::Index(m.size()), batch.data());
  int differ = 0;
  for (size_t i = 0; i < m.size(); i++) {
    const double one = f.Derivative(m[i], y[i]);
    differ += std::memcmp(&one, &batch[i], sizeof one) != 0;
  }
  EXPECT_EQ(differ, 0);
}

TEST(HuberLoss, ValueMatchesFormula) {
  for (double delta : {0.1, 1.0, 2.5}) {
    HuberLoss f(delta);
    for (double y : {-3.0, -1.0, 0.0, 0.5, 1e3}) {
      for (double m : Margins()) {
        double v = f.Value(m, y);
        ASSERT_TRUE(std::isfinite(v));
        EXPECT_NEAR(v, RefHuber(m, y, delta), 1e-12 * std::max(1.0, v))
            << "delta=" << delta << " m=" << m << " y=" << y;
      }
    }
  }
}

// Huber df/dm and d2f/dm2 agree with central differences away from the kinks
// |m - y| = delta, and respect |f'| <= delta, 0 <= f'' <= 1.
TEST(HuberLoss, DerivativeAndCurvatureMatchFiniteDifferences) {
  for (double delta : {0.1, 1.0, 2.5}) {
    HuberLoss f(delta);
    for (double y : {-3.0, -1.0, 0.0, 0.5, 1e3}) {
      for (double m : Margins()) {
        double h = 1e-6 * std::max(1.0, std::fabs(m));
        if (std::fabs(std::fabs(m - y) - delta) < 10 * h) continue;  // at a kink
        double fd1 = CentralDiff([&](double t) { return f.Value(t, y); }, m, h);
        double fd2 = CentralDiff([&](double t) { return f.Derivative(t, y); }, m, h);
        EXPECT_NEAR(f.Derivative(m, y), fd1, 1e-6 * std::max(1.0, std::fabs(m)))
            << "delta=" << delta << " m=" << m << " y=" << y;
        EXPECT_NEAR(f.Curvature(m, y), fd2, 1e-6) << "delta=" << delta << " m=" << m << " y=" << y;
        // Closed form: the residual clamped to [-delta, delta].
        EXPECT_EQ(f.Derivative(m, y), std::min(delta, std::max(-delta, m - y)));
        EXPECT_LE(std::fabs(f.Derivative(m, y)), f.MaxDerivative());
        EXPECT_LE(f.Curvature(m, y), f.MaxCurvature());
      }
    }
    // The derivative bound delta is attained far from the target.
    EXPECT_EQ(f.Derivative(1e3, 0), delta);
    EXPECT_EQ(f.Derivative(-1e3, 0), -delta);
    EXPECT_EQ(f.Curvature(0.5 * delta, 0), 1.0);
    EXPECT_EQ(f.Curvature(2 * delta, 0), 0.0);
  }
}

// L and beta from R: logistic L = R, beta = R^2/4; Huber L = delta R,
// beta = R^2.
TEST(Loss, LipschitzAndSmoothnessConstants) {
  LogisticLoss logistic;
  for (double R : {0.5, 1.0, std::sqrt(2.0), 3.0, 10.0}) {
    EXPECT_DOUBLE_EQ(logistic.Lipschitz(R), R);
    EXPECT_DOUBLE_EQ(logistic.Smoothness(R), R * R / 4);
    for (double delta : {0.2, 1.0, 4.0}) {
      HuberLoss huber(delta);
      EXPECT_DOUBLE_EQ(huber.Lipschitz(R), delta * R);
      EXPECT_DOUBLE_EQ(huber.Smoothness(R), R * R);
    }
  }
}

// A dataset laid out as FeatureMap/LabelMap expect: n rows of stride d + 1,
// the label last.
struct Dataset {
  int n, d;
  std::vector<double> rows;
  dperm::FeatureMap X() const {
    return dperm::FeatureMap(rows.data(), n, d, Eigen::OuterStride<>(d + 1));
  }
  dperm::LabelMap Y() const {
    return dperm::LabelMap(rows.data() + d, n, Eigen::InnerStride<>(d + 1));
  }
};

Dataset RandomDataset(int n, int d, bool logistic, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0, 1);
  Dataset s{n, d, std::vector<double>(size_t(n) * (d + 1))};
  for (int i = 0; i < n; i++) {
    double* r = &s.rows[size_t(i) * (d + 1)];
    for (int j = 0; j < d; j++) r[j] = normal(gen);
    r[d] = logistic ? (normal(gen) > 0 ? 1.0 : -1.0) : 2 * normal(gen);
  }
  return s;
}

// Reference objective written from its definition (not from Objective).
double RefObjective(const Loss& f, const Dataset& s, bool fit_intercept, double l2,
                    const Eigen::VectorXd& w) {
  double sum = 0;
  for (int i = 0; i < s.n; i++) {
    const double* r = &s.rows[size_t(i) * (s.d + 1)];
    double m = fit_intercept ? w(s.d) : 0.0;
    for (int j = 0; j < s.d; j++) m += w(j) * r[j];
    sum += f.Value(m, r[s.d]);
  }
  return sum / s.n + 0.5 * l2 * w.squaredNorm();
}

void CheckObjectiveDerivatives(const Loss& f, bool logistic) {
  const int n = 13, d = 4;
  Dataset s = RandomDataset(n, d, logistic, logistic ? 7 : 8);
  std::mt19937_64 gen(99);
  std::normal_distribution<double> normal(0, 1);
  for (bool fit_intercept : {false, true}) {
    for (double l2 : {0.0, 0.3}) {
      LinearObjective obj(f, s.X(), s.Y(), fit_intercept, l2);
      const int dim = d + (fit_intercept ? 1 : 0);
      ASSERT_EQ(obj.dim(), dim);
      ASSERT_EQ(obj.n(), n);
      for (int trial = 0; trial < 5; trial++) {
        Eigen::VectorXd w(dim);
        for (int j = 0; j < dim; j++) w(j) = normal(gen);
        // Value matches the definition, including l2/2 ||w||^2 over the
        // intercept too.
        EXPECT_NEAR(obj.Value(w), RefObjective(f, s, fit_intercept, l2, w), 1e-12);
        Eigen::VectorXd g = obj.Gradient(w);
        Eigen::MatrixXd H = obj.Hessian(w);
        ASSERT_EQ(g.size(), dim);
        ASSERT_EQ(H.rows(), dim);
        const double h = 1e-6;
        for (int j = 0; j < dim; j++) {
          Eigen::VectorXd e = Eigen::VectorXd::Unit(dim, j);
          double fd = (RefObjective(f, s, fit_intercept, l2, w + h * e) -
                       RefObjective(f, s, fit_intercept, l2, w - h * e)) /
                      (2 * h);
          EXPECT_NEAR(g(j), fd, 1e-7) << "coord " << j;
          Eigen::VectorXd fdh = (obj.Gradient(w + h * e) - obj.Gradient(w - h * e)) / (2 * h);
          for (int k = 0; k < dim; k++)
            EXPECT_NEAR(H(k, j), fdh(k), 1e-6) << "H(" << k << "," << j << ")";
        }
        EXPECT_LT((H - H.transpose()).norm(), 1e-14);
      }
      // The l2 term covers the intercept: at w = e_d (only the intercept
      // non-zero) the intercept gradient has an l2 * 1 term.
      if (fit_intercept && l2 > 0) {
        Eigen::VectorXd e = Eigen::VectorXd::Unit(dim, d);
        LinearObjective obj0(f, s.X(), s.Y(), true, 0.0);
        EXPECT_NEAR(obj.Gradient(e)(d) - obj0.Gradient(e)(d), l2, 1e-14);
        EXPECT_NEAR(obj.Hessian(e)(d, d) - obj0.Hessian(e)(d, d), l2, 1e-14);
      }
    }
  }
}

// Objective::Value/Gradient/Hessian of logistic regression agree with the
// definition and with finite differences, with and without intercept and l2.
TEST(Objective, LogisticDerivativesMatchFiniteDifferences) {
  LogisticLoss f;
  CheckObjectiveDerivatives(f, true);
}

// Same for Huber regression.
TEST(Objective, HuberDerivativesMatchFiniteDifferences) {
  HuberLoss f(0.7);
  CheckObjectiveDerivatives(f, false);
}

// A random point on the sphere of radius r in R^d.
Eigen::VectorXd OnSphere(std::mt19937_64& gen, int d, double r) {
  std::normal_distribution<double> normal(0, 1);
  Eigen::VectorXd x(d);
  for (int j = 0; j < d; j++) x(j) = normal(gen);
  return x * (r / x.norm());
}

// The largest eigenvalue of a symmetric positive semi-definite matrix, by
// power iteration (Eigen's eigensolver trips -Wmaybe-uninitialized in GCC).
double TopEigenvalue(const Eigen::MatrixXd& H) {
  Eigen::VectorXd v = Eigen::VectorXd::LinSpaced(H.rows(), 1.0, 2.0);
  for (int it = 0; it < 500; it++) {
    Eigen::VectorXd hv = H * v;
    if (hv.norm() == 0) return 0;
    v = hv / hv.norm();
  }
  return v.dot(H * v);
}

// For single rows with ||x|| <= feature_bound plus the intercept column, the
// per-row gradient norm never exceeds L = Lipschitz(R) and the Hessian's
// eigenvalues never exceed beta + l2 = Smoothness(R) + l2, with
// R = sqrt(feature_bound^2 + 1); both bounds are approached (they are sups).
void CheckConstantsEmpirically(const Loss& f, bool logistic, double fb) {
  const int d = 3;
  const double l2 = 0.2;
  const double R = std::sqrt(fb * fb + 1);
  const double L = f.Lipschitz(R), beta = f.Smoothness(R);
  std::mt19937_64 gen(logistic ? 11 : 12);
  std::uniform_real_distribution<double> unif(0, 1);
  std::normal_distribution<double> normal(0, 1);
  double max_grad = 0, max_eig = 0;
  for (int trial = 0; trial < 2000; trial++) {
    // Half the rows on the sphere (the worst case), half inside.
    double r = trial % 2 == 0 ? fb : fb * unif(gen);
    Eigen::VectorXd x = OnSphere(gen, d, r);
    std::vector<double> row(x.data(), x.data() + d);
    row.push_back(logistic ? (trial % 3 == 0 ? 1.0 : -1.0) : 3 * normal(gen));
    dperm::FeatureMap X(row.data(), 1, d, Eigen::OuterStride<>(d + 1));
    dperm::LabelMap Y(row.data() + d, 1, Eigen::InnerStride<>(d + 1));
    // Weights: zero (margin 0: maximal logistic curvature) or large.
    double scale = trial % 4 == 0 ? 0.0 : 20 * unif(gen);
    Eigen::VectorXd w(d + 1);
    for (int j = 0; j <= d; j++) w(j) = scale * normal(gen);
    LinearObjective loss_only(f, X, Y, true, 0.0);
    LinearObjective regularised(f, X, Y, true, l2);
    double gn = loss_only.Gradient(w).norm();
    double top = TopEigenvalue(regularised.Hessian(w));
    EXPECT_LE(gn, L * (1 + 1e-12));
    EXPECT_LE(top, (beta + l2) * (1 + 1e-12));
    max_grad = std::max(max_grad, gn);
    max_eig = std::max(max_eig, top);
  }
  EXPECT_GT(max_grad, 0.95 * L);
  EXPECT_GT(max_eig, 0.95 * (beta + l2));
}

TEST(Loss, LogisticConstantsBoundGradientAndHessian) {
  LogisticLoss f;
  CheckConstantsEmpirically(f, true, 1.0);
  CheckConstantsEmpirically(f, true, 2.5);
}

TEST(Loss, HuberConstantsBoundGradientAndHessian) {
  HuberLoss f(1.5);
  CheckConstantsEmpirically(f, false, 1.0);
  CheckConstantsEmpirically(f, false, 0.4);
}

}  // namespace
