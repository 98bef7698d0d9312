// dp_gd's accelerated schedule against Theorem 6.3's plain one (dp_gd.cpp,
// "Accelerated schedule"): on a synthetic logistic problem (n rows of d
// features, uniform in the unit ball, labels drawn from a logistic model
// with ||w_true|| = 8), the excess empirical risk F(w) - F(w*) (F the mean
// logistic loss with the intercept, w* by Newton), training accuracy and
// seconds of three seeded releases each of
//   default      PlanRelease without options: dp_gd at l2 = 0 with
//                kAcceleratedSteps Nesterov steps where the theorem's T is more;
//   plain T      plain dp_gd steps (`iterations` given: no momentum) for each T
//                on the command line (e.g. the theorem's T and kAcceleratedSteps).
// Build and run (from the repository root, after `make`):
//   g++ -std=c++17 -O2 -Iinclude -I/usr/include/eigen3 bench/scripts/algorithms/dp_gd_schedule.cpp
//     src/core/*/*.o -o /tmp/dp_gd_schedule -pthread
//   /tmp/dp_gd_schedule N D EPSILON [T ...]     # e.g. 1000000 8 1 20000 100
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "../../lib/reference_solvers.hpp"
#include "../../lib/synthetic_logistic.hpp"
#include "dperm/algorithms/dp_gd.hpp"
#include "dperm/options/options.hpp"
#include "dperm/planning/plan_release.hpp"

using namespace dperm;

namespace {

void Report(const char* what, const Plan& p, const Objective& f, double minimum,
            const std::vector<double>& rows, int64_t n, int d) {
  double excess = 0, accuracy = 0, seconds = 0;
  const int seeds = 3;
  for (int s = 1; s <= seeds; s++) {
    const auto start = std::chrono::steady_clock::now();
    const Eigen::VectorXd w = testing::TrainSeeded(p, rows, uint64_t(s));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    excess += f.Value(w) - minimum;
    accuracy += testing::TrainingAccuracy(w, rows, n, d);
  }
  std::printf("| %s | %lld | %s | %.3g | %.4f | %.2f |\n", what,
              static_cast<long long>(p.iterations),
              p.mechanism_fields.Get(kNesterov) > 0 ? "yes" : "no", excess / seeds,
              accuracy / seeds, seconds / seeds);
}

}  // namespace

int main(int argc, char** argv) {
  const testing::SyntheticProblem problem =
      testing::SyntheticProblemFromArgs(argc, argv, "N D EPSILON [T ...]");
  const auto& [n, d, o, rows, base, f, optimum, minimum] = problem;
  std::printf(
      "n = %lld, d = %d, epsilon = %g, delta = 1e-6: default %s (%s); F(w*) = %.6f, ||w*|| = %.2f\n\n",
      static_cast<long long>(n), d, o.epsilon, AlgorithmName(base.algorithm),
      base.iterations_rule.c_str(), minimum, optimum.norm());
  std::printf(
      "| schedule | T | momentum | excess | accuracy | seconds |\n|---|---:|---|---:|---:|---:|\n");
  Report("default", base, *f, minimum, rows, n, d);
  for (int i = 4; i < argc; i++) {
    Options given = o;
    given.iterations = std::atoll(argv[i]);
    Report("plain", PlanRelease(given, LossKind::kLogistic, n, d), *f, minimum, rows, n, d);
  }
  return 0;
}
