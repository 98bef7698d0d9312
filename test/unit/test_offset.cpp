// The intercept on a private offset (offset.hpp): stage 0's
// budget share and noise against the formulas, the exact budget split, the
// ledger curve, the noise scale by simulation, the shifted loss, the model
// JSON, and what the offset is for: an imbalanced set at tiny epsilon
// predicts the majority class.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "dperm/accounting/budget.hpp"
#include "dperm/losses/loss.hpp"
#include "dperm/model/model.hpp"
#include "dperm/noise/noise.hpp"
#include "dperm/release/decision.hpp"
#include "dperm/release/offset.hpp"
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"
#include "dperm/planning/release_curve.hpp"

namespace dperm::testing {
namespace {

Options Defaults(double epsilon, LossKind loss, int classes = 0) {
  Options o;
  o.epsilon = epsilon;
  o.delta = 1e-6;
  o.has_algorithm = false;
  o.intercept_offset = true;  // as ParseOptions sets it for every release
  o.classes = loss == LossKind::kSoftmax ? classes : 0;
  return o;
}

// epsilon0 = min(epsilon/10, 4 Delta_u / sqrt(n)); the mechanism's share
// and epsilon0 sum to epsilon exactly; the Laplace scale is the L1
// sensitivity over epsilon0 (epsilon0 = min(epsilon/10, 4 Delta_u/sqrt(n))),
// the sensitivity 1 (count), 2 (histogram) or
// 2B (1 + g) (Huber sum, g the grid in units of 2B).
TEST(Offset, PlanMatchesTheFormulas) {
  for (LossKind loss : {LossKind::kLogistic, LossKind::kSoftmax, LossKind::kHuber}) {
    for (int64_t n : {10, 1000, 31648, 1000000}) {
      for (double eps : {0.001, 0.0011, 0.0123, 0.1, 0.3, 1.0, 2.0, 7.7}) {
        Options o = Defaults(eps, loss, 3);
        o.target_bound = 2.5;
        const double du = loss == LossKind::kSoftmax ? 2 : 1;
        const double cap = 0.1;  // Huber at l2 >= 0.1: epsilon/2 (below)
        const double want = std::min(eps * cap, 4 * du / std::sqrt(double(n)));
        const OffsetPlan p = PlanOffset(o, loss, n);
        const dperm::DecisionPlan t = dperm::PlanDecision(o, loss, n, p);
        const Options m = MechanismOptions(o, p, t);
        SCOPED_TRACE(std::string(LossName(loss)) + " n=" + std::to_string(n) +
                     " eps=" + std::to_string(eps));
        EXPECT_EQ(m.epsilon + p.epsilon + t.epsilon,
                  eps);  // exactly, with or without stages 0 and 2
        if (loss != LossKind::kLogistic) {
          EXPECT_EQ(t.epsilon, 0.0);  // stage 2: binary logistic only
        } else if (eps >= 0.1) {      // stage 2 where n epsilon/20 >= 400
          if (double(n) * eps / 20 >= 400 * (1 + 1e-12)) {
            EXPECT_NEAR(t.epsilon, eps / 20, 1e-15 * eps);
          } else if (double(n) * eps / 20 < 400 * (1 - 1e-12)) {
            EXPECT_EQ(t.epsilon, 0.0);
          }
        }
        EXPECT_EQ(m.delta, o.delta);     // the mechanism keeps the whole delta
        if (eps - want < kMinEpsilon) {  // too small to split: no stage 0
          EXPECT_EQ(p.epsilon, 0.0);
          continue;
        }
        EXPECT_NEAR(p.epsilon, want, 1e-15 * eps);
        const double e0 = p.epsilon;
        if (loss == LossKind::kHuber) {
          const double g = p.grid / (2 * o.target_bound);
          // + the exact Huber sum's slack: one grid step SumGrid(1) = 2^-45
          // and n 2^-52 for its rounding to a double (offset.cpp).
          const double slack = std::ldexp(1.0, -45) + std::ldexp(double(n), -52);
          EXPECT_DOUBLE_EQ(p.sensitivity, 2 * o.target_bound * (1 + g + slack));
          EXPECT_LE(g, std::min(1.0, 1 / e0) / 1024);  // inflation <= 2^-10
          EXPECT_GT(g, std::min(1.0, 1 / e0) / 2048);
          EXPECT_LE(1 / e0 / g, MaxGridUnits(NoiseKind::kLaplace));
          EXPECT_DOUBLE_EQ(p.bound, o.target_bound);
        } else {
          EXPECT_EQ(p.sensitivity, du);
          EXPECT_LE(p.grid, 1.0);
          EXPECT_DOUBLE_EQ(p.bound, std::log(2.0 * n + 1));
        }
        EXPECT_DOUBLE_EQ(p.noise_scale, p.sensitivity / e0);
        EXPECT_LE(e0, eps * cap * (1 + 1e-15));
      }
    }
  }
  // Huber at l2 >= 0.1 (a model kept near b0): epsilon0 = min(epsilon/2,
  // 4/sqrt(n)); below 0.1, and for the other losses at any l2, epsilon/10.
  for (double l2 : {0.0, 0.05, 0.1, 1.0}) {
    for (LossKind loss : {LossKind::kHuber, LossKind::kLogistic}) {
      Options o = Defaults(0.1, loss, 3);
      o.l2 = l2;
      o.has_l2 = true;
      const double cap = loss == LossKind::kHuber && l2 >= 0.1 ? 0.5 : 0.1;
      EXPECT_NEAR(PlanOffset(o, loss, 4548).epsilon, std::min(0.1 * cap, 4 / std::sqrt(4548.0)),
                  1e-15)
          << LossName(loss) << " l2 " << l2;
      EXPECT_NEAR(PlanOffset(o, loss, 1000000).epsilon, std::min(0.1 * cap, 4 / std::sqrt(1e6)),
                  1e-15);
    }
  }
  // PlanRelease carries it: the plan's epsilon is the mechanism's share and
  // TotalEpsilon the release's.
  for (LossKind loss : {LossKind::kLogistic, LossKind::kSoftmax, LossKind::kHuber})
    for (double eps : {0.1, 0.7, 3.0}) {
      Plan p = PlanRelease(Defaults(eps, loss, 3), loss, 5000, 4);
      EXPECT_GT(p.offset.epsilon, 0.0);
      EXPECT_EQ(p.options.epsilon, eps - p.offset.epsilon - p.decision.epsilon);
      EXPECT_EQ(TotalEpsilon(p), eps);
    }
}

// No stage 0 without an intercept, when turned off, and in streaming mode.
TEST(Offset, OnlyWithAnInterceptInMemory) {
  Options o = Defaults(1, LossKind::kLogistic);
  EXPECT_GT(PlanRelease(o, LossKind::kLogistic, 1000, 3).offset.epsilon, 0.0);
  o.fit_intercept = false;
  EXPECT_EQ(PlanRelease(o, LossKind::kLogistic, 1000, 3).offset.epsilon, 0.0);
  o.fit_intercept = true;
  o.intercept_offset = false;
  Plan off = PlanRelease(o, LossKind::kLogistic, 1000, 3);
  EXPECT_EQ(off.offset.epsilon, 0.0);
  EXPECT_EQ(off.options.epsilon, 1.0);
}

// The ledger's curve is the mechanism's plus min(e0, alpha e0^2 / 2) per order.
TEST(Offset, LedgerCurveAddsThePureShare) {
  for (double eps : {0.1, 1.0}) {
    for (bool named : {false, true}) {
      Options o = Defaults(eps, LossKind::kLogistic);
      if (named) {
        o.has_algorithm = true;
        o.algorithm = Algorithm::kDpSgd;
      }
      Plan p = PlanRelease(o, LossKind::kLogistic, 5000, 4);
      ASSERT_GT(p.offset.epsilon, 0.0);
      Plan mechanism = p;
      mechanism.offset = OffsetPlan();
      const std::vector<double> with = ReleaseRdpCurve(p), without = ReleaseRdpCurve(mechanism);
      ASSERT_EQ(with.size(), LedgerOrders().size());
      const double e0 = p.offset.epsilon;
      for (size_t i = 0; i < with.size(); i++) {
        const double a = LedgerOrders()[i];
        EXPECT_NEAR(with[i] - without[i], std::min(e0, a * e0 * e0 / 2), 1e-12 * with[i]);
      }
    }
  }
}

// Rows of stride d + 1 = 2: feature 0, then the label.
std::vector<double> LabelRows(const std::vector<double>& labels) {
  std::vector<double> rows;
  for (double y : labels) {
    rows.push_back(0.0);
    rows.push_back(y);
  }
  return rows;
}

// By simulation: the released statistic's noise has the planned discrete
// Laplace scale b (standard deviation sqrt(2) b). Logistic: the count is
// recovered from b0 = logit((S + 1/2)/(n + 1)); Huber: the clipped mean is
// S/n - B. 4000 draws: the sample standard deviation of Laplace noise is
// within 4 % of its value with probability about 0.95; the test allows 10 %.
TEST(Offset, NoiseScaleBySimulation) {
  const int64_t n = 1000;
  const int draws = 4000;
  {
    std::vector<double> labels(n);
    for (int64_t i = 0; i < n; i++) labels[i] = i % 2 == 0 ? 1.0 : -1.0;
    const std::vector<double> rows = LabelRows(labels);
    Plan p = PlanRelease(Defaults(0.5, LossKind::kLogistic), LossKind::kLogistic, n, 1);
    ASSERT_NEAR(p.offset.epsilon, 0.05, 1e-12);  // min(0.05, 4/sqrt(1000) = 0.126)
    SecureRng rng = SecureRng::FromSeed(7);
    double sum = 0, sum_sq = 0;
    for (int k = 0; k < draws; k++) {
      const double b0 = ReleaseOffset(p, rows.data(), rng).at(0);
      const double count = (double(n) + 1) / (1 + std::exp(-b0)) - 0.5;
      const double z = count - double(n) / 2;
      sum += z;
      sum_sq += z * z;
    }
    const double mean = sum / draws, sd = std::sqrt(sum_sq / draws - mean * mean);
    EXPECT_NEAR(sd, std::sqrt(2.0) * p.offset.noise_scale,
                0.10 * std::sqrt(2.0) * p.offset.noise_scale);
    EXPECT_NEAR(mean, 0.0, 5 * std::sqrt(2.0) * p.offset.noise_scale / std::sqrt(double(draws)));
  }
  {
    std::vector<double> targets(n);
    for (int64_t i = 0; i < n; i++) targets[i] = 0.25 * double(i % 5) - 0.5;  // mean 0
    const std::vector<double> rows = LabelRows(targets);
    Options o = Defaults(0.5, LossKind::kHuber);
    o.target_bound = 2;
    Plan p = PlanRelease(o, LossKind::kHuber, n, 1);
    SecureRng rng = SecureRng::FromSeed(8);
    double sum = 0, sum_sq = 0;
    for (int k = 0; k < draws; k++) {
      const double z = ReleaseOffset(p, rows.data(), rng).at(0) * double(n);  // noise of S
      sum += z;
      sum_sq += z * z;
    }
    const double mean = sum / draws, sd = std::sqrt(sum_sq / draws - mean * mean);
    EXPECT_NEAR(sd, std::sqrt(2.0) * p.offset.noise_scale,
                0.10 * std::sqrt(2.0) * p.offset.noise_scale);
  }
}

// The post-processing: logit of the smoothed share, centred log counts, the
// clipped mean; each clamped to the public bound.
TEST(Offset, FromSums) {
  EXPECT_DOUBLE_EQ(OffsetFromSums(LossKind::kLogistic, {99.5}, 999, 1).at(0),
                   std::log(100.0 / 900.0));
  const double hi = OffsetFromSums(LossKind::kLogistic, {1e9}, 10, 1).at(0);
  EXPECT_DOUBLE_EQ(hi, std::log(2.0 * 10 + 1) - std::log(1.0));  // logit(1 - 1/(2(n+1)))
  EXPECT_DOUBLE_EQ(OffsetFromSums(LossKind::kLogistic, {-50}, 10, 1).at(0), -hi);
  std::vector<double> b = OffsetFromSums(LossKind::kSoftmax, {9.5, 29.5, -3}, 40, 1);
  const double l0 = std::log(10.0), l1 = std::log(30.0), l2 = std::log(0.5), m = (l0 + l1 + l2) / 3;
  EXPECT_DOUBLE_EQ(b[0], l0 - m);
  EXPECT_DOUBLE_EQ(b[1], l1 - m);
  EXPECT_DOUBLE_EQ(b[2], l2 - m);
  EXPECT_DOUBLE_EQ(OffsetFromSums(LossKind::kHuber, {130}, 100, 1).at(0), 0.3);
  EXPECT_DOUBLE_EQ(OffsetFromSums(LossKind::kHuber, {900}, 100, 2).at(0), 2.0);
}

// A shifted margin: values are the inner loss's at m + b0, the bounds (L,
// beta) unchanged.
TEST(Offset, ShiftedLossKeepsTheConstants) {
  Options o;
  o.huber_delta = 0.3;
  for (LossKind kind : {LossKind::kLogistic, LossKind::kHuber}) {
    std::unique_ptr<Loss> inner = MakeLoss(kind, o);
    std::unique_ptr<Loss> shifted = ShiftLoss(MakeLoss(kind, o), -1.7);
    EXPECT_EQ(shifted->Lipschitz(2.0), inner->Lipschitz(2.0));
    EXPECT_EQ(shifted->Smoothness(2.0), inner->Smoothness(2.0));
    for (double m : {-3.0, 0.0, 0.4, 2.5})
      for (double y : {-1.0, 1.0}) {
        EXPECT_EQ(shifted->Value(m, y), inner->Value(m - 1.7, y));
        EXPECT_EQ(shifted->Derivative(m, y), inner->Derivative(m - 1.7, y));
        EXPECT_EQ(shifted->Curvature(m, y), inner->Curvature(m - 1.7, y));
      }
    // The block kernel (a full pass's) gives Derivative's values, in place
    // and not, over 4k + 3 rows (the vector lanes and the tail).
    std::vector<double> m, y, out(43);
    for (int i = 0; i < 43; i++) {
      m.push_back(-9 + 0.43 * i);
      y.push_back(i % 3 ? 1.0 : -1.0);
    }
    shifted->Derivatives(m.data(), y.data(), 1, 43, out.data());
    std::vector<double> in_place = m;
    shifted->Derivatives(in_place.data(), y.data(), 1, 43, in_place.data());
    for (int i = 0; i < 43; i++) {
      EXPECT_EQ(out[size_t(i)], shifted->Derivative(m[size_t(i)], y[size_t(i)])) << i;
      EXPECT_EQ(in_place[size_t(i)], out[size_t(i)]) << i;
    }
  }
}

// The model JSON records b0 and reads it back.
TEST(Offset, ModelJsonRecordsTheOffset) {
  Plan p = PlanRelease(Defaults(1, LossKind::kLogistic), LossKind::kLogistic, 100, 2);
  std::vector<double> b0 = {-1.25};
  ModelMeta meta;
  meta.offset = &b0;
  const std::string json = ModelJson(p, {0.5, -0.5, 0.75}, meta);
  EXPECT_NE(json.find("\"offset\":-1.25"), std::string::npos) << json;
  EXPECT_NE(json.find("\"epsilon\":1,"), std::string::npos) << json;  // the total
  ModelFields f = ParseModelJson(json, 1000);
  ASSERT_EQ(f.offset.size(), 1u);
  EXPECT_EQ(f.offset[0], -1.25);
  EXPECT_EQ(f.w[2], 0.75);  // the intercept already includes b0
  ModelMeta none;
  EXPECT_TRUE(ParseModelJson(ModelJson(p, {0.5, -0.5, 0.75}, none), 1000).offset.empty());
}

// n rows of d features uniform in [-1, 1]^d, each scaled into the unit ball,
// then label(i, x before scaling, rng): the generator keyed by seed draws the
// features first, then whatever label draws.
std::vector<double> UniformBallRows(
    int64_t n, int d, uint64_t seed,
    const std::function<double(int64_t, const double*, SecureRng&)>& label) {
  SecureRng rng = SecureRng::FromSeed(seed);
  std::vector<double> rows;
  std::vector<double> x(static_cast<size_t>(d));
  for (int64_t i = 0; i < n; i++) {
    double norm = 0;
    for (int j = 0; j < d; j++) {
      x[size_t(j)] = 2 * rng.Uniform01() - 1;
      norm += x[size_t(j)] * x[size_t(j)];
    }
    norm = std::max(1.0, std::sqrt(norm));
    for (int j = 0; j < d; j++) rows.push_back(x[size_t(j)] / norm);
    rows.push_back(label(i, x.data(), rng));
  }
  return rows;
}

// What the offset is for: 10 % positives, features that carry no signal,
// epsilon = 0.05 (epsilon0 = 0.005: the count's noise has scale 200 on 400
// positives, so b0 is rough). With the offset every seed's model predicts
// the majority class for at least 90 % of the rows (the majority share;
// measured when added: 0.939 to 1.000); without it (intercept
// shrunk toward logit 1/2 and noised like a weight) some seeds fall below
// the majority share 0.9 -- measured when added: 0.887 at seeds 1 and 2.
TEST(Offset, ImbalancedSetPredictsTheMajorityAtTinyEpsilon) {
  const int64_t n = 4000;
  const int d = 3;
  const std::vector<double> rows = UniformBallRows(
      n, d, 3, [](int64_t i, const double*, SecureRng&) { return i % 10 == 0 ? 1.0 : -1.0; });
  double worst_without = 1;
  for (uint64_t seed = 1; seed <= 5; seed++) {
    for (bool offset : {true, false}) {
      Options o = Defaults(0.05, LossKind::kLogistic);
      o.intercept_offset = offset;
      Plan p = PlanRelease(o, LossKind::kLogistic, n, d);
      SecureRng rng = SecureRng::FromSeed(seed);
      std::vector<double> b0;
      std::vector<double> w = TrainModel(p, rows.data(), rng, &b0);
      int64_t majority = 0;
      for (int64_t i = 0; i < n; i++) {
        double m = w[d];
        for (int j = 0; j < d; j++) m += w[j] * rows[size_t(i) * (d + 1) + j];
        majority += m < 0;
      }
      const double share = double(majority) / double(n);
      std::printf("seed %d offset %d: intercept %.3f, b0 %s, majority predictions %.3f\n",
                  int(seed), int(offset), w[d], b0.empty() ? "-" : std::to_string(b0[0]).c_str(),
                  share);
      if (offset) {
        ASSERT_EQ(b0.size(), 1u);
        EXPECT_LT(b0[0], 0.0);  // the majority side
        EXPECT_GE(share, 0.9);
      } else {
        EXPECT_TRUE(b0.empty());
        worst_without = std::min(worst_without, share);
      }
    }
  }
  EXPECT_LT(worst_without, 0.9);
}

// ---- Stage 2: the private decision threshold (decision.hpp) --------------

// The grid: logit(0.05 k), k = 1..19, ascending, 0 exactly in the middle.
TEST(Decision, ThresholdGrid) {
  const std::vector<double> t = DecisionThresholds();
  ASSERT_EQ(t.size(), 19u);
  for (size_t k = 0; k < t.size(); k++) {
    const double p = 0.05 * double(k + 1);
    EXPECT_NEAR(t[k], std::log(p / (1 - p)), 1e-12);
    if (k > 0) {
      EXPECT_LT(t[k - 1], t[k]);
    }
  }
  EXPECT_EQ(t[9], 0.0);
}

// Only binary logistic models fitted on the offset, in memory: epsilon/20,
// scale 2/epsilon_t, the head start ceil(scale ln 19); the plan JSON and the
// ledger's curve state it (min(e_t, alpha e_t^2/2) per order, as stage 0).
TEST(Decision, PlanAndCurve) {
  Options o = Defaults(1, LossKind::kLogistic);
  Plan p = PlanRelease(o, LossKind::kLogistic, 20000, 4);
  ASSERT_GT(p.decision.epsilon, 0.0);
  // n epsilon_t = 400 runs it, one row fewer does not (public n and epsilon).
  EXPECT_GT(PlanRelease(o, LossKind::kLogistic, 8000, 4).decision.epsilon, 0.0);
  EXPECT_EQ(PlanRelease(o, LossKind::kLogistic, 7999, 4).decision.epsilon, 0.0);
  EXPECT_NEAR(p.decision.epsilon, 0.05, 1e-15);
  EXPECT_EQ(p.options.epsilon + p.offset.epsilon + p.decision.epsilon, 1.0);
  EXPECT_EQ(TotalEpsilon(p), 1.0);
  EXPECT_NEAR(p.decision.noise_scale, 2 / p.decision.epsilon, 1e-12);
  EXPECT_EQ(p.decision.bonus, std::ceil(p.decision.noise_scale * std::log(19.0)));
  const std::string json = PlanJson(p);
  EXPECT_NE(json.find("\"decision\":{\"epsilon\":0.05"), std::string::npos) << json;
  Plan without = p;
  without.decision = DecisionPlan();
  const std::vector<double> with = ReleaseRdpCurve(p), base = ReleaseRdpCurve(without);
  const double e = p.decision.epsilon;
  for (size_t i = 0; i < with.size(); i++) {
    const double a = LedgerOrders()[i];
    EXPECT_NEAR(with[i] - base[i], std::min(e, a * e * e / 2), 1e-12 * with[i]);
  }
  for (LossKind loss : {LossKind::kHuber, LossKind::kSoftmax}) {
    Options q = Defaults(1, loss, 3);
    EXPECT_EQ(PlanRelease(q, loss, 20000, 4).decision.epsilon, 0.0);
  }
  o.intercept_offset = false;
  EXPECT_EQ(PlanRelease(o, LossKind::kLogistic, 20000, 4).decision.epsilon, 0.0);
  o.intercept_offset = true;
  o.fit_intercept = false;
  EXPECT_EQ(PlanRelease(o, LossKind::kLogistic, 20000, 4).decision.epsilon, 0.0);
}

// Rows of one feature x and label y (+1 / -1), for a model w = (1, c):
// margin x + c.
std::vector<double> OneFeatureRows(const std::vector<std::pair<double, double>>& xy) {
  std::vector<double> rows;
  for (const auto& [x, y] : xy) {
    rows.push_back(x);
    rows.push_back(y);
  }
  return rows;
}

// The choice: with little noise (epsilon_t = 10) the threshold that
// classifies the most rows correctly wins -- logit(0.2) when every row with
// margin above it is positive and every row below negative -- and the
// model as trained (0) when that is the best.
TEST(Decision, PicksTheMostAccurateThreshold) {
  const std::vector<double> t = DecisionThresholds();
  Options o = Defaults(200, LossKind::kLogistic);  // epsilon_t = 10
  std::vector<std::pair<double, double>> xy;
  for (int i = 0; i < 400; i++) {
    const double m = -3 + 6 * (i + 0.5) / 400;  // margins spread over [-3, 3]
    xy.push_back({m, m > t[3] ? 1.0 : -1.0});   // the truth cuts at logit(0.2)
  }
  std::vector<double> rows = OneFeatureRows(xy);
  Plan p = PlanRelease(o, LossKind::kLogistic, int64_t(xy.size()), 1);
  ASSERT_GT(p.decision.epsilon, 0.0);
  for (uint64_t seed = 1; seed <= 5; seed++) {
    SecureRng rng = SecureRng::FromSeed(seed);
    EXPECT_EQ(ReleaseDecisionThreshold(p, rows.data(), {1.0, 0.0}, rng), t[3]);
  }
  for (auto& r : xy) r.second = r.first > 0 ? 1.0 : -1.0;  // now 0 is right
  rows = OneFeatureRows(xy);
  for (uint64_t seed = 1; seed <= 5; seed++) {
    SecureRng rng = SecureRng::FromSeed(seed);
    EXPECT_EQ(ReleaseDecisionThreshold(p, rows.data(), {1.0, 0.0}, rng), 0.0);
  }
}

// Privacy by simulation: two tables differing in one row, placed where it
// flips the counts the most (it moves every count by one), at epsilon_t =
// 1; every threshold's frequency ratio stays within e^epsilon_t up to the
// simulation's error, while the ratio at the widest-moved threshold is not
// trivially 1 (the test can see the shift; with a quarter of the noise it
// fails, checked when written).
TEST(Decision, NeighboursChooseWithinEpsilon) {
  // The mechanism itself at epsilon_t = 1 on 60 rows (PlanDecision would
  // not run it at n epsilon_t = 60: a plan built by hand).
  Plan p = PlanRelease(Defaults(20, LossKind::kLogistic), LossKind::kLogistic, 60, 1);
  p.decision.epsilon = 1;
  p.decision.noise_scale = 2;
  p.decision.thresholds = DecisionThresholds();
  p.decision.bonus = std::ceil(2 * std::log(19.0));
  std::vector<std::pair<double, double>> xy;
  for (int i = 0; i < 60; i++) {
    const double m = -3 + 6 * (i + 0.5) / 60;
    xy.push_back({m, (i * 7) % 5 < 2 ? 1.0 : -1.0});  // a mixed, weakly ranked table
  }
  xy[0] = {-4.0, 1.0};  // a positive below every threshold: wrong at each
  std::vector<double> d1 = OneFeatureRows(xy);
  xy[0] = {4.0, 1.0};  // ... or above every threshold: right at each
  std::vector<double> d2 = OneFeatureRows(xy);
  const int draws = 60000;
  auto frequencies = [&](const std::vector<double>& rows, uint64_t seed) {
    std::vector<double> f(19, 0.0);
    SecureRng rng = SecureRng::FromSeed(seed);
    const std::vector<double> t = DecisionThresholds();
    for (int i = 0; i < draws; i++) {
      const double c = ReleaseDecisionThreshold(p, rows.data(), {1.0, 0.0}, rng);
      f[size_t(std::find(t.begin(), t.end(), c) - t.begin())] += 1.0 / draws;
    }
    return f;
  };
  const std::vector<double> f1 = frequencies(d1, 11), f2 = frequencies(d2, 12);
  double widest = 1;
  for (int k = 0; k < 19; k++) {
    if (f1[k] < 0.01 || f2[k] < 0.01) continue;  // too rare to estimate a ratio
    const double ratio = std::max(f1[k] / f2[k], f2[k] / f1[k]);
    const double se = 4 * std::sqrt(1 / (f1[k] * draws) + 1 / (f2[k] * draws));
    EXPECT_LE(std::log(ratio), 1.0 + se) << "threshold " << k;
    widest = std::max(widest, ratio);
  }
  EXPECT_GT(std::log(widest), 0.05);
}

// TrainModel: the same seed with and without stage 2 releases the same
// weights (stage 2 draws after the mechanism), and the intercepts differ by
// exactly one of the grid's thresholds.
TEST(Decision, TrainModelShiftsOnlyTheIntercept) {
  const int64_t n = 5000;  // n epsilon_t = 500
  const int d = 3;
  const std::vector<double> rows =
      UniformBallRows(n, d, 8, [](int64_t, const double* x, SecureRng& rng) {
        return x[0] + 0.3 * (rng.Uniform01() - 0.5) > 0.4 ? 1.0 : -1.0;
      });
  Plan p = PlanRelease(Defaults(2, LossKind::kLogistic), LossKind::kLogistic, n, d);
  ASSERT_GT(p.decision.epsilon, 0.0);
  Plan q = p;
  q.decision = DecisionPlan();
  const std::vector<double> t = DecisionThresholds();
  for (uint64_t seed = 1; seed <= 4; seed++) {
    SecureRng r1 = SecureRng::FromSeed(seed), r2 = SecureRng::FromSeed(seed);
    const std::vector<double> a = TrainModel(p, rows.data(), r1),
                              b = TrainModel(q, rows.data(), r2);
    for (int j = 0; j < d; j++) EXPECT_EQ(a[size_t(j)], b[size_t(j)]);
    const double shift = b[d] - a[d];
    EXPECT_TRUE(std::any_of(t.begin(), t.end(), [&](double v) {
      return std::abs(v - shift) < 1e-12;
    })) << shift;
  }
}

}  // namespace
}  // namespace dperm::testing
