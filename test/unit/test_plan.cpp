// Unit tests of OutputGd plans (PlanRelease): step sizes, iterations,
// sensitivities and noise, each recomputed here from Zhang et al. 2017
// (Algorithm 1, Lemmas 2-3, Theorems 2-3) or from the tight analysis at the
// top of src/core/algorithms/output_gd.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>

#include "dperm/accounting/analytic_gaussian.hpp"
#include "dperm/accounting/budget.hpp"
#include "dperm/accounting/rdp.hpp"
#include "dperm/model/model.hpp"
#include "dperm/release/decision.hpp"
#include "dperm/release/offset.hpp"
#include "dperm/algorithms/output_gd.hpp"
#include "dperm/release/streaming.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/plan/plan_steps.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/planning/release_curve.hpp"
#include "test_helpers.hpp"

namespace {

using dperm::Accountant;
using dperm::LossKind;
using dperm::NoiseKind;
using dperm::Options;
using dperm::Plan;
using dperm::PlanRelease;

using dperm::testing::ExpectInvalid;
using dperm::testing::Opts;
using dperm::testing::Planning;

// Public constants for a loss: {R, L, beta} from feature_bound and
// fit_intercept (R = sqrt(feature_bound^2 + fit_intercept)).
struct Constants {
  double R, L, beta;
};
Constants ConstantsFor(const Options& o, LossKind loss) {
  double R = std::sqrt(o.feature_bound * o.feature_bound + (o.fit_intercept ? 1 : 0));
  if (loss == LossKind::kLogistic) return {R, R, R * R / 4};
  return {R, dperm::HuberDelta(o) * R, R * R};
}

// The tight sensitivity of T steps of GD with step eta, written from the
// recursion Delta_{t+1} = (1 - eta mu) Delta_t + 2 eta L / n by summing the
// geometric series explicitly (mu > 0), or Delta_T = 2 eta L T / n (mu = 0).
double TightSensitivity(double L, double mu, double eta, int64_t T, int64_t n) {
  if (mu == 0) return 2 * eta * L * double(T) / double(n);
  return 2 * L / (double(n) * mu) * (1 - std::pow(1 - eta * mu, double(T)));
}

// The number from `"key":<number>` in a JSON text.
double JsonNumber(const std::string& json, const std::string& key) {
  std::string needle = "\"" + key + "\":";
  size_t at = json.find(needle);
  EXPECT_NE(at, std::string::npos) << key << " missing in " << json;
  if (at == std::string::npos) return NAN;
  return std::strtod(json.c_str() + at + needle.size(), nullptr);
}

// Tight, strongly convex: step 2/(beta + 2 mu), sensitivity
// 2L/(n mu) (1 - (1 - eta mu)^T) <= 2L/(n mu), for both losses.
TEST(PlanTight, StronglyConvexStepAndSensitivity) {
  for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber}) {
    for (bool fit_intercept : {true, false}) {
      for (double l2 : {0.01, 0.1, 1.0}) {
        Options o = Opts(1.0, 1e-6, l2, fit_intercept);
        o.feature_bound = 1.5;
        o.huber_delta = 0.8;
        const int64_t n = 5000;
        Plan p = PlanRelease(o, loss, n, 7);
        Constants c = ConstantsFor(o, loss);
        EXPECT_DOUBLE_EQ(p.R, c.R);
        EXPECT_DOUBLE_EQ(p.L, c.L);
        EXPECT_DOUBLE_EQ(p.beta, c.beta);
        EXPECT_EQ(p.mu, l2);
        EXPECT_EQ(p.dim, 7 + (fit_intercept ? 1 : 0));
        EXPECT_DOUBLE_EQ(p.step_size, 2 / (c.beta + 2 * l2));
        EXPECT_DOUBLE_EQ(p.max_step_size, 2 / (c.beta + 2 * l2));
        ASSERT_GE(p.iterations, 1);
        double expected = TightSensitivity(c.L, l2, p.step_size, p.iterations, n);
        EXPECT_NEAR((p.sensitivity - p.rounding_inflation), expected, 1e-12 * expected);
        EXPECT_LE((p.sensitivity - p.rounding_inflation), 2 * c.L / (n * l2));
        EXPECT_GT((p.sensitivity - p.rounding_inflation), 0.0);
      }
    }
  }
}

// Tight, convex (l2 = 0): default step 1/beta, sensitivity 2 eta L T / n,
// and the largest allowed step is 2/beta.
TEST(PlanTight, ConvexStepAndSensitivity) {
  for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber}) {
    Options o = Opts(0.5, 1e-5, 0.0);
    const int64_t n = 20000;
    Plan p = PlanRelease(o, loss, n, 4);
    Constants c = ConstantsFor(o, loss);
    EXPECT_DOUBLE_EQ(p.step_size, 1 / c.beta);
    EXPECT_DOUBLE_EQ(p.max_step_size, 2 / c.beta);
    EXPECT_NEAR((p.sensitivity - p.rounding_inflation),
                2 * p.step_size * c.L * double(p.iterations) / n, 1e-12 * p.sensitivity);
  }
}

