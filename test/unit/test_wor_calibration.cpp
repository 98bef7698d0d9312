// The sampled-step algorithms' calibration: each step
// adds the rounded exact Gaussian (noise.hpp), so the plan calibrates with
// the PLD of the Zhu-Dong-Wang dominating pair (pld_wor.hpp). Checked at the
// issue's paper settings against the attainable lower bound
// (LowerBoundWorGaussianSigma), computed here independently of the plan.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "dperm/accounting/budget.hpp"
#include "dperm/noise/noise.hpp"
#include "dperm/accounting/pld_wor.hpp"
#include "dperm/accounting/rdp.hpp"
#include "dperm/accounting/rdp_wor.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/planning/release_curve.hpp"
#include "noisy_sgd_support.hpp"

namespace dperm {
namespace {

struct Setting {
  double q;
  int64_t steps;
  double eps;
};
const double kDelta = 1e-5;
const Setting kPaperSettings[] = {{0.01, 1000, 1.0}, {0.1, 100, 1.0}, {0.1, 100, 2.0}};

// A plan with sampling rate q and T steps: n = 1000 rows and batch_size qn
// (rrpsgd, one row per step: n = 1/q).
Plan SampledPlan(Algorithm a, const Setting& s) {
  Options o = testing::SgdOpts(a, LossKind::kLogistic, s.eps, kDelta, 0.01);
  o.iterations = s.steps;
  int64_t n = 1000;
  if (a == Algorithm::kRrpsgd) {
    n = int64_t(std::llround(1 / s.q));
  } else {
    o.batch_size = int64_t(std::llround(s.q * double(n)));
  }
  return PlanRelease(o, LossKind::kLogistic, n, 4);
}

TEST(WorCalibration, SampledAlgorithmsWithinTargetOfTheLowerBound) {
  for (const Setting& s : kPaperSettings) {
    const double lb = LowerBoundWorGaussianSigma(s.q, s.steps, s.eps, kDelta);
    for (Algorithm a : {Algorithm::kDpSgd, Algorithm::kDpLssgd, Algorithm::kRrpsgd}) {
      const Plan p = SampledPlan(a, s);
      const std::string what = std::string(AlgorithmName(a)) + " q=" + std::to_string(s.q) +
                               " T=" + std::to_string(s.steps) + " eps=" + std::to_string(s.eps);
      ASSERT_EQ(p.noisy_steps, s.steps) << what;
      ASSERT_DOUBLE_EQ(p.sampling_rate, s.q) << what;
      const double z = p.noise_multiplier;  // sigma / C', C' the rounded contribution
      std::printf("%s: sigma/C %.4f, lower bound %.4f, ratio %.3f\n", what.c_str(), z, lb, z / lb);
      EXPECT_GE(z, lb) << what;
      EXPECT_LE(z, 1.25 * lb) << what;
      // The PLD at the plan's own multiplier meets the target (an upper bound).
      EXPECT_LE(EpsilonWorGaussianPld(s.q, z, s.steps, kDelta), s.eps * (1 + 1e-9)) << what;
      // The step noise is the rounded exact Gaussian on the grid sigma 2^-b.
      EXPECT_GE(p.noise_bits, 10) << what;
      EXPECT_EQ(p.grid, std::ldexp(p.noise_scale, -p.noise_bits)) << what;
      EXPECT_NE(p.sampler.find("exact Gaussian"), std::string::npos) << p.sampler;
      // sensitivity = 2 (C + sqrt(dim) u), C = (L + sum_slack) / m (the
      // sums' rounding, exact_sum.hpp).
      const double c = (p.L + p.sum_slack) / double(p.batch_size);
      EXPECT_DOUBLE_EQ(p.sensitivity, 2 * (c + std::sqrt(double(p.dim)) * p.grid)) << what;
      EXPECT_LE(std::sqrt(double(p.dim)) * p.grid, std::ldexp(c, -10) * (1 + 1e-9)) << what;
    }
  }
}

// The ledger's curve is the dominating pair's RDP at the plan's multiplier:
// a sound bound (never below the lower bound of a real neighbouring pair),
// and the ledger's composition of the release alone is its (epsilon, delta).
TEST(WorCalibration, StoredCurveIsSoundAndTheLedgerChargesTheClaim) {
  const std::vector<double>& orders = LedgerOrders();
  for (const Setting& s : kPaperSettings) {
    const Plan p = SampledPlan(Algorithm::kDpSgd, s);
    const std::vector<double> curve = ReleaseRdpCurve(p);
    ASSERT_EQ(curve.size(), orders.size());
    const double z = p.noise_multiplier;
    for (size_t i = 0; i < orders.size(); ++i)  // the pair's RDP at <= the plan's multiplier
      EXPECT_GE(curve[i], double(s.steps) * RdpWorGaussian(s.q, z, orders[i]) * (1 - 1e-9));
    const double curve_eps = RdpToEpsilon(orders, curve, kDelta);
    EXPECT_GE(curve_eps, EpsilonWorGaussianLowerBound(s.q, z, s.steps, kDelta));
    // RDP conversion is lossier than the PLD: within 15% of the target here.
    EXPECT_LE(curve_eps, 1.15 * s.eps);
    std::printf("q=%g T=%lld eps=%g: the stored curve converts to eps %.4f\n", s.q,
                (long long)s.steps, s.eps, curve_eps);
    Charge c;
    c.epsilon = p.options.epsilon;
    c.delta = p.options.delta;
    c.rdp = curve.data();
    const Spent one = ComposeCharges(true, kDelta, {c});
    EXPECT_LE(one.epsilon, s.eps * (1 + 1e-12));
    // Two releases compose in RDP below the sum of their claims.
    const Spent two = ComposeCharges(true, 2 * kDelta, {c, c});
    EXPECT_LE(two.epsilon, 2 * s.eps * (1 + 1e-12));
  }
}

// Full batch (dp_gd, dp_accmd: q = 1): the step is the Gaussian mechanism,
// and T steps are the Gaussian mechanism with mu = sqrt(T) 2/z (Dong, Roth
// & Su 2022, Cor. 2): the calibrated z meets (epsilon, delta) exactly by the
// analytic Gaussian delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).
TEST(WorCalibration, FullBatchMatchesTheAnalyticGaussian) {
  for (Algorithm a : {Algorithm::kDpGd, Algorithm::kDpAccmd}) {
    Options o = testing::SgdOpts(a, LossKind::kLogistic, 1.0, kDelta, 0.01);
    o.iterations = 50;
    const Plan p = PlanRelease(o, LossKind::kLogistic, 2000, 4);
    ASSERT_EQ(p.sampling_rate, 1.0);
    const double mu = std::sqrt(double(p.noisy_steps)) * 2 / p.noise_multiplier;
    auto phi = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
    const double delta = phi(-1 / mu + mu / 2) - std::exp(1.0) * phi(-1 / mu - mu / 2);
    std::printf("%s: T=%lld sigma/C %.4f, analytic delta at eps 1: %.3g\n", AlgorithmName(a),
                (long long)p.noisy_steps, p.noise_multiplier, delta);
    EXPECT_LE(delta, kDelta);
    EXPECT_GE(delta, 0.5 * kDelta);  // tight (an RDP calibration gives ~10x less)
    EXPECT_GE(p.noise_bits, 10);
  }
}

}  // namespace
}  // namespace dperm
