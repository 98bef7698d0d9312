// DefaultL2 (include/dperm/planning/plan_release.hpp): the l2 a release
// uses when neither `l2` nor `algorithm` is given. The values below are
// worked out by hand from the rule's formula; the plans check that the
// rule's l2 reaches the mechanism, dp_explain and the model's plan, and
// that `l2 => 0` given keeps the unregularised default.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "dperm/planning/explain.hpp"
#include "dperm/options/options.hpp"
#include "dperm/release/streaming.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/planning/plan_release.hpp"
#include "test_helpers.hpp"

namespace {

using dperm::Algorithm;
using dperm::DefaultL2;
using dperm::LossKind;
using dperm::OptionEntry;
using dperm::Options;
using dperm::Plan;
using dperm::testing::NumberOption;

// A release as SQL parses it: epsilon, delta and the entries given.
Options Parsed(double epsilon, double delta, std::vector<OptionEntry> more = {}) {
  std::vector<OptionEntry> e = {NumberOption("epsilon", epsilon), NumberOption("delta", delta)};
  e.insert(e.end(), more.begin(), more.end());
  return dperm::ParseOptions(e.data(), int(e.size()));
}

double Rule(LossKind loss, double epsilon, double delta, int64_t n, int d, bool streaming = false,
            std::string* why = nullptr) {
  Options o = Parsed(epsilon, delta);
  return DefaultL2(loss, o, n, d, streaming, why);
}

TEST(DefaultL2, ValuesByHand) {
  // Logistic, delta > 0: sqrt(d) / (n epsilon) (kDefaultL2Objective = 1).
  //   BANK's training split, n = 31648, d = 42, epsilon = 1:
  //     sqrt(42) = 6.480741; 6.480741 / 31648 = 2.04776e-4.
  //   n = 31648, epsilon = 2: 1.02388e-4.
  //   n = 20000, d = 10, epsilon = 0.5: sqrt(10) / 10000 = 3.162278e-4.
  EXPECT_NEAR(Rule(LossKind::kLogistic, 1, 1e-6, 31648, 42), 2.04776e-4, 1e-9);
  EXPECT_NEAR(Rule(LossKind::kLogistic, 2, 1e-6, 31648, 42), 1.02388e-4, 1e-9);
  EXPECT_NEAR(Rule(LossKind::kLogistic, 0.5, 1e-6, 20000, 10), 3.162278e-4, 1e-9);
  //   Above kDefaultL2ObjectiveMax = 1e-3, 0 (dp_gd): BANK at epsilon = 0.1,
  //     6.480741 / 3164.8 = 2.04776e-3; n = 1000, d = 10, epsilon = 0.5:
  //     3.162278 / 500 = 6.3e-3.
  std::string why;
  EXPECT_EQ(Rule(LossKind::kLogistic, 0.1, 1e-6, 31648, 42, false, &why), 0.0);
  EXPECT_NE(why.find("0 (dp_gd) (objective needing more l2"), std::string::npos) << why;
  EXPECT_EQ(Rule(LossKind::kLogistic, 0.5, 1e-6, 1000, 10), 0.0);
  //   n = 10^7, d = 10, epsilon = 1: sqrt(10) / 10^7 = 3.2e-7, raised to
  //     kDefaultL2Min = 1e-6; objective's schedule would need T n > 8e7 row
  //     gradients (T ~ 26 sqrt(beta / l2) = 26 sqrt(0.5 / 1e-6) ~ 18000), so
  //     the rule gives 0 and DefaultAlgorithm dp_gd.
  EXPECT_EQ(Rule(LossKind::kLogistic, 1, 1e-6, 10000000, 10, false, &why), 0.0);
  EXPECT_NE(why.find("0 (dp_gd)"), std::string::npos) << why;
  // Logistic, delta = 0: 0.2 d / (n epsilon) (kDefaultL2PureObjective,
  // objective with the Gamma-norm b) while that is <= 2e-3 (n epsilon >=
  // 100 d) and objective runs there; below, down to n epsilon = 5 d, the
  // window rule 4.5 sqrt(d) / (n epsilon) (objective); else bolton's
  // 150 / (n epsilon), at most 1.
  //   n = 10000, d = 5, epsilon = 1: 0.2 * 5 / 10000 = 1e-4.
  //   n = 31648, d = 42, epsilon = 2: 0.2 * 42 / 63296 = 8.4 / 63296 = 1.327098e-4.
  //   n = 5000, d = 100, epsilon = 0.5: n epsilon = 2500 = 25 d: the window,
  //     4.5 * 10 / 2500 = 0.018.
  //   n = 22790, d = 100, epsilon = 0.1 (ADULT's training split): n epsilon
  //     = 2279: 45 / 2279 = 0.01974550.
  //   n = 100, d = 5, epsilon = 0.5: n epsilon = 50 = 10 d: 4.5 sqrt(5) / 50
  //     = 0.2012461.
  //   n = 2500, d = 50, epsilon = 0.1: n epsilon = 250 = 5 d, the window's
  //     edge: 4.5 sqrt(50) / 250 = 0.1272792.
  //   n = 2400, d = 50, epsilon = 0.1: n epsilon = 240 < 5 d: bolton's
  //     150 / 240 = 0.625.
  EXPECT_NEAR(Rule(LossKind::kLogistic, 1, 0, 10000, 5), 1e-4, 1e-15);
  EXPECT_NEAR(Rule(LossKind::kLogistic, 2, 0, 31648, 42), 1.327098e-4, 1e-9);
  EXPECT_NEAR(Rule(LossKind::kLogistic, 0.5, 0, 5000, 100, false, &why), 0.018, 1e-12);
  EXPECT_NE(why.find("5 d <= n epsilon < 100 d: 4.5 sqrt(d) / (n epsilon)"), std::string::npos)
      << why;
  EXPECT_NE(why.find("(objective, the intercept fitted as a coordinate: no stage 0)"),
            std::string::npos)
      << why;
  EXPECT_NEAR(Rule(LossKind::kLogistic, 0.1, 0, 22790, 100), 0.01974550, 1e-8);
  EXPECT_NEAR(Rule(LossKind::kLogistic, 0.5, 0, 100, 5), 0.2012461, 1e-7);
  EXPECT_NEAR(Rule(LossKind::kLogistic, 0.1, 0, 2500, 50, false, &why), 0.1272792, 1e-7);
  EXPECT_NE(why.find("(objective, the intercept fitted"), std::string::npos) << why;
  EXPECT_NEAR(Rule(LossKind::kLogistic, 0.1, 0, 2400, 50, false, &why), 0.625, 1e-12);
  EXPECT_NE(why.find("(bolton's rule)"), std::string::npos) << why;
  // Between 100 d and 300 d (kPureBlendNEPerD), the constant is the
  // geometric blend (4.5 sqrt(d))^(1 - t) (0.2 d)^t, t = log(n epsilon /
  // (100 d)) / log 3, the intercept fitted as in the window:
  //   ADULT's shape at epsilon = 0.5, n = 22790, d = 100: n epsilon = 11395,
  //     t = ln(1.1395) / ln(3) = 0.1188677; 45^(1 - t) 20^t = 40.86480;
  //     l2 = 40.86480 / 11395 = 3.586204e-3.
  //   epsilon = 1: n epsilon = 22790, t = ln(2.279) / ln(3) = 0.7497975;
  //     24.49892 / 22790 = 1.074986e-3.
  //   n = 10000, d = 50, epsilon = 1: n epsilon = 200 d, t = ln 2 / ln 3
  //     = 0.6309298; 31.81981^(1 - t) 10^t = 15.32960; l2 = 1.532960e-3.
  EXPECT_NEAR(Rule(LossKind::kLogistic, 0.5, 0, 22790, 100, false, &why), 3.586204e-3, 1e-9);
  EXPECT_NE(why.find("100 d <= n epsilon < 300 d: (4.5 sqrt(d))^(1 - t) (0.2 d)^t"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("(objective, the intercept fitted as a coordinate: no stage 0)"),
            std::string::npos)
      << why;
  EXPECT_NEAR(Rule(LossKind::kLogistic, 1, 0, 22790, 100), 1.074986e-3, 1e-9);
  EXPECT_NEAR(Rule(LossKind::kLogistic, 1, 0, 10000, 50), 1.532960e-3, 1e-9);
  //   The edges: continuous at 100 d (the window's 4.5 sqrt(d)) and at 300 d
  //     (0.2 d): d = 50, n epsilon = 5000 (t = 0) and 15000 (the objective
  //     rule, 10 / 15000), each against the value just across the edge.
  const double at100 = Rule(LossKind::kLogistic, 1, 0, 5000, 50);
  EXPECT_NEAR(at100, 4.5 * std::sqrt(50.0) / 5000, 1e-15);
  EXPECT_NEAR(Rule(LossKind::kLogistic, 1, 0, 4999, 50) / at100, 5000.0 / 4999,
              1e-12);  // the window
  const double at300 = Rule(LossKind::kLogistic, 1, 0, 15000, 50, false, &why);
  EXPECT_NEAR(at300, 10.0 / 15000, 1e-15);
  EXPECT_EQ(why.find("fitted"), std::string::npos) << why;  // stage 0 from 300 d on
  // one row fewer: 15000 / 14999 times 3.18198^(ln(15000 / 14999) / ln 3) = 1.000137
  EXPECT_NEAR(Rule(LossKind::kLogistic, 1, 0, 14999, 50) / at300, 1.000137,
              1e-6);  // the blend, t -> 1
  //   n = 10^7, d = 10, epsilon = 1: 0.2 * 10 / 10^7 = 2e-7, raised to 1e-6,
  //     beyond objective's work cap (as at delta > 0): bolton's 150 / 10^7 = 1.5e-5.
  EXPECT_NEAR(Rule(LossKind::kLogistic, 1, 0, 10000000, 10, false, &why), 1.5e-5, 1e-15);
  EXPECT_NE(why.find("where objective does not run"), std::string::npos) << why;
  // Huber: bolton at min(100 / (n epsilon) max(1, 300 d / (n epsilon)), 1)
  // at delta = 0, and at delta > 0 while n epsilon < 1000; else 0 (dp_gd).
  //   n = 100000, epsilon = 1, d = 10, delta = 0: 300 d / (n epsilon) = 0.03 < 1:
  //     100 / 10^5 = 1e-3.
  //   n = 12165, epsilon = 1, d = 53, delta = 0: 300 * 53 / 12165 = 1.30703:
  //     100 * 300 * 53 / 12165^2 = 0.01074417.
  //   n = 4548, epsilon = 0.1, d = 12, delta = 1e-6: n epsilon = 454.8 < 1000:
  //     100 * 300 * 12 / 454.8^2 = 1.7405 -> 1.
  //   n = 10000, epsilon = 0.1, delta = 1e-6: n epsilon = 1000: dp_gd's 0.
  EXPECT_NEAR(Rule(LossKind::kHuber, 1, 0, 100000, 10), 1e-3, 1e-15);
  EXPECT_NEAR(Rule(LossKind::kHuber, 1, 0, 12165, 53, false, &why), 0.0107441707, 1e-9);
  EXPECT_NE(why.find("bolton"), std::string::npos) << why;
  EXPECT_EQ(Rule(LossKind::kHuber, 0.1, 1e-6, 4548, 12), 1.0);
  EXPECT_EQ(Rule(LossKind::kHuber, 0.1, 1e-6, 10000, 12), 0.0);
  EXPECT_EQ(Rule(LossKind::kHuber, 1, 1e-6, 12165, 53), 0.0);
  // No l2: softmax, streaming mode, l1 given.
  EXPECT_EQ(Rule(LossKind::kSoftmax, 1, 1e-6, 10000, 5), 0.0);
  EXPECT_EQ(Rule(LossKind::kLogistic, 1, 1e-6, 31648, 42, true), 0.0);
  Options lasso = Parsed(1, 1e-6, {NumberOption("l1", 0.01)});
  EXPECT_EQ(DefaultL2(LossKind::kLogistic, lasso, 31648, 42, false, nullptr), 0.0);
}

// Where the rule regularises, more rows or more epsilon never ask for more
// l2 of the same algorithm (the noise it balances falls as 1/(n epsilon));
// at delta = 0 the switch from bolton to objective lowers l2 by design.
TEST(DefaultL2, MonotoneInNAndEpsilon) {
  const std::vector<double> eps = {0.1, 0.25, 0.5, 1, 2, 4};
  const std::vector<double> ns = {200, 1000, 5000, 20000, 50000};
  for (double delta : {1e-6, 0.0}) {
    for (int d : {5, 42, 100}) {  // 100: the window, the blend and 0.2 d meet
      // Along `vary` with the other input fixed at each value of `fixed`.
      auto check = [&](const std::vector<double>& fixed, const std::vector<double>& vary,
                       bool vary_n) {
        for (double f : fixed) {
          double last = INFINITY;
          for (double v : vary) {
            const double e = vary_n ? f : v;
            const int64_t n = int64_t(vary_n ? v : f);
            std::string why;
            const double l2 = Rule(LossKind::kLogistic, e, delta, n, d, false, &why);
            if (why.find("(bolton's rule)") != std::string::npos) continue;  // the other rule
            if (l2 > 0) {
              EXPECT_LE(l2, last) << delta << " " << d << " n " << n << " eps " << e;
              last = l2;
            }
          }
        }
      };
      check(ns, eps, false);
      check(eps, ns, true);
    }
  }
  // delta = 0 never falls back to 0: strictly decreasing below the cap.
  EXPECT_GT(Rule(LossKind::kLogistic, 1, 0, 1000, 5), Rule(LossKind::kLogistic, 1, 0, 2000, 5));
  EXPECT_GT(Rule(LossKind::kLogistic, 1, 0, 1000, 5), Rule(LossKind::kLogistic, 2, 0, 1000, 5));
  for (int64_t n : {10, 100, 1000, 100000, 10000000})
    EXPECT_GT(Rule(LossKind::kLogistic, 0.1, 0, n, 5), 0.0);
}

// No l2 given is not l2 => 0: the plan takes the rule's l2 (objective at
// delta > 0, bolton at delta = 0) and says so; l2 => 0 keeps dp_gd /
// output_gd and no rule; a given algorithm keeps l2 = 0 too.
TEST(DefaultL2, PlanNoL2DiffersFromL2Zero) {
  const int64_t n = 31648;
  const int d = 42;
  Options none = Parsed(1, 1e-6);
  EXPECT_FALSE(none.has_l2);
  Plan p = dperm::PlanRelease(none, LossKind::kLogistic, n, d);
  EXPECT_NEAR(p.options.l2, std::sqrt(42.0) / double(n), 1e-15);
  EXPECT_EQ(p.mu, p.options.l2);
  EXPECT_EQ(p.algorithm, Algorithm::kObjective);
  EXPECT_NE(p.l2_rule.find("sqrt(d) / (n epsilon)"), std::string::npos) << p.l2_rule;
  const std::string json = dperm::PlanJson(p);
  EXPECT_NE(json.find("\"l2_rule\":"), std::string::npos) << json;
  EXPECT_NE(json.find("\"l2\":"), std::string::npos) << json;
  // dp_explain: the options section shows the l2 used, options_given not l2.
  const std::string explain = dperm::ExplainJson(p);
  EXPECT_NE(explain.find("\"l2_rule\":"), std::string::npos);

  Options zero = Parsed(1, 1e-6, {NumberOption("l2", 0)});
  EXPECT_TRUE(zero.has_l2);
  Plan z = dperm::PlanRelease(zero, LossKind::kLogistic, n, d);
  EXPECT_EQ(z.mu, 0.0);
  EXPECT_EQ(z.algorithm, Algorithm::kDpGd);
  EXPECT_TRUE(z.l2_rule.empty());
  EXPECT_EQ(dperm::PlanJson(z).find("\"l2_rule\""), std::string::npos);

  Options pure = Parsed(1, 0);
  Plan b = dperm::PlanRelease(pure, LossKind::kLogistic, n, d);
  EXPECT_NEAR(b.mu, 0.2 * 42 / double(n), 1e-15);
  EXPECT_EQ(b.algorithm, Algorithm::kObjective);
  EXPECT_EQ(b.options.delta, 0.0);
  EXPECT_EQ(b.noise, dperm::NoiseKind::kLaplace);  // the certificate's noise: pure
  // n = 100, d = 5: n epsilon = 100 = 20 d, the window rule: l2 =
  // 4.5 sqrt(5) / 100 = 0.1006231; objective.
  Plan small = dperm::PlanRelease(pure, LossKind::kLogistic, 100, 5);
  EXPECT_NEAR(small.mu, 0.1006231, 1e-7);
  EXPECT_EQ(small.algorithm, Algorithm::kObjective);
  // ADULT at epsilon = 0.1: l2 = 45 / 2279 and n l2 = 450 > 100, within the
  // pure cap 4.5 sqrt(d) / epsilon (at least 450): objective. The same l2
  // given is planned the same way; an l2 with n l2 above the cap is bolton's.
  Plan window = dperm::PlanRelease(Parsed(0.1, 0), LossKind::kLogistic, 22790, 100);
  EXPECT_NEAR(window.mu, 45.0 / 2279, 1e-12);
  EXPECT_EQ(window.algorithm, Algorithm::kObjective);
  EXPECT_NE(window.l2_rule.find("5 d <= n epsilon < 100 d"), std::string::npos) << window.l2_rule;
  // The window fits the intercept as a coordinate (no stage 0: the whole
  // epsilon goes to the mechanism, and the plan's options say 'fitted', so
  // a re-plan keeps it); `intercept => 'offset'` given keeps stage 0.
  EXPECT_EQ(window.offset.epsilon, 0.0);
  EXPECT_FALSE(window.options.intercept_offset);
  EXPECT_DOUBLE_EQ(window.options.epsilon, 0.1);
  OptionEntry offset;
  offset.key = "intercept";
  offset.kind = OptionEntry::Kind::kString;
  offset.text = "offset";
  Plan asked = dperm::PlanRelease(Parsed(0.1, 0, {offset}), LossKind::kLogistic, 22790, 100);
  EXPECT_NEAR(asked.mu, 45.0 / 2279, 1e-12);
  EXPECT_EQ(asked.algorithm, Algorithm::kObjective);
  EXPECT_GT(asked.offset.epsilon, 0.0);  // min(0.1 / 10, 4 / sqrt(22790)) = 0.01
  EXPECT_NEAR(asked.offset.epsilon, 0.01, 1e-12);
  // So does the blend (ADULT's shape at epsilon = 0.5: n epsilon = 114 d).
  Plan blend = dperm::PlanRelease(Parsed(0.5, 0), LossKind::kLogistic, 22790, 100);
  EXPECT_NEAR(blend.mu, 3.586204e-3, 1e-9);
  EXPECT_EQ(blend.algorithm, Algorithm::kObjective);
  EXPECT_EQ(blend.offset.epsilon, 0.0);
  EXPECT_FALSE(blend.options.intercept_offset);
  // From 300 d on the offset stays (BANK's shape at epsilon = 1: 754 d).
  EXPECT_GT(dperm::PlanRelease(Parsed(1, 0), LossKind::kLogistic, 31648, 42).offset.epsilon, 0.0);
  EXPECT_EQ(dperm::PlanRelease(Parsed(0.1, 0, {NumberOption("l2", 45.0 / 2279)}),
                               LossKind::kLogistic, 22790, 100)
                .algorithm,
            Algorithm::kObjective);
  EXPECT_EQ(dperm::PlanRelease(Parsed(0.1, 0, {NumberOption("l2", 0.03)}), LossKind::kLogistic,
                               22790, 100)
                .algorithm,
            Algorithm::kBolton);  // n l2 = 683.7 > 4.5 * 10 / epsilon_mech (0.09: 500)
  // n = 200, epsilon = 0.5, d = 100: n epsilon = 100 < 5 d, bolton's rule:
  // l2 = min(150/100, 1) = 1, n l2 = 200 > max(100, 45 / 0.45): bolton.
  Plan tiny = dperm::PlanRelease(Parsed(0.5, 0), LossKind::kLogistic, 200, 100);
  EXPECT_EQ(tiny.mu, 1.0);
  EXPECT_EQ(tiny.algorithm, Algorithm::kBolton);
  Options pure_zero = Parsed(1, 0, {NumberOption("l2", 0)});
  EXPECT_EQ(dperm::PlanRelease(pure_zero, LossKind::kLogistic, n, d).algorithm,
            Algorithm::kOutputGd);

  OptionEntry algo;
  algo.key = "algorithm";
  algo.kind = OptionEntry::Kind::kString;
  algo.text = "dp_gd";
  Plan g = dperm::PlanRelease(Parsed(1, 1e-6, {algo}), LossKind::kLogistic, n, d);
  EXPECT_EQ(g.mu, 0.0);
  EXPECT_TRUE(g.l2_rule.empty());

  // Streaming mode's default: l2 = 0 (dp_gd), the rule saying why.
  Plan s = dperm::PlanStreamingRelease(none, LossKind::kLogistic, n, d);
  EXPECT_EQ(s.mu, 0.0);
  EXPECT_EQ(s.algorithm, Algorithm::kDpGd);
  EXPECT_NE(s.l2_rule.find("streaming"), std::string::npos) << s.l2_rule;
}

// 'auto' counts as given: the selection plans its own grid.
TEST(DefaultL2, AutoIsGiven) {
  OptionEntry e;
  e.key = "l2";
  e.kind = OptionEntry::Kind::kString;
  e.text = "auto";
  Options o = Parsed(1, 1e-6, {e});
  EXPECT_TRUE(o.has_l2);
  EXPECT_TRUE(o.l2_auto);
}

}  // namespace