// Tight, convex default T: minimising the optimisation error D^2/(2 eta T)
// plus the noise error beta/2 k (2 eta L T / n)^2 (k = E||z||^2 per unit
// sensitivity, D = 1) over T gives T^3 = D^2 n^2 / (8 beta k eta^3 L^2).
TEST(PlanTight, ConvexDefaultIterationsBalanceErrors) {
  for (double delta : {0.0, 1e-6}) {
    Options o = Opts(1.0, delta, 0.0);
    const int64_t n = 100000;
    const int d = 6;
    Plan p = PlanRelease(o, LossKind::kLogistic, n, d);
    Constants c = ConstantsFor(o, LossKind::kLogistic);
    int dim = d + 1;
    double k = delta > 0 ? dim * std::pow(dperm::AnalyticGaussianSigma(1.0, delta, 1.0), 2)
                         : dim * (dim + 1.0) * 1.0;  // (1/epsilon)^2 = 1
    double eta = 1 / c.beta;
    double t = std::cbrt(double(n) * n / (8 * c.beta * k * eta * eta * eta * c.L * c.L));
    EXPECT_EQ(p.iterations, static_cast<int64_t>(std::ceil(t))) << "delta=" << delta;
    // And the total error at T is no worse than at T + 1 (T is past the
    // real minimiser).
    auto total = [&](double T) {
      return 1 / (2 * eta * T) + c.beta / 2 * k * std::pow(2 * eta * c.L * T / n, 2);
    };
    EXPECT_LE(total(double(p.iterations)), total(double(p.iterations) + 1));
  }
}

// Default T for mu > 0 (tight): the smallest T with
// (beta + mu)/2 c^(2T) D^2 <= max(1% of (beta + mu)/2 E||z||^2, 0.1% of
// L^2/(mu n)), c = 1 - eta mu, E||z||^2 at the sensitivity bound 2L/(n mu),
// D^2 = min(L^2/mu^2, log(2)/mu) (logistic: F(0) = log 2), or L^2/mu^2 with
// a private intercept offset (the margin shifted); T - 1 does not satisfy
// it. The offset-free D is the smaller, so it never takes more passes.
TEST(PlanTight, StronglyConvexDefaultIterationsSmallest) {
  for (bool offset : {false, true}) {
    for (double delta : {0.0, 1e-5}) {
      for (int64_t n : {100, 5000, 1000000, 10000000}) {
        for (double l2 : {0.05, 1.0}) {
          Options o = Opts(0.8, delta, l2);
          o.intercept_offset = offset;
          const int d = 9;
          const dperm::OffsetPlan stage0 = dperm::PlanOffset(o, LossKind::kLogistic, n);
          Options mech = dperm::MechanismOptions(
              o, stage0, dperm::PlanDecision(o, LossKind::kLogistic, n, stage0));
          o.has_algorithm = true;
          o.algorithm = dperm::Algorithm::kOutputGd;
          Plan p = PlanRelease(o, LossKind::kLogistic, n, d);
          Constants c = ConstantsFor(o, LossKind::kLogistic);
          int dim = d + 1;
          double eps = mech.epsilon;
          double bound = 2 * c.L / (n * l2);
          double noise = delta > 0
                             ? dim * std::pow(dperm::AnalyticGaussianSigma(eps, delta, bound), 2)
                             : dim * (dim + 1.0) * std::pow(bound / eps, 2);
          double D2 = std::pow(c.L / l2, 2);
          if (!offset) D2 = std::min(D2, std::log(2.0) / l2);
          double smooth = c.beta + l2;
          double target = std::max(0.01 * smooth / 2 * noise, 0.001 * c.L * c.L / (l2 * n));
          double contraction = 1 - p.step_size * l2;
          auto ok = [&](int64_t T) {
            return smooth / 2 * std::pow(contraction, 2.0 * T) * D2 <= target * (1 + 1e-12);
          };
          SCOPED_TRACE("offset=" + std::to_string(offset) + " delta=" + std::to_string(delta) +
                       " n=" + std::to_string(n) + " l2=" + std::to_string(l2));
          EXPECT_DOUBLE_EQ(p.norm_bound, c.L / l2);
          EXPECT_TRUE(ok(p.iterations)) << "T=" << p.iterations;
          if (p.iterations > 1) {
            EXPECT_FALSE(ok(p.iterations - 1)) << "T=" << p.iterations;
          }
        }
      }
    }
  }
}

// A default T beyond 100000 is capped, said in the note, and the sensitivity
// follows the capped T.
TEST(PlanTight, DefaultIterationsCapped) {
  Options o = Opts(1.0, 1e-6, 1e-7);
  Plan p = PlanRelease(o, LossKind::kLogistic, 10000000, 3);
  EXPECT_EQ(p.iterations, 100000);
  EXPECT_NE(p.note.find("capped"), std::string::npos) << p.note;
  EXPECT_NEAR((p.sensitivity - p.rounding_inflation),
              TightSensitivity(p.L, p.mu, p.step_size, 100000, p.n), 1e-10 * p.sensitivity);
}

