// Unit tests of the plans of objective perturbation (Bassily, Feldman, Talwar
// & Thakurta 2019, Section 5; src/core/algorithms/objective_perturbation.cpp)
// and its efficient version (src/core/algorithms/objective_approx.cpp): lambda
// and sigma against the paper's formulas and dperm's curve, the accounting, the
// refused losses and options, and dp_explain. Training: test_objective_perturbation.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "dperm/accounting/budget.hpp"
#include "dperm/planning/explain.hpp"
#include "dperm/algorithms/objective_approx.hpp"
#include "dperm/algorithms/objective_perturbation.hpp"
#include "dperm/noise/exact_normal.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/accounting/rdp.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/planning/release_curve.hpp"
#include "test_helpers.hpp"
#include "objective_perturbation_support.hpp"

namespace {

using dperm::Accountant;
using dperm::Algorithm;
using dperm::LossKind;
using dperm::Options;
using dperm::Plan;
using dperm::PlanRelease;
using dperm::testing::objective::Curve;
using dperm::testing::objective::ItemSteps;
using dperm::testing::objective::ObjOpts;
using dperm::testing::objective::RayleighMgfNumeric;

// Theorem 5.3's lambda, written out here, with dperm's norm bound M = 10.
const double kM = 10;
double Theorem53Lambda(double L, double n, double dim, double eps, double delta) {
  return 2 * L / kM * std::sqrt(2 / n + 4 * dim * std::log(1 / delta) / (eps * eps * n * n));
}

TEST(ObjectivePerturbationPlan, RayleighMgf) {
  for (double t : {0.0, 0.01, 0.3, 1.0, 4.9, 5.1, 12.0, 30.0}) {
    double expected = t == 0 ? 0.0 : RayleighMgfNumeric(t);
    EXPECT_NEAR(dperm::LogRayleighMgf(t), expected, 1e-9 * std::max(1.0, expected)) << t;
  }
}

// objective: lambda (tight: the smallest ridge keeping the Jacobian term
// <= epsilon/2, Chaudhuri et al. 2011's rule; paper: Theorem 5.3 and the
// Theorem 5.2 check), sigma_1 (tight: calibrated on the curve with the
// output noise composed in; paper: Algorithm 2's when the curve covers it),
// b's dyadic scale, the output noise for 2r, and the fixed schedule.
TEST(ObjectivePerturbationPlan, LambdaSigmaAndCurve) {
  const int64_t n = 2000;
  const int d = 9;
  const double L = std::sqrt(2.0), beta = 0.5, delta = 1e-6;
  for (Accountant acc : {Accountant::kTight, Accountant::kPaper}) {
    for (double eps : {0.5, 1.0, 4.0}) {
      for (double l2 : {0.0, 1e-4, 0.01}) {
        Plan p = PlanRelease(ObjOpts(Algorithm::kObjective, eps, delta, l2, acc),
                             LossKind::kLogistic, n, d);
        SCOPED_TRACE("eps=" + std::to_string(eps) + " l2=" + std::to_string(l2) +
                     (acc == Accountant::kPaper ? " paper" : " tight"));
        double lambda;
        if (acc == Accountant::kTight) {
          // 2 lambda + l2 >= beta/(n (e^{eps/2} - 1)), lambda >= 0.
          lambda = std::max(0.0, (beta / (n * (std::exp(eps / 2) - 1)) - l2) / 2);
          if (lambda > 0) {
            EXPECT_NEAR(std::log1p(beta / (n * (2 * lambda + l2))), eps / 2, 1e-12);
          }
        } else {
          lambda = Theorem53Lambda(L, n, d + 1, eps, delta);
          ASSERT_GE(lambda, beta / (eps * n));  // Theorem 5.2's condition holds here
          EXPECT_NE(p.note.find("beta <= epsilon n lambda holds"), std::string::npos) << p.note;
        }
        EXPECT_NEAR(p.mechanism_fields.Get(dperm::kObjectiveLambda), lambda,
                    1e-14 * lambda + 1e-300);
        const double mu = 2 * lambda + l2;
        double eps_j = std::log1p(beta / (n * mu));
        EXPECT_NEAR(dperm::JacobianEpsilon(p), eps_j, 1e-15);
        // b's scale has at most 20 significant bits (exact_normal.hpp).
        const double sigma = p.mechanism_fields.Get(dperm::kObjectiveNoise);
        EXPECT_EQ(dperm::DyadicNoiseScale(sigma), sigma);
        double kappa = 2 * L / sigma;
        // The output noise: r = tol/mu + ||b rounding||/(n mu), snapped at
        // the ratio kappa/16.
        EXPECT_NEAR(p.mechanism_fields.Get(dperm::kSolverTolerance),
                    1e-10 * (L + sigma * std::sqrt(10.0) / n), 1e-25);
        const double r = p.mechanism_fields.Get(dperm::kSolverTolerance) / mu +
                         sigma * std::sqrt(10.0) * std::ldexp(1.0, -21) / (n * mu);
        EXPECT_NEAR(p.mechanism_fields.Get(dperm::kCertificateRadius), r, 1e-12 * r);
        EXPECT_NEAR(p.sensitivity - p.rounding_inflation, 2 * r, 1e-12 * r);
        const double sigma2 = dperm::testing::ExpectSnappedNoise(p);
        EXPECT_NEAR(2 * r / sigma2, kappa / 16, 1e-9 * kappa);
        EXPECT_NE(p.sampler.find("b: exact normal (Karney 2016"), std::string::npos) << p.sampler;
        std::vector<double> curve = Curve(kappa, eps_j, kappa / 16);
        std::vector<double> stored = dperm::ReleaseRdpCurve(p);
        ASSERT_EQ(stored.size(), curve.size());
        for (size_t i = 0; i < curve.size(); i++) EXPECT_NEAR(stored[i], curve[i], 1e-8 * curve[i]);
        double spent = dperm::RdpToEpsilon(dperm::LedgerOrders(), stored, delta);
        EXPECT_LE(spent, eps * (1 + 1e-12));
        double paper_sigma = std::sqrt(10 * std::log(1 / delta)) * L / eps;
        if (acc == Accountant::kTight) {
          EXPECT_GT(spent, 0.999 * eps);
        } else {
          double k_p = 2 * L / paper_sigma;
          bool fits =
              dperm::RdpToEpsilon(dperm::LedgerOrders(), Curve(k_p, eps_j, k_p / 16), delta) <= eps;
          if (fits) {
            EXPECT_EQ(sigma, dperm::DyadicNoiseScale(paper_sigma));
          } else {
            EXPECT_NE(p.note.find("calibrated sigma is used"), std::string::npos) << p.note;
          }
        }
        EXPECT_TRUE(p.has_rdp);
        EXPECT_EQ(p.noisy_steps, 0);
        // The fixed schedule: T is the smallest N with 1 + q A_N >= (G/tol)^2
        // (ITEM, Taylor & Drori 2023, Thm 3), q = mu/S, G = L + 256 sigma
        // sqrt(dim)/n (the exact sampler's bound on ||b||), D = tol/mu.
        double S = beta + mu;
        double G = L + 256 * sigma * std::sqrt(10.0) / n,
               D = p.mechanism_fields.Get(dperm::kSolverTolerance) / mu;
        EXPECT_EQ(p.iterations, ItemSteps(mu / S, G / (mu * D)));
        // About half of Nesterov's constant-momentum count (Bubeck 2015,
        // Thm 3.18), which dperm ran before.
        double bubeck =
            std::ceil(std::sqrt(S / mu) * std::log((mu + S) * G * G / (mu * mu * mu * D * D)));
        EXPECT_LT(double(p.iterations), 0.6 * bubeck);
        EXPECT_EQ(p.gradient_evaluations, p.iterations * n);
        EXPECT_NE(p.iterations_rule.find("no early exit"), std::string::npos);
        std::cout << "[ info ] objective eps=" << eps << " l2=" << l2 << " lambda=" << lambda
                  << " sigma=" << sigma << " (Alg. 2: " << paper_sigma << ") T=" << p.iterations
                  << "\n";
      }
    }
  }
}

// Theorem 5.2's condition beta <= eps n lambda: when Theorem 5.3's lambda is
// below beta/(eps n) the plan raises it and says so.
TEST(ObjectivePerturbationPlan, LambdaRaisedToTheorem52) {
  // Logistic with feature_bound 100: R^2 = 10001, beta = R^2/4, L = R.
  Options o = ObjOpts(Algorithm::kObjective, 0.1, 1e-3, 0, Accountant::kPaper);
  o.feature_bound = 100;
  const int64_t n = 100;
  Plan p = PlanRelease(o, LossKind::kLogistic, n, 1);
  double R = std::sqrt(10001.0);
  double lambda53 = Theorem53Lambda(R, n, 2, 0.1, 1e-3);
  double lambda52 = R * R / 4 / (0.1 * n);
  ASSERT_LT(lambda53, lambda52);
  EXPECT_NEAR(p.mechanism_fields.Get(dperm::kObjectiveLambda), lambda52, 1e-14 * lambda52);
  EXPECT_NE(p.note.find("lambda raised"), std::string::npos) << p.note;
  EXPECT_LE(dperm::RdpToEpsilon(dperm::LedgerOrders(), dperm::ReleaseRdpCurve(p), 1e-3), 0.1);
}

// objective_approx: r, the two sigmas (composed curve), the solver's
// tolerance and the planned SVRG epochs and gradient evaluations.
TEST(ObjectiveApproxPlan, RadiusSigmasAndEvaluations) {
  const int64_t n = 3000;
  const int d = 5;
  const double L = std::sqrt(2.0), beta = 0.5, delta = 1e-5;
  for (Accountant acc : {Accountant::kTight, Accountant::kPaper}) {
    for (double eps : {0.3, 1.0}) {
      const double l2 = 0.02;
      Plan p = PlanRelease(ObjOpts(Algorithm::kObjectiveApprox, eps, delta, l2, acc),
                           LossKind::kLogistic, n, d);
      SCOPED_TRACE("eps=" + std::to_string(eps) +
                   (acc == Accountant::kPaper ? " paper" : " tight"));
      double lambda = acc == Accountant::kPaper
                          ? Theorem53Lambda(L, n, d + 1, eps, delta)
                          : std::max(0.0, (beta / (n * (std::exp(eps / 2) - 1)) - l2) / 2);
      EXPECT_NEAR(p.mechanism_fields.Get(dperm::kObjectiveLambda), lambda, 1e-14 * lambda + 1e-300);
      double mu = 2 * lambda + l2;
      double r = L / (40 * n * mu);
      // b's rounding (sigma_1 2^-20 per coordinate) moves the minimiser by
      // at most sigma_1 sqrt(dim) 2^-21/(n mu): the radius grows by it.
      EXPECT_EQ(dperm::DyadicNoiseScale(p.mechanism_fields.Get(dperm::kObjectiveNoise)),
                p.mechanism_fields.Get(dperm::kObjectiveNoise));
      const double r_b = r + p.mechanism_fields.Get(dperm::kObjectiveNoise) *
                                 std::sqrt(double(d + 1)) * std::ldexp(1.0, -21) / (n * mu);
      EXPECT_NEAR(p.mechanism_fields.Get(dperm::kCertificateRadius), r_b, 1e-14 * r);
      EXPECT_NEAR(p.sensitivity - p.rounding_inflation, 2 * r_b, 1e-14 * r);
      // The output noise is snapped: sigma_2 before the rounding term.
      const double sigma2 = dperm::testing::ExpectSnappedNoise(p);
      EXPECT_NEAR(p.mechanism_fields.Get(dperm::kSolverTolerance), mu * r / 2, 1e-14 * mu * r);
      double eps_j = std::log1p(beta / (n * mu));
      const double delta_curve = 0.999 * delta;  // 1e-3 delta pays for the certificate's failure
      double kappa1 = 2 * L / p.mechanism_fields.Get(dperm::kObjectiveNoise),
             ratio = 2 * r_b / sigma2;
      EXPECT_NEAR(ratio, p.sensitivity / p.noise_scale, 1e-12 * ratio);  // kept by the rounding
      std::vector<double> curve = Curve(kappa1, eps_j, ratio);
      // The ledger gets no curve (the failure event is outside it): the
      // release composes by basic sums of its full (epsilon, delta).
      EXPECT_FALSE(p.has_rdp);
      EXPECT_TRUE(dperm::ReleaseRdpCurve(p).empty());
      const std::vector<double>& stored = p.rdp_curve;
      ASSERT_EQ(stored.size(), curve.size());
      for (size_t i = 0; i < curve.size(); i++) EXPECT_NEAR(stored[i], curve[i], 1e-8 * curve[i]);
      double spent = dperm::RdpToEpsilon(dperm::LedgerOrders(), stored, delta);
      EXPECT_LE(spent, eps * (1 + 1e-12));
      EXPECT_LE(dperm::RdpToEpsilon(dperm::LedgerOrders(), stored, delta_curve), eps * (1 + 1e-12));
      if (acc == Accountant::kTight) {
        EXPECT_GT(spent, 0.999 * eps);
        EXPECT_NEAR(ratio, kappa1 / 4, 1e-12 * kappa1);  // the output part's share
        // sigma_2 = sigma_1 / (10 n mu) (r_b/r): a tenth of the objective
        // noise's displacement.
        EXPECT_NEAR(sigma2,
                    p.mechanism_fields.Get(dperm::kObjectiveNoise) / (10 * n * mu) * (r_b / r),
                    1e-12 * sigma2);
      } else {
        double paper1 = std::sqrt(10 * std::log(2 / delta_curve)) * L / (eps / 2);
        double paper2 = std::sqrt(2 * std::log(2.5 / delta_curve)) * 2 * r / (eps / 2);
        const double paper2_b = paper2 * r_b / r;  // the same ratio, at the grown radius
        bool fits =
            dperm::RdpToEpsilon(dperm::LedgerOrders(), Curve(2 * L / paper1, eps_j, 2 * r / paper2),
                                delta_curve) <= eps;
        if (fits) {
          EXPECT_EQ(p.mechanism_fields.Get(dperm::kObjectiveNoise),
                    dperm::DyadicNoiseScale(paper1));
          EXPECT_NEAR(sigma2, paper2_b, 1e-12 * paper2);
        } else {
          EXPECT_NE(p.note.find("calibrated sigmas are used"), std::string::npos);
        }
        std::cout << "[ info ] objective_approx paper eps=" << eps << ": even split "
                  << (fits ? "used" : "replaced") << "\n";
      }
      // SVRG: K = ceil(log2(gap0/(target p_fail))), p_fail = 1e-3 delta/(1 + e^eps)
      // (Markov), expected evaluations K (n + m - 1) + n.
      double smooth = beta + mu;
      int64_t m =
          dperm::SvrgInnerSteps(p.beta + mu, mu);  // p.beta: R^2/4 with R = sqrt 2 in doubles
      EXPECT_NEAR(double(m), std::ceil(50 * smooth / mu), 1.0);
      double g0 = L + p.mechanism_fields.Get(dperm::kObjectiveNoise) * std::sqrt(double(d + 1)) *
                          (1 + std::ldexp(1.0, -21)) / n;
      double gap0 = g0 * g0 / (2 * mu);
      double target = mu * mu * (r / 2) * (r / 2) / (2 * smooth);
      double p_fail = 1e-3 * delta / (1 + std::exp(eps));
      int64_t K = static_cast<int64_t>(std::ceil(std::log2(gap0 / (target * p_fail))));
      EXPECT_LE(std::exp2(-double(K)) * gap0 / target, p_fail);
      EXPECT_EQ(p.iterations, K);
      EXPECT_EQ(p.gradient_evaluations, K * (n + m - 1) + n);
      EXPECT_NEAR(p.step_size, 0.1 / smooth, 1e-15);
      std::cout << "[ info ] objective_approx eps=" << eps << ": r=" << r
                << " sigma1=" << p.mechanism_fields.Get(dperm::kObjectiveNoise)
                << " sigma2=" << p.noise_scale << " epochs=" << K
                << " planned evaluations=" << p.gradient_evaluations << " ("
                << double(p.gradient_evaluations) / n << " passes)\n";
    }
  }
}

// Above epsilon 16 the plan is the epsilon = 16 plan (an (16, delta)-DP
// release is (epsilon, delta)-DP for every epsilon >= 16), charged the
// epsilon given: its failure share 1e-3 delta/(1 + e^epsilon) would
// underflow to 0 at epsilon = 1e4 (which planned one epoch, so the
// certificate failed and nothing was released) and needs ~1.44 epsilon
// epochs before that. The epoch count stays finite and small.
TEST(ObjectiveApproxPlan, LargeEpsilonCalibratesAtSixteen) {
  const int64_t n = 6497;
  const int d = 12;
  Plan at16 =
      PlanRelease(ObjOpts(Algorithm::kObjectiveApprox, 16, 1e-6, 0.01), LossKind::kLogistic, n, d);
  EXPECT_EQ(at16.note.find("calibrated as an"), std::string::npos) << at16.note;
  for (double eps : {17.0, 1e4, 1e300}) {
    Plan p = PlanRelease(ObjOpts(Algorithm::kObjectiveApprox, eps, 1e-6, 0.01), LossKind::kLogistic,
                         n, d);
    SCOPED_TRACE("eps " + std::to_string(eps));
    EXPECT_EQ(p.options.epsilon, eps);
    EXPECT_EQ(p.iterations, at16.iterations);
    EXPECT_LT(p.iterations, 200);
    EXPECT_EQ(p.noise_scale, at16.noise_scale);
    EXPECT_EQ(p.mechanism_fields.Get(dperm::kObjectiveNoise),
              at16.mechanism_fields.Get(dperm::kObjectiveNoise));
    EXPECT_NE(p.note.find("calibrated as an (16, delta)-DP release"), std::string::npos) << p.note;
    EXPECT_FALSE(p.has_rdp);
  }
}

// The shared helper (test_helpers.hpp) on a 100 x 3 plan; softmax gets 3 classes.
void ExpectInvalid(const Options& o, LossKind loss, const std::string& fragment) {
  Options oo = o;
  if (loss == LossKind::kSoftmax) oo.classes = 3;
  dperm::testing::ExpectInvalid(dperm::testing::Planning(oo, loss, 100, 3), fragment);
}

// Softmax (rank up to K-1), Huber (not twice differentiable), delta = 0 and
// the options the algorithms do not use are refused, naming the reason.
TEST(ObjectivePerturbationPlan, Refusals) {
  for (Algorithm a : {Algorithm::kObjective, Algorithm::kObjectiveApprox}) {
    Options o = ObjOpts(a, 1.0, 1e-5);
    ExpectInvalid(o, LossKind::kSoftmax, "rank <= 1");
    ExpectInvalid(o, LossKind::kHuber, "twice-differentiable");
    Options bad = o;
    bad.delta = 0;
    if (a == Algorithm::kObjectiveApprox)
      ExpectInvalid(bad, LossKind::kLogistic, "needs delta > 0");
    bad = o;
    bad.l1 = 0.1;
    ExpectInvalid(bad, LossKind::kLogistic, "\"l1\"");
    bad = o;
    bad.radius = 1;
    ExpectInvalid(bad, LossKind::kLogistic, "\"radius\"");
    bad = o;
    bad.batch_size = 5;
    ExpectInvalid(bad, LossKind::kLogistic, "\"batch_size\"");
    bad = o;
    bad.iterations = 5;
    ExpectInvalid(bad, LossKind::kLogistic, "\"iterations\"");
    bad = o;
    bad.step_size = 0.1;
    ExpectInvalid(bad, LossKind::kLogistic, "\"step_size\"");
    // The Jacobian term alone exceeds a tiny epsilon at tiny n.
    bad = o;
    bad.epsilon = 1e-3;
    bad.feature_bound = 100;
    ExpectInvalid(bad, LossKind::kLogistic, "too small");
  }
}

// dp_explain shows lambda, the noises and the curve's epsilon, and no
// plain-Gaussian accounting for these mechanisms.
TEST(ObjectivePerturbationPlan, Explain) {
  for (Algorithm a : {Algorithm::kObjective, Algorithm::kObjectiveApprox}) {
    Plan p = PlanRelease(ObjOpts(a, 1.0, 1e-5), LossKind::kLogistic, 1000, 4);
    std::string json = dperm::ExplainJson(p);
    EXPECT_NE(json.find("\"objective_lambda\":"), std::string::npos) << json;
    EXPECT_NE(json.find("\"objective_noise\":"), std::string::npos);
    EXPECT_EQ(json.find("\"analytic\":"), std::string::npos) << json;
    EXPECT_EQ(json.find("\"pld\":"), std::string::npos) << json;
    EXPECT_NE(json.find("\"rdp\":"), std::string::npos);
    if (a == Algorithm::kObjectiveApprox) {
      EXPECT_NE(json.find("\"certificate_radius\":"), std::string::npos);
      EXPECT_NE(json.find("\"gradient_evaluations\":"), std::string::npos);
    }
  }
}

}  // namespace
