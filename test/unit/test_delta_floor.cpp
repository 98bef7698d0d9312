// Unit tests of the floor on delta (options.hpp kMinDelta; noise.hpp,
// SAMPLER FAILURE): delta below 1e-30 is refused while parsing; every
// plan's abort and truncation bounds stay below 2^-20 delta at the floor;
// a plan with more draws than the floor covers is refused; and the
// samplers' per-draw constants the bound uses hold (the discrete
// Gaussian's acceptance per proposal, the exact normal's per round).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "dperm/noise/noise.hpp"
#include "dperm/plan/plan_noise.hpp"
#include "dperm/options/options.hpp"
#include "dperm/planning/plan_release.hpp"
#include "test_helpers.hpp"

namespace {

using dperm::Algorithm;
using dperm::LossKind;
using dperm::Options;
using dperm::Plan;

Options Parse(double delta) {
  dperm::OptionEntry e[2] = {dperm::testing::NumberOption("epsilon", 1),
                             dperm::testing::NumberOption("delta", delta)};
  return dperm::ParseOptions(e, 2);
}

TEST(DeltaFloor, OptionsRefuseDeltaBelowTheFloor) {
  for (double delta : {1e-100, 1e-31, 5e-324}) {
    try {
      Parse(delta);
      ADD_FAILURE() << "delta " << delta << " was accepted";
    } catch (const dperm::Error& e) {
      EXPECT_EQ(e.kind(), dperm::ErrorKind::kInvalidParameter);
      EXPECT_NE(std::string(e.what()).find("at least 1e-30"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(Parse(dperm::kMinDelta).delta, 1e-30);
  EXPECT_EQ(Parse(0).delta, 0);
  EXPECT_EQ(Parse(1e-6).delta, 1e-6);
}

// At delta = 1e-30, every algorithm's plan (large n, d and steps) keeps the
// abort probability and the truncation below 2^-20 delta.
TEST(DeltaFloor, EveryPlanAtTheFloorIsDominated) {
  const double log_share = std::log(dperm::kMinDelta) - 20 * std::log(2.0);
  for (Algorithm a : {Algorithm::kOutputGd, Algorithm::kDpSgd, Algorithm::kDpGd, Algorithm::kBolton,
                      Algorithm::kObjective, Algorithm::kDpAccmd, Algorithm::kRrpsgd}) {
    Options o;
    o.epsilon = 1;
    o.delta = dperm::kMinDelta;
    o.l2 = 0.01;
    o.algorithm = a;
    o.has_algorithm = true;
    const Plan p = dperm::PlanRelease(o, LossKind::kLogistic, 1000000, 200);
    EXPECT_GE(dperm::PlannedNoiseDraws(p),
              double(p.dim) * double(std::max<int64_t>(p.noisy_steps, 1)));
    EXPECT_LE(dperm::LogSamplerAbortBound(p), log_share) << dperm::AlgorithmName(a);
    EXPECT_NO_THROW(dperm::CheckDeltaFloor(p));
  }
}

// The bound follows the plan's draws: 10^8 coordinates over 10^12 noisy
// steps (10^20 draws) are not covered at the floor, but are at delta =
// 1e-10; a noise far below the sensitivity is refused by the tail term.
TEST(DeltaFloor, RefusesPlansTheFloorDoesNotCover) {
  Plan p;
  p.dim = 100000000;
  p.noisy_steps = 1000000000000;
  p.options.epsilon = 1;
  p.options.delta = dperm::kMinDelta;
  EXPECT_THROW(dperm::CheckDeltaFloor(p), dperm::Error);
  p.options.delta = 1e-10;
  EXPECT_NO_THROW(dperm::CheckDeltaFloor(p));
  // A noise of sigma below 1/243 of the sensitivity (epsilon in the
  // thousands) reaches the exact normal's cap: refused.
  p.sensitivity = 1;
  p.noise_bits = 20;  // gradient steps: the exact normal
  p.noise_scale = 1.0 / 200;
  EXPECT_NO_THROW(dperm::CheckDeltaFloor(p));
  p.noise_scale = 1.0 / 250;
  EXPECT_THROW(dperm::CheckDeltaFloor(p), dperm::Error);
  p.noise_bits = 0;  // output noise: the exact discrete Gaussian, no cap
  EXPECT_NO_THROW(dperm::CheckDeltaFloor(p));
  p.options.delta = 0;  // pure DP: exact discrete Laplace, no floor
  EXPECT_NO_THROW(dperm::CheckDeltaFloor(p));
}

// The discrete Gaussian's proposal (discrete Laplace of scale t = floor(sigma)
// + 1) is accepted with probability >= 0.38 for every sigma >= 2^10 (the
// grid's minimum), so fewer than 4 proposals are drawn per sample on
// average (each in the 256-bit tail path with probability < 2 exp(-128)).
TEST(DeltaFloor, DiscreteGaussianAcceptsOftenEnough) {
  for (double sigma : {1024.0, 4096.0, 65536.0}) {
    const double t = std::floor(sigma) + 1;
    const double r = std::exp(-1 / t);
    // P[Y = y] = (1 - r)/(1 + r) r^|y|.
    double accept = 0;
    const double c = (1 - r) / (1 + r);
    for (double y = -20 * t; y <= 20 * t; y += 1) {  // a lower bound: terms are >= 0
      const double a = std::fabs(y) - sigma * sigma / t;
      accept += c * std::pow(r, std::fabs(y)) * std::exp(-a * a / (2 * sigma * sigma));
    }
    EXPECT_GE(accept, 0.38) << "sigma " << sigma;
    EXPECT_LT(1 / accept, 4.0);
  }
}

// The discrete Gaussian's far-tail path (256-bit acceptance test, taken
// instead of the old abort) samples the same law: sigma^2 = num/den = 1
// written as 2^62/2^62 sends every proposal |Y| >= 1 through it (t den =
// 2^63), and its frequencies match the exact pmf and the 128-bit path's.
TEST(DeltaFloor, DiscreteGaussianTailPathIsExact) {
  const uint64_t big = uint64_t(1) << 62;
  dperm::SecureRng wide = dperm::SecureRng::FromSeed(5), narrow = dperm::SecureRng::FromSeed(6);
  const int draws = 200000;
  std::vector<int> count_wide(9, 0), count_narrow(9, 0);
  for (int i = 0; i < draws; i++) {
    const __int128 a = dperm::DiscreteGaussian(wide, big, big);
    const __int128 b = dperm::DiscreteGaussian(narrow, 1, 1);
    if (a >= -4 && a <= 4) count_wide[size_t(int(a) + 4)]++;
    if (b >= -4 && b <= 4) count_narrow[size_t(int(b) + 4)]++;
  }
  double z = 0;
  for (int y = -20; y <= 20; y++) z += std::exp(-y * y / 2.0);
  for (int y = -4; y <= 4; y++) {
    const double p = std::exp(-y * y / 2.0) / z;
    const double sd = std::sqrt(p * (1 - p) / draws);
    EXPECT_NEAR(count_wide[size_t(y + 4)] / double(draws), p, 5 * sd + 1e-5) << "y = " << y;
    EXPECT_NEAR(count_narrow[size_t(y + 4)] / double(draws), p, 5 * sd + 1e-5) << "y = " << y;
  }
}

// Karney's Algorithm N: a round proposes k with probability
// (1 - e^-1/2) e^(-k/2), accepts it with e^(-k(k-1)/2) (N2) and then with
// int_0^1 exp(-x (2k + x)/2) dx (N3-N4). The round succeeds with
// probability > 1/3, so a draw takes fewer than 3 rounds on average, each
// aborting (k >= 256) with probability exp(-128).
TEST(DeltaFloor, ExactNormalRoundAcceptsOftenEnough) {
  double accept = 0;
  for (int k = 0; k < 40; k++) {
    double integral = 0;
    const int steps = 20000;
    for (int i = 0; i < steps; i++) {
      const double x = (i + 0.5) / steps;
      integral += std::exp(-x * (2 * k + x) / 2) / steps;
    }
    accept += (1 - std::exp(-0.5)) * std::exp(-k / 2.0) * std::exp(-k * (k - 1) / 2.0) * integral;
  }
  EXPECT_GT(accept, 1.0 / 3);
  EXPECT_LT(1 / accept, 3.0);
  // And the abort per round: P[k >= 256] = exp(-256/2).
  EXPECT_DOUBLE_EQ(std::log(std::exp(-0.5 * 256)), -dperm::kAbortExponent);
}

}  // namespace