// A step above what the analysis covers is rejected: 2/(beta + 2 mu) when
// mu > 0, 2/beta when mu = 0 (tight); 1/(mu + beta_f), 1/beta (paper).
TEST(PlanSteps, TooLargeStepRejected) {
  struct Case {
    Accountant accountant;
    double l2;
    double max_step;  // from the constants, for logistic with R^2 = 2
  };
  const double beta = 0.5;  // logistic, feature_bound 1 with intercept
  Case cases[] = {{Accountant::kTight, 0.2, 2 / (beta + 0.4)},
                  {Accountant::kTight, 0.0, 2 / beta},
                  {Accountant::kPaper, 0.2, 1 / (0.2 + beta + 0.2)},
                  {Accountant::kPaper, 0.0, 1 / beta}};
  for (const Case& c : cases) {
    Options o = Opts(1, 1e-5, c.l2, true, c.accountant);
    o.step_size = c.max_step * 1.001;
    {
      SCOPED_TRACE("step " + std::to_string(o.step_size) + " l2=" + std::to_string(c.l2));
      ExpectInvalid(Planning(o, LossKind::kLogistic, 1000, 3), "step_size");
    }
    // A step just under the limit is accepted and used.
    o.step_size = c.max_step * 0.999;
    Plan p = PlanRelease(o, LossKind::kLogistic, 1000, 3);
    EXPECT_EQ(p.step_size, o.step_size);
    EXPECT_DOUBLE_EQ(p.max_step_size, c.max_step);
  }
}

// Given iterations and step_size are used as given, and the sensitivity is
// computed from them.
TEST(PlanTight, GivenIterationsAndStepUsed) {
  for (double l2 : {0.0, 0.3}) {
    Options o = Opts(2.0, 0.0, l2);
    o.iterations = 77;
    o.step_size = 0.25;
    Plan p = PlanRelease(o, LossKind::kHuber, 321, 2);
    EXPECT_EQ(p.iterations, 77);
    EXPECT_EQ(p.step_size, 0.25);
    EXPECT_EQ(p.iterations_rule, "given");
    double expected = TightSensitivity(p.L, l2, 0.25, 77, 321);
    EXPECT_NEAR((p.sensitivity - p.rounding_inflation), expected, 1e-12 * expected);
  }
}

// TightGdSensitivity itself: the closed form matches iterating the recursion
// Delta_{t+1} = (1 - eta mu) Delta_t + 2 eta L / n.
TEST(PlanTight, ClosedFormMatchesRecursion) {
  for (double mu : {0.0, 1e-6, 0.01, 0.5}) {
    double L = 1.3, eta = 0.7;
    int64_t n = 123;
    double delta = 0;
    for (int64_t T = 1; T <= 3000; T++) {
      delta = (1 - eta * mu) * delta + 2 * eta * L / n;
      if (T % 137 == 0 || T == 1 || T == 3000) {
        EXPECT_NEAR(dperm::TightGdSensitivity(L, mu, eta, T, n), delta, 1e-12 * delta)
            << "mu=" << mu << " T=" << T;
      }
    }
  }
}

// Paper, strongly convex: eta = 1/(mu + beta_f) with beta_f = beta + mu,
// Lemma 3 sensitivity 5L(mu + beta_f)/(n mu beta_f), Theorem 2's T with
// D = L/mu: ceil((mu^2 + beta_f^2)/(mu beta_f) log(n^2 eps^2 / dim_term)),
// dim_term = dim log(1/delta) (delta > 0) or dim^2 (delta = 0).
TEST(PlanPaper, StronglyConvexLemma3AndTheorem2) {
  for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber}) {
    for (double delta : {0.0, 1e-6}) {
      for (double l2 : {0.01, 0.5}) {
        const double eps = 0.7;
        const int64_t n = 40000;
        const int d = 11;
        Options o = Opts(eps, delta, l2, true, Accountant::kPaper);
        Plan p = PlanRelease(o, loss, n, d);
        Constants c = ConstantsFor(o, loss);
        double mu = l2, beta_f = c.beta + mu;
        int dim = d + 1;
        SCOPED_TRACE("delta=" + std::to_string(delta) + " l2=" + std::to_string(l2));
        EXPECT_DOUBLE_EQ(p.step_size, 1 / (mu + beta_f));
        double lemma3 = 5 * c.L * (mu + beta_f) / (double(n) * mu * beta_f);
        EXPECT_NEAR((p.sensitivity - p.rounding_inflation), lemma3, 1e-12 * lemma3);
        double dim_term = delta > 0 ? dim * std::log(1 / delta) : double(dim) * dim;
        double T = (mu * mu + beta_f * beta_f) / (mu * beta_f) *
                   std::log(double(n) * n * eps * eps / dim_term);
        EXPECT_EQ(p.iterations, static_cast<int64_t>(std::ceil(T)));
        EXPECT_DOUBLE_EQ(p.norm_bound, c.L / mu);
      }
    }
  }
}

