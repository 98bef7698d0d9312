// dp_newton's noise schedule across its passes (dp_newton.cpp, "THE
// SCHEDULE"), measured: pass k of K gets a share w_k / sum w of the
// composition's mu^2, i.e. sigma_k = sigma_equal sqrt(sum w / (K w_k)),
// for equal shares, shares growing as k + 1, (k + 1)^2 and 2^k (dperm's),
// at K = 5, 6, 8. Each pass is dp_newton's own release
// (ReleaseCurvatureSums) at its sigma, then its Newton step with the ridge
// of that sigma; the privacy of every schedule is the same (the sigmas'
// mu^2 add up to the equal-share plan's). Reported: excess empirical risk
// F(w) - F(w*), mean over seeds.
// Build and run (from the repository root, after `make`):
//   g++ -std=c++17 -O2 -Iinclude -I/usr/include/eigen3 bench/scripts/algorithms/newton_schedule.cpp
//     src/core/*/*.o -o /tmp/newton_schedule -pthread
//   /tmp/newton_schedule 8 100000 1 10 synthetic   # D N EPSILON SEEDS synthetic|erm
//   /tmp/newton_schedule 6 200000 1 5 erm
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dperm/algorithms/dp_newton.hpp"
#include "dperm/algorithms/ssp.hpp"
#include "dperm/noise/exact_normal.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"
#include "../../lib/erm_rows.hpp"
#include "../../lib/reference_solvers.hpp"
#include "../../lib/synthetic_logistic.hpp"

using namespace dperm;

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s D N EPSILON SEEDS synthetic|erm\n", argv[0]);
    return 2;
  }
  const int d = std::atoi(argv[1]), n = std::atoi(argv[2]), seeds = std::atoi(argv[4]);
  const double epsilon = std::atof(argv[3]);
  const std::string data = argv[5];
  const std::vector<double> rows = data == "erm" ? testing::ErmRows(LossKind::kLogistic, n, d, 31)
                                                 : testing::SyntheticLogistic(n, d);
  Options o;
  o.epsilon = epsilon;
  o.delta = 1e-6;
  o.fit_intercept = true;
  o.algorithm = Algorithm::kDpNewton;
  o.has_algorithm = true;
  double floor = 0;
  bool have_floor = false;
  for (int64_t passes : {5, 6, 8}) {
    o.iterations = passes;
    // dperm's plan (its pass sigmas grow as sqrt 2 back from noise_scale).
    Plan plan = PlanRelease(o, LossKind::kLogistic, n, d);
    auto objective = MakeObjective(plan, rows.data());
    if (!have_floor) {
      floor = objective->Value(testing::NewtonMinimiser(*objective));
      have_floor = true;
    }
    const double gamma = plan.mechanism_fields.Get(kMomentWeight);
    const double ridge_per_sigma = plan.mechanism_fields.Get(kNewtonRidge) / plan.noise_scale;
    // In dperm's plan the last pass has noise_scale and sum_k sigma_k^-2 =
    // (2^K - 1)/(2^(K-1) noise_scale^2); the equal-share sigma with the same
    // sum is noise_scale sqrt(K 2^(K-1)/(2^K - 1)).
    const double base =
        plan.noise_scale * std::sqrt(double(passes) * std::pow(2.0, double(passes - 1)) /
                                     (std::pow(2.0, double(passes)) - 1));
    for (const std::string schedule : {"equal", "k+1", "(k+1)^2", "2^k (dperm)"}) {
      std::vector<double> share(static_cast<size_t>(passes));
      double total = 0;
      for (int64_t k = 0; k < passes; k++) {
        const double kk = double(k);
        share[size_t(k)] = schedule == "equal"     ? 1
                           : schedule == "k+1"     ? kk + 1
                           : schedule == "(k+1)^2" ? (kk + 1) * (kk + 1)
                                                   : std::pow(2.0, kk);
        total += share[size_t(k)];
      }
      double excess = 0;
      for (int s = 1; s <= seeds; s++) {
        SecureRng rng = SecureRng::FromSeed(uint64_t(s));
        Eigen::VectorXd w = Eigen::VectorXd::Zero(plan.dim);
        for (int64_t k = 0; k < passes; k++) {
          Plan pass = plan;
          pass.noise_scale =
              DyadicNoiseScale(base * std::sqrt(total / (double(passes) * share[size_t(k)])));
          pass.grid = std::ldexp(pass.noise_scale, -pass.noise_bits);
          // The last pass of `pass` has ratio 1: its sigma is noise_scale.
          Eigen::VectorXd v = ReleaseCurvatureSums(pass, *objective, w, passes - 1, rng);
          w += SolveMoments(v, plan.dim, gamma, 1.0, double(n), 0.0,
                            ridge_per_sigma * pass.noise_scale);
        }
        excess += objective->Value(w) - floor;
      }
      std::printf("%s %d x %d, epsilon %g, K = %lld, %-12s: excess %.3g (%d seeds)\n", data.c_str(),
                  n, d, epsilon, static_cast<long long>(passes), schedule.c_str(), excess / seeds,
                  seeds);
    }
  }
  return 0;
}
