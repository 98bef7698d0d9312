// The cost of snapping (noise.hpp) on the public shapes of BANK (logistic,
// n = 45211, d = 42) and WINE (Huber, n = 6497, d = 12) of ../shared/data:
// every algorithm's plan at epsilon = 1, delta = 1e-6, l2 in {0, 0.01}. Snapping changes a release in two ways: the
// sensitivity grows by the rounding term sqrt(dim) g, so sigma grows in
// proportion, and the noiseless value moves by at most g/2 per coordinate.
// Excess risk near the optimum is a quadratic form in the perturbation, so
// its expected change is the change of E||perturbation||^2:
//   (sigma^2 + (g/2)^2) / sigma_0^2 - 1,
// sigma_0 the noise the same calibration gives without rounding. The issue
// asked for < 1%; this is the bound for every noisy step and every release.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "dperm/algorithms/mechanism.hpp"
#include "dperm/algorithms/objective_perturbation.hpp"
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/algorithms/svrg_common.hpp"
#include "dperm/planning/plan_release.hpp"

namespace {

using dperm::Algorithm;
using dperm::LossKind;
using dperm::Options;
using dperm::Plan;

struct Shape {
  const char* name;
  LossKind loss;
  int64_t n;
  int d;
};
const Shape kShapes[] = {{"bank", LossKind::kLogistic, 45211, 42},
                         {"wine", LossKind::kHuber, 6497, 12}};

// The noise the plan's calibration gives before the rounding term.
double UnroundedSigma(const Plan& p) {
  if (p.algorithm == Algorithm::kDpSvrg || p.algorithm == Algorithm::kDpSvrgPp) {
    dperm::SvrgSteps s;
    s.n = p.n;
    s.batch = p.batch_size;
    s.steps = p.noisy_steps;
    s.snapshot_sensitivity = 2 * p.L / double(p.n);
    s.row_range = dperm::SvrgRowRange(p);
    return dperm::SvrgCalibrateSigma(s, p.mechanism_fields.Get(dperm::kNoiseFraction),
                                     p.options.epsilon, p.options.delta);
  }
  const double base = p.sensitivity - p.rounding_inflation;
  return p.noise_scale * base / p.sensitivity;
}

TEST(SnappingCost, BankAndWinePlansWithinOnePercent) {
  for (const Shape& shape : kShapes)
    for (Algorithm a : dperm::AllAlgorithms()) {
      for (double l2 : {0.0, 0.01}) {
        Options o;
        o.epsilon = 1;
        o.delta = 1e-6;
        o.l2 = l2;
        o.algorithm = a;
        Plan p;
        try {
          p = dperm::PlanRelease(o, shape.loss, shape.n, shape.d);
        } catch (const dperm::Error&) {
          continue;  // this algorithm needs other options (l2 > 0) or another loss
        }
        SCOPED_TRACE(std::string(shape.name) + " " + dperm::AlgorithmName(a) +
                     " l2=" + std::to_string(l2));
        if (a == Algorithm::kObjective) {
          // Its noise is b inside the objective (exact, rounded to 2^-20 of
          // sigma); the snapped output noise covering the solver's residual
          // is far below the displacement b causes along the objective's
          // flattest direction, sigma/(n mu_P) (mu_P = 2 lambda + l2).
          ASSERT_GT(p.grid, 0.0);
          const double displacement =
              p.mechanism_fields.Get(dperm::kObjectiveNoise) /
              (double(shape.n) * (2 * p.mechanism_fields.Get(dperm::kObjectiveLambda) + p.mu));
          std::printf("[ info ] %s objective l2=%g: output noise / b's displacement = %.2e\n",
                      shape.name, l2, p.noise_scale / displacement);
          EXPECT_LT(p.noise_scale, 0.01 * displacement);
          continue;
        }
        ASSERT_GT(p.grid, 0.0);
        const double sigma0 = UnroundedSigma(p);
        const double ratio = p.noise_scale / sigma0, half = p.grid / (2 * sigma0);
        const double change = ratio * ratio + half * half - 1;
        std::printf(
            "[ info ] %s %s l2=%g: grid 2^%d, sigma/sigma0 - 1 = %.2e, E||z||^2 change %.2e\n",
            shape.name, dperm::AlgorithmName(a), l2, int(std::log2(p.grid)), ratio - 1, change);
        EXPECT_GE(ratio, 1.0);  // rounding never lowers the noise
        EXPECT_LT(change, 0.01);
      }
    }
}

}  // namespace