// Paper, convex: eta = 1/beta, Lemma 2 sensitivity 3 L T eta / n, Theorem 3's
// T = ceil(cbrt(beta^2 n^2 eps^2 D^2 / (L^2 dim_term))) with D = 1.
TEST(PlanPaper, ConvexLemma2AndTheorem3) {
  for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber}) {
    for (double delta : {0.0, 1e-6}) {
      const double eps = 1.5;
      const int64_t n = 250000;
      const int d = 5;
      Options o = Opts(eps, delta, 0.0, false, Accountant::kPaper);
      o.feature_bound = 2;
      Plan p = PlanRelease(o, loss, n, d);
      Constants c = ConstantsFor(o, loss);
      int dim = d;
      SCOPED_TRACE("delta=" + std::to_string(delta));
      EXPECT_DOUBLE_EQ(p.step_size, 1 / c.beta);
      double dim_term = delta > 0 ? dim * std::log(1 / delta) : double(dim) * dim;
      double T = std::cbrt(c.beta * c.beta * double(n) * n * eps * eps / (c.L * c.L * dim_term));
      EXPECT_EQ(p.iterations, static_cast<int64_t>(std::ceil(T)));
      double lemma2 = 3 * c.L * double(p.iterations) * (1 / c.beta) / n;
      EXPECT_NEAR((p.sensitivity - p.rounding_inflation), lemma2, 1e-12 * lemma2);
    }
  }
}

// Paper mode with mu > 0 needs n >= 2 (Lemma 3's assumption).
TEST(PlanPaper, StronglyConvexNeedsTwoRows) {
  EXPECT_THROW(PlanRelease(Opts(1, 0, 0.1, true, Accountant::kPaper), LossKind::kLogistic, 1, 2),
               dperm::Error);
  EXPECT_NO_THROW(
      PlanRelease(Opts(1, 0, 0.1, true, Accountant::kPaper), LossKind::kLogistic, 2, 2));
}

// For the same n, d, T and step the tight sensitivity is strictly smaller
// than the paper's (Lemma 3: at least 2.5x; Lemma 2: 2/3), and so are the
// default plans. Prints the ratio for BANK-like inputs (n = 45211, d = 42,
// l2 = 0.1, no intercept).
TEST(PlanPaper, TightIsSmallerThanPaper) {
  for (double l2 : {0.0, 0.001, 0.1, 2.0}) {
    for (bool fit_intercept : {true, false}) {
      Options paper = Opts(1, 1e-6, l2, fit_intercept, Accountant::kPaper);
      Plan pp = PlanRelease(paper, LossKind::kLogistic, 45211, 42);
      // Same T and step in the tight analysis (the paper's step is allowed).
      Options tight = Opts(1, 1e-6, l2, fit_intercept, Accountant::kTight);
      tight.iterations = pp.iterations;
      tight.step_size = pp.step_size;
      Plan pt = PlanRelease(tight, LossKind::kLogistic, 45211, 42);
      EXPECT_LT((pt.sensitivity - pt.rounding_inflation), (pp.sensitivity - pp.rounding_inflation))
          << "l2=" << l2;
      if (l2 == 0) {
        EXPECT_NEAR(
            (pt.sensitivity - pt.rounding_inflation) / (pp.sensitivity - pp.rounding_inflation),
            2.0 / 3.0, 1e-12);
      } else {
        EXPECT_LE(
            (pt.sensitivity - pt.rounding_inflation) / (pp.sensitivity - pp.rounding_inflation),
            0.4 + 1e-12);
      }
      // The default plans as well.
      Plan pd = PlanRelease(Opts(1, 1e-6, l2, fit_intercept), LossKind::kLogistic, 45211, 42);
      if (l2 > 0) {
        EXPECT_LT((pd.sensitivity - pd.rounding_inflation),
                  (pp.sensitivity - pp.rounding_inflation))
            << "l2=" << l2;
      }
    }
  }
  // BANK-like inputs, default plans of both accountants.
  for (double delta : {0.0, 1e-6}) {
    Plan tight = PlanRelease(Opts(1, delta, 0.1, false), LossKind::kLogistic, 45211, 42);
    Plan paper =
        PlanRelease(Opts(1, delta, 0.1, false, Accountant::kPaper), LossKind::kLogistic, 45211, 42);
    // Expected from the formulas: R = L = 1, beta = 1/4, beta_f = 0.35.
    double paper_expected = 5 * 1.0 * (0.1 + 0.35) / (45211 * 0.1 * 0.35);
    EXPECT_NEAR((paper.sensitivity - paper.rounding_inflation), paper_expected,
                1e-12 * paper_expected);
    double ratio = (tight.sensitivity - tight.rounding_inflation) /
                   (paper.sensitivity - paper.rounding_inflation);
    EXPECT_LT(ratio, 1.0);
    // At most (2 L/(n mu)) / Lemma 3 = 2 beta_f / (5 (mu + beta_f)) = 0.3111.
    EXPECT_LE(ratio, 2 * 0.35 / (5 * 0.45) + 1e-12);
    std::cout << "[ info ] BANK-like (n=45211, d=42, l2=0.1, no intercept, eps=1, delta=" << delta
              << "): tight " << tight.sensitivity << " (T=" << tight.iterations << ") / paper "
              << paper.sensitivity << " (T=" << paper.iterations << ") = " << ratio
              << "; noise scale " << tight.noise_scale << " vs " << paper.noise_scale << "\n";
  }
}

// delta = 0: per-coordinate discrete Laplace at the L1 sensitivity
// sqrt(dim) Delta (Delta includes the rounding term), E||z||^2 <= 2 dim b^2.
TEST(PlanNoise, PureDpUsesDiscreteLaplace) {
  for (Accountant a : {Accountant::kTight, Accountant::kPaper}) {
    Options o = Opts(0.3, 0.0, 0.1, true, a);
    Plan p = PlanRelease(o, LossKind::kLogistic, 1000, 4);
    EXPECT_EQ(p.noise, NoiseKind::kLaplace);
    EXPECT_NEAR(p.noise_scale, std::sqrt(5.0) * p.sensitivity / 0.3, 1e-12 * p.noise_scale);
    EXPECT_DOUBLE_EQ(p.expected_noise_sq, 2 * 5.0 * p.noise_scale * p.noise_scale);
  }
}

// delta > 0, tight: the discrete Gaussian's sigma is the smallest whose RDP
// alpha Delta^2/(2 sigma^2) (CKS20 Thm 14) converts to epsilon; it is a
// little above the continuous law's analytic sigma.
TEST(PlanNoise, ApproximateDpUsesDiscreteGaussianRdp) {
  for (double eps : {0.1, 1.0, 8.0}) {
    Options o = Opts(eps, 1e-5, 0.1);
    Plan p = PlanRelease(o, LossKind::kHuber, 1000, 4);
    EXPECT_EQ(p.noise, NoiseKind::kGaussian);
    const std::vector<double> curve = dperm::ReleaseRdpCurve(p);
    EXPECT_NEAR(dperm::RdpToEpsilon(dperm::LedgerOrders(), curve, 1e-5), eps, 1e-6 * eps);
    double analytic = dperm::AnalyticGaussianSigma(eps, 1e-5, p.sensitivity);
    EXPECT_GE(p.noise_scale, analytic);
    std::printf("[ info ] eps %g: discrete-Gaussian RDP sigma / analytic sigma = %.4f\n", eps,
                p.noise_scale / analytic);
    EXPECT_NEAR(p.expected_noise_sq, 5 * p.noise_scale * p.noise_scale,
                1e-12 * p.noise_scale * p.noise_scale);
  }
}

// delta > 0, paper: sigma = sqrt(2 log(2/delta)) Delta'/eps (Algorithm 1,
// line 7, at the rounded sensitivity Delta'), unless that is below the
// RDP-calibrated sigma, when the calibrated one is used with a note.
TEST(PlanNoise, PaperGaussianLine7OrCalibrated) {
  {
    Options o = Opts(0.5, 1e-5, 0.1, true, Accountant::kPaper);
    Plan p = PlanRelease(o, LossKind::kLogistic, 1000, 4);
    double line7 = std::sqrt(2 * std::log(2 / 1e-5)) * p.sensitivity / 0.5;
    EXPECT_EQ(p.noise, NoiseKind::kGaussian);
    EXPECT_NEAR(p.noise_scale, line7, 1e-12 * line7);
    EXPECT_TRUE(p.note.empty()) << p.note;
  }
  {
    Options o = Opts(1000, 0.5, 0.1, true, Accountant::kPaper);
    Plan p = PlanRelease(o, LossKind::kLogistic, 1000, 4);
    double line7 = std::sqrt(2 * std::log(2 / 0.5)) * p.sensitivity / 1000;
    EXPECT_GT(p.noise_scale, line7);
    EXPECT_FALSE(p.note.empty());
  }
}

// Snapping in the plan: grid a power of two, inflation sqrt(dim) grid on top
// of the derived sensitivity, at most 2^-10 of it (noise.hpp, SnapGrid).
TEST(PlanNoise, SensitivityInflatedByRounding) {
  for (double delta : {0.0, 1e-6}) {
    for (double eps : {0.1, 1.0, 10.0}) {
      Options o = Opts(eps, delta, 0.1);
      Plan p = PlanRelease(o, LossKind::kLogistic, 1000, 40);
      int e;
      EXPECT_EQ(std::frexp(p.grid, &e), 0.5);
      EXPECT_DOUBLE_EQ(p.rounding_inflation, std::sqrt(41.0) * p.grid + p.sum_inflation);
      const double base = p.sensitivity - p.rounding_inflation;
      EXPECT_NEAR(base,
                  2 * p.L / (1000 * 0.1) *
                      -std::expm1(double(p.iterations) * std::log1p(-p.step_size * 0.1)),
                  1e-12 * base);
      EXPECT_LE(p.rounding_inflation, base / 1024);
      EXPECT_GE(p.noise_scale / p.grid, 1024.0);
      EXPECT_LE(p.noise_scale / p.grid, 1048576.0);
      EXPECT_FALSE(p.sampler.empty());
    }
  }
}

// ExpectedNoiseSq: dim sigma^2 (Gaussian), dim (dim + 1) scale^2 (Laplace).
TEST(PlanNoise, ExpectedNoiseSq) {
  EXPECT_DOUBLE_EQ(dperm::ExpectedNoiseSq(NoiseKind::kGaussian, 7, 0.5), 7 * 0.25);
  EXPECT_DOUBLE_EQ(dperm::ExpectedNoiseSq(NoiseKind::kLaplaceVector, 7, 0.5), 56 * 0.25);
}

// L and beta come from the options alone: R = sqrt(feature_bound^2 +
// fit_intercept); logistic L = R, beta = R^2/4; Huber L = huber_delta R,
// beta = R^2.
TEST(PlanConstants, FromOptions) {
  for (bool fit_intercept : {true, false}) {
    Options o = Opts(1, 0, 0.1, fit_intercept);
    o.feature_bound = 3;
    o.huber_delta = 0.5;
    double R2 = 9 + (fit_intercept ? 1 : 0);
    Plan pl = PlanRelease(o, LossKind::kLogistic, 100, 2);
    EXPECT_DOUBLE_EQ(pl.R, std::sqrt(R2));
    EXPECT_DOUBLE_EQ(pl.L, std::sqrt(R2));
    EXPECT_DOUBLE_EQ(pl.beta, R2 / 4);
    Plan ph = PlanRelease(o, LossKind::kHuber, 100, 2);
    EXPECT_DOUBLE_EQ(ph.L, 0.5 * std::sqrt(R2));
    EXPECT_DOUBLE_EQ(ph.beta, R2);
    EXPECT_EQ(ph.n, 100);
    EXPECT_EQ(ph.d, 2);
    EXPECT_EQ(ph.dim, fit_intercept ? 3 : 2);
  }
}

// The default huber_delta is 0.1 target_bound (options.hpp; chosen by
// held-out R², docs/heldout.md "Huber default huber_delta"), a given
// huber_delta wins, and every reader of the plan sees the effective value:
// L = huber_delta R for every algorithm that trains Huber models, the
// streaming pass spec, dp_explain's JSON and the model's preprocessing.
TEST(PlanConstants, DefaultHuberDeltaFollowsTargetBound) {
  EXPECT_EQ(dperm::kHuberDeltaPerTargetBound, 0.1);
  for (double B : {0.25, 1.0, 40.0}) {
    for (double given : {0.0, 0.7}) {  // 0: not given
      const double expected = given > 0 ? given : 0.1 * B;
      int huber_plans = 0;
      for (dperm::Algorithm a : dperm::AllAlgorithms()) {
        Options o = Opts(1, 1e-6, 0.1);
        o.algorithm = a;
        o.target_bound = B;
        o.huber_delta = given;
        o.feature_bound = 2;
        Plan p;
        try {
          p = PlanRelease(o, LossKind::kHuber, 5000, 3);
        } catch (const dperm::Error&) {
          continue;  // objective perturbation refuses Huber
        }
        huber_plans++;
        EXPECT_DOUBLE_EQ(p.options.huber_delta, expected) << dperm::AlgorithmName(a);
        EXPECT_DOUBLE_EQ(p.L, expected * std::sqrt(5.0)) << dperm::AlgorithmName(a);
        EXPECT_EQ(p.options.target_bound, B);
        EXPECT_EQ(p.huber_delta_rule.rfind(given > 0 ? "given" : "default", 0), 0u)
            << p.huber_delta_rule;
      }
      EXPECT_GE(huber_plans, 8);

      Options o = Opts(1, 1e-6, 0);
      o.has_algorithm = false;
      o.target_bound = B;
      o.huber_delta = given;
      Plan p = PlanRelease(o, LossKind::kHuber, 5000, 3);  // dp_gd, the all-defaults call
      std::string json = dperm::PlanJson(p);
      EXPECT_EQ(JsonNumber(json, "huber_delta"), p.options.huber_delta);
      EXPECT_EQ(JsonNumber(json, "target_bound"), B);
      EXPECT_NE(json.find("\"huber_delta_rule\""), std::string::npos);
      std::vector<double> w(4, 0.0);
      std::string model = dperm::ModelJson(p, w, dperm::ModelMeta());
      const std::string preprocessing = model.substr(model.find("\"preprocessing\""));
      EXPECT_EQ(JsonNumber(preprocessing, "huber_delta"), p.options.huber_delta);
      EXPECT_EQ(JsonNumber(preprocessing, "target_bound"), B);
      dperm::PassSpec spec =
          dperm::PassSpecFor(dperm::PlanStreamingRelease(o, LossKind::kHuber, 5000, 3));
      EXPECT_DOUBLE_EQ(spec.huber_delta, expected);
      EXPECT_EQ(spec.target_bound, B);
    }
  }
  // Logistic and softmax models carry a positive huber_delta too (the
  // model's preprocessing must read back), though no Huber constant.
  Options lo = Opts(1, 0, 0.1);
  lo.huber_delta = 0;  // not given
  Plan pl = PlanRelease(lo, LossKind::kLogistic, 100, 2);
  EXPECT_DOUBLE_EQ(pl.options.huber_delta, 0.1);
  EXPECT_TRUE(pl.huber_delta_rule.empty());
}

// Options output_gd has no use for are rejected, naming the option: l1 > 0,
// radius, batch_size, ls_sigma (0 counts as given).
TEST(PlanOptions, UnsupportedOptionsRejected) {
  struct Case {
    const char* key;
    void (*set)(Options&);
  };
  Case cases[] = {{"l1", [](Options& o) { o.l1 = 0.1; }},
                  {"radius", [](Options& o) { o.radius = 2; }},
                  {"batch_size", [](Options& o) { o.batch_size = 32; }},
                  {"ls_sigma", [](Options& o) { o.ls_sigma = 0; }}};
  for (const Case& c : cases) {
    Options o = Opts(1, 0, 0.1);
    c.set(o);
    ExpectInvalid(Planning(o, LossKind::kLogistic, 100, 3), c.key);
  }
  // l1 = 0 is the default and is fine.
  EXPECT_NO_THROW(PlanRelease(Opts(1, 0, 0.1), LossKind::kLogistic, 100, 3));
}

// Shape errors: no rows, or no coordinates at all (d = 0 without intercept).
TEST(PlanOptions, ShapeErrors) {
  EXPECT_THROW(PlanRelease(Opts(1, 0, 0.1), LossKind::kLogistic, 0, 3), dperm::Error);
  EXPECT_THROW(PlanRelease(Opts(1, 0, 0.1, false), LossKind::kLogistic, 10, 0), dperm::Error);
  Plan p = PlanRelease(Opts(1, 0, 0.1, true), LossKind::kLogistic, 10, 0);
  EXPECT_EQ(p.dim, 1);
}

// PlanJson carries the plan's numbers (read back exactly).
TEST(PlanJson, CarriesNumbers) {
  Plan p = PlanRelease(Opts(0.9, 1e-7, 0.05), LossKind::kHuber, 777, 3);
  std::string json = dperm::PlanJson(p);
  EXPECT_EQ(JsonNumber(json, "sensitivity"), p.sensitivity);
  EXPECT_EQ(JsonNumber(json, "noise_scale"), p.noise_scale);
  EXPECT_EQ(JsonNumber(json, "step_size"), p.step_size);
  EXPECT_EQ(JsonNumber(json, "iterations"), double(p.iterations));
  EXPECT_EQ(JsonNumber(json, "L"), p.L);
  EXPECT_EQ(JsonNumber(json, "expected_noise_norm_sq"), p.expected_noise_sq);
  EXPECT_NE(json.find("\"noise\":\"gaussian\""), std::string::npos);
  EXPECT_NE(json.find("\"loss\":\"huber\""), std::string::npos);
}

// A mechanism's own figures (Plan::mechanism_fields) reach PlanJson by name
// alone, in the order set; setting a key again replaces it; an unset figure
// reads 0 and is not printed.
TEST(PlanJson, PrintsMechanismFieldsGenerically) {
  Plan p = PlanRelease(Opts(1, 1e-6, 0.1), LossKind::kLogistic, 500, 3);
  EXPECT_TRUE(p.mechanism_fields.items().empty());  // output_gd has none
  EXPECT_EQ(p.mechanism_fields.Get("no_such_figure"), 0);
  p.mechanism_fields.Set("first_figure", 0.25);
  p.mechanism_fields.Set("second_figure", 3);
  p.mechanism_fields.Set("first_figure", 0.5);
  EXPECT_EQ(p.mechanism_fields.Get("first_figure"), 0.5);
  std::string json = dperm::PlanJson(p);
  EXPECT_NE(json.find("\"first_figure\":0.5,\"second_figure\":3,"), std::string::npos) << json;
  EXPECT_EQ(json.find("\"first_figure\":0.25"), std::string::npos) << json;
  EXPECT_EQ(json.find("no_such_figure"), std::string::npos) << json;
}

}  // namespace

// Without an `algorithm` option PlanRelease picks by (regulariser, delta) as
// the user guide's table says (docs/user-guide.md, "Choosing an algorithm"), and says why; a named algorithm
// is always kept.
TEST(DefaultAlgorithm, FollowsTheRecommendationTable) {
  struct Case {
    double delta, l2, l1;
    dperm::Algorithm expected;
  };
  const Case cases[] = {
      {1e-3, 0.1, 0, dperm::Algorithm::kBolton},  {0, 0.1, 0, dperm::Algorithm::kBolton},
      {1e-3, 0, 0, dperm::Algorithm::kDpGd},      {0, 0, 0, dperm::Algorithm::kOutputGd},
      {1e-3, 0.1, 0.01, dperm::Algorithm::kDpGd}, {1e-3, 0, 0.01, dperm::Algorithm::kDpGd},
  };
  for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber}) {
    for (const Case& c : cases) {
      Options o = Opts(1, c.delta, c.l2);
      o.l1 = c.l1;
      o.has_algorithm = false;
      Plan p = PlanRelease(o, loss, 10000, 5);  // n l2 = 1000: no objective
      EXPECT_EQ(p.algorithm, c.expected) << c.delta << " " << c.l2 << " " << c.l1;
      EXPECT_NE(p.algorithm_rule.find("default for"), std::string::npos);
      EXPECT_EQ(p.options.algorithm, c.expected);
    }
  }
  // Small l2 (n l2 <= 100), logistic, no l1: objective (at delta = 0 with
  // the Gamma-norm b), unless its fixed schedule would pass 8e7 row gradients.
  struct Small {
    LossKind loss;
    double delta, l2, l1;
    int64_t n;
    dperm::Algorithm expected;
  };
  const Small small[] = {
      {LossKind::kLogistic, 1e-6, 1e-3, 0, 10000, dperm::Algorithm::kObjective},
      {LossKind::kLogistic, 1e-6, 1e-2, 0, 10000, dperm::Algorithm::kObjective},  // n l2 = 100
      {LossKind::kLogistic, 1e-6, 1e-2, 0, 10001, dperm::Algorithm::kBolton},     // n l2 > 100
      {LossKind::kHuber, 1e-6, 1e-3, 0, 10000, dperm::Algorithm::kBolton},
      {LossKind::kLogistic, 0, 1e-3, 0, 10000, dperm::Algorithm::kObjective},  // pure
      {LossKind::kLogistic, 0, 1e-2, 0, 10001, dperm::Algorithm::kBolton},     // pure, n l2 > 100
      {LossKind::kLogistic, 1e-6, 1e-3, 0.01, 10000, dperm::Algorithm::kDpGd},
      {LossKind::kLogistic, 1e-6, 1e-5, 0, 1000000, dperm::Algorithm::kBolton},  // T n > 8e7
  };
  for (const Small& c : small) {
    Options o = Opts(1, c.delta, c.l2);
    o.l1 = c.l1;
    o.has_algorithm = false;
    Plan p = PlanRelease(o, c.loss, c.n, 5);
    EXPECT_EQ(p.algorithm, c.expected) << c.delta << " " << c.l2 << " " << c.l1 << " " << c.n;
    if (c.expected == dperm::Algorithm::kObjective) {
      EXPECT_NE(p.algorithm_rule.find("n l2 <= 100"), std::string::npos) << p.algorithm_rule;
      EXPECT_LE(double(p.gradient_evaluations), 8e7);
    }
  }
  Options named = Opts(1, 1e-3, 0.1);
  named.algorithm = dperm::Algorithm::kDpSgd;  // has_algorithm: as ParseOptions sets it
  Plan p = PlanRelease(named, LossKind::kLogistic, 1000, 5);
  EXPECT_EQ(p.algorithm, dperm::Algorithm::kDpSgd);
  EXPECT_TRUE(p.algorithm_rule.empty());
}

// The pure epsilon-DP comparison. The K-norm formulas
// dim (dim + 1) s^2 E||u||^2 are checked by simulation (Gamma(dim) radius
// times the cone measure of the boundary, which is the radial projection of
// a uniform point of K), and the plan states the comparison and uses the
// smallest noise dperm can sample exactly.
TEST(PureNoiseComparison, KNormFormulasAndThePlan) {
  const int dim = 5, draws = 200000;
  const dperm::PureNoiseSq c = dperm::PureNoiseComparison(dim);
  EXPECT_DOUBLE_EQ(c.coordinate, 2.0 * dim * dim);
  EXPECT_DOUBLE_EQ(c.l2, double(dim) * (dim + 1));
  std::mt19937_64 gen(77);
  std::gamma_distribution<double> radius(dim, 1.0);
  std::uniform_real_distribution<double> cube(-1, 1);
  double l2 = 0, linf = 0;
  for (int i = 0; i < draws; i++) {
    double sup = 0, sq = 0;
    std::vector<double> x(dim);
    for (double& v : x) {
      v = cube(gen);
      sup = std::max(sup, std::fabs(v));
      sq += v * v;
    }
    const double r = radius(gen);
    linf += r * r * sq / (sup * sup);
    l2 += r * r;  // a direction on the L2 sphere has norm 1
  }
  EXPECT_NEAR(l2 / draws, c.l2, 0.02 * c.l2);
  EXPECT_NEAR(linf / draws, c.linf, 0.02 * c.linf);
  for (int d : {1, 2, 3, 10, 69}) {
    const dperm::PureNoiseSq k = dperm::PureNoiseComparison(d);
    EXPECT_LE(k.coordinate, k.linf * (1 + 1e-12)) << d;  // never worse than Linf
    EXPECT_LE(k.coordinate, 2 * k.l2) << d;              // within 2x of L2
  }
  Options o = dperm::testing::Opts(1.0, 0.0, 0.1);
  o.algorithm = dperm::Algorithm::kOutputGd;
  Plan p = PlanRelease(o, LossKind::kLogistic, 1000, 68);
  EXPECT_EQ(p.noise, NoiseKind::kLaplace);
  EXPECT_NE(p.note.find("per-coordinate Laplace (used) 9522"), std::string::npos) << p.note;
}
