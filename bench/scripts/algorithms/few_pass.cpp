// Few-pass candidates for streaming (issue 26, item 2), measured in the
// core only against dp_gd's default (100 accelerated full-batch steps), on
// bench/scripts/algorithms/dp_gd_schedule.cpp's synthetic logistic problem (rows uniform in
// the unit ball, ||w_true|| = 8), at the same (epsilon, delta = 1e-6):
//  * shuffled SGD: K epochs of noisy mini-batch SGD over ONE random
//    partition of the rows into m disjoint batches, Nesterov's momentum
//    with gradient restart (last iterate) or plain steps (the mean of the
//    last epoch's iterates);
//  * the same epochs, then full-batch accelerated steps (m = 1);
//  * private Newton: E shuffled epochs (m = 30), then passes that each
//    release the gradient sum and the Hessian sum at the current w, and
//    take a Newton step on the noisy Hessian plus a ridge (E = 0: Newton
//    from w = 0, every pass a plain sum over the rows).
//
// Privacy the candidates would need (none is a dperm mechanism): the
// partition is drawn independently of the rows and a replaced row keeps
// its batch, so in each epoch one step's batch gradient sum moves by at
// most 2L and the other steps' conditional distributions are the same on
// both tables. Every pass is then one Gaussian mechanism, and K passes
// compose as dp_gd's T = K steps (no amplification by the shuffle is
// claimed): sigma_sum = n x the noise_scale of dp_gd's plan at
// iterations = K (which also spends the same stage-0 offset share). A
// Newton pass splits its Gaussian between the gradient and the Hessian
// (bench/lib/private_newton.hpp).
//
// Also dperm's dp_newton mechanism (dp_newton.cpp), which grew out of the
// last candidate, at 6 (its default) and 8 passes.
//
// Reported: excess empirical risk F(w) - F(w*) (F the mean logistic loss
// with the intercept, no l2, w* by Newton) and training accuracy, means of
// 3 seeds (SEEDS in the environment for more).
// Build and run (from the repository root, after `make`):
//   g++ -std=c++17 -O2 -Iinclude -I/usr/include/eigen3 bench/scripts/algorithms/few_pass.cpp
//     src/core/*/*.o -o /tmp/few_pass -pthread
//   /tmp/few_pass N D EPSILON [newton]    # e.g. 1000000 8 1
// ("newton": the default and private Newton from 0 only)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "../../lib/private_newton.hpp"
#include "../../lib/reference_solvers.hpp"
#include "../../lib/synthetic_logistic.hpp"
#include "dperm/options/options.hpp"
#include "dperm/planning/plan_release.hpp"

using namespace dperm;

namespace {

// K epochs over one seeded partition into m batches; sigma_sum per batch sum.
// momentum: Nesterov with gradient restart (as dp_gd's accelerated
// schedule), last iterate; otherwise plain steps, the mean of the last
// epoch's iterates (Polyak-Ruppert averaging).
// batches[e]: epoch e's number of batches (1: one full-batch step).
Eigen::VectorXd ShuffledSgd(const std::vector<double>& rows, int64_t n, int d,
                            const std::vector<int64_t>& batches, double sigma_sum, double eta,
                            bool momentum, uint64_t seed) {
  const int epochs = int(batches.size());
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0, 1);
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), gen);
  const int dim = d + 1;
  Eigen::VectorXd x = Eigen::VectorXd::Zero(dim), prev = x, g(dim), mean = x;
  int64_t k = 1;
  for (int e = 0; e < epochs; e++) {
    const int64_t m = batches[size_t(e)];
    for (int64_t b = 0; b < m; b++) {
      const int64_t lo = b * n / m, hi = (b + 1) * n / m;
      const Eigen::VectorXd y =
          momentum ? Eigen::VectorXd(x + double(k - 1) / double(k + 2) * (x - prev)) : x;
      g.setZero();
      for (int64_t j = lo; j < hi; j++) {
        const double* r = rows.data() + size_t(order[size_t(j)]) * size_t(d + 1);
        double margin = y(d);
        for (int c = 0; c < d; c++) margin += y(c) * r[c];
        const double label = r[d];
        const double coef = -label / (1 + std::exp(label * margin));
        for (int c = 0; c < d; c++) g(c) += coef * r[c];
        g(d) += coef;
      }
      for (int c = 0; c < dim; c++) g(c) += sigma_sum * normal(gen);
      const Eigen::VectorXd next = y - eta * g / double(hi - lo);
      // gradient restart (as dp_gd's accelerated schedule)
      if (g.dot(next - x) > 0) k = 0;
      prev = x;
      x = next;
      k++;
      if (e == epochs - 1) mean += x / double(m);
    }
  }
  return momentum ? x : mean;
}

}  // namespace

int main(int argc, char** argv) {
  const testing::SyntheticProblem problem =
      testing::SyntheticProblemFromArgs(argc, argv, "N D EPSILON [newton]");
  const auto& [n, d, o, rows, base, f, optimum, minimum] = problem;
  std::printf(
      "n = %lld, d = %d, epsilon = %g, delta = 1e-6: default %s, %lld steps; F(w*) = %.6f\n\n",
      static_cast<long long>(n), d, o.epsilon, AlgorithmName(base.algorithm),
      static_cast<long long>(base.iterations), minimum);
  std::printf("| method | passes | batches m | excess | accuracy |\n|---|---:|---:|---:|---:|\n");
  // SEEDS in the environment: seeds per row (default 3).
  const int seeds = std::getenv("SEEDS") ? std::atoi(std::getenv("SEEDS")) : 3;
  double excess = 0, accuracy = 0;
  for (int s = 1; s <= seeds; s++) {
    const Eigen::VectorXd w = testing::TrainSeeded(base, rows, uint64_t(s));
    excess += f->Value(w) - minimum;
    accuracy += testing::TrainingAccuracy(w, rows, n, d);
  }
  std::printf("| dp_gd default | %lld | 1 | %.3g | %.4f |\n",
              static_cast<long long>(base.iterations), excess / seeds, accuracy / seeds);
  // dperm's own dp_newton (dp_newton.cpp: one packed Gaussian a pass,
  // curvature-weighted sums, eigenvalues clipped, ridge sqrt(dim) sigma/n).
  for (int64_t passes : {6, 8}) {
    Options given = o;
    given.has_algorithm = true;
    given.algorithm = Algorithm::kDpNewton;
    given.iterations = passes;
    const Plan p = PlanRelease(given, LossKind::kLogistic, n, d);
    excess = accuracy = 0;
    for (int s = 1; s <= seeds; s++) {
      const Eigen::VectorXd w = testing::TrainSeeded(p, rows, uint64_t(s));
      excess += f->Value(w) - minimum;
      accuracy += testing::TrainingAccuracy(w, rows, n, d);
    }
    std::printf("| dp_newton (dperm) | %lld | - | %.3g | %.4f |\n", static_cast<long long>(passes),
                excess / seeds, accuracy / seeds);
  }
  // "newton": only private Newton from w = 0 (the threshold sweep).
  const bool newton_only = argc > 4 && std::string(argv[4]) == "newton";
  // Private Newton's gradient share of each pass and ridge scale
  // (bench/lib/private_newton.hpp): SHARE and RIDGE in the environment.
  const double share = std::getenv("SHARE") ? std::atof(std::getenv("SHARE")) : 0.9;
  const double ridge = std::getenv("RIDGE") ? std::atof(std::getenv("RIDGE")) : 1;
  std::printf("private Newton: gradient share %g, ridge %g sqrt(dim) sigma_H\n\n", share, ridge);
  for (int epochs : {1, 2, 3}) {
    if (newton_only) break;
    Options given = o;
    given.has_algorithm = true;
    given.algorithm = Algorithm::kDpGd;
    given.iterations = epochs;
    const Plan p = PlanRelease(given, LossKind::kLogistic, n, d);
    const double sigma_sum = p.noise_scale * double(n);
    for (bool momentum : {true, false})
      for (int64_t m : {10, 30, 100, 300, 1000}) {
        if (m * 20 > n) continue;
        excess = accuracy = 0;
        for (int s = 1; s <= seeds; s++) {
          const Eigen::VectorXd w = ShuffledSgd(rows, n, d, std::vector<int64_t>(size_t(epochs), m),
                                                sigma_sum, 1 / p.beta, momentum, uint64_t(s));
          excess += f->Value(w) - minimum;
          accuracy += testing::TrainingAccuracy(w, rows, n, d);
        }
        std::printf("| shuffled SGD, %s | %d | %lld | %.3g | %.4f |\n",
                    momentum ? "Nesterov, last iterate" : "plain, last epoch's mean", epochs,
                    static_cast<long long>(m), excess / seeds, accuracy / seeds);
      }
  }
  // Warm starts: shuffled epochs, then full-batch accelerated steps (m = 1),
  // every pass one of the K composed Gaussians.
  for (const std::vector<int64_t>& schedule :
       newton_only ? std::vector<std::vector<int64_t>>{}
                   : std::vector<std::vector<int64_t>>{{30, 1, 1, 1, 1},
                                                       {30, 30, 1, 1, 1},
                                                       {100, 30, 1, 1, 1},
                                                       {30, 30, 30, 1, 1},
                                                       {30, 30, 1, 1, 1, 1, 1, 1, 1, 1}}) {
    Options given = o;
    given.has_algorithm = true;
    given.algorithm = Algorithm::kDpGd;
    given.iterations = int64_t(schedule.size());
    const Plan p = PlanRelease(given, LossKind::kLogistic, n, d);
    std::string name;
    for (int64_t m : schedule) name += (name.empty() ? "" : ", ") + std::to_string(m);
    excess = accuracy = 0;
    for (int s = 1; s <= seeds; s++) {
      const Eigen::VectorXd w = ShuffledSgd(rows, n, d, schedule, p.noise_scale * double(n),
                                            1 / p.beta, true, uint64_t(s));
      excess += f->Value(w) - minimum;
      accuracy += testing::TrainingAccuracy(w, rows, n, d);
    }
    std::printf("| shuffled epochs then full steps, Nesterov | %zu | %s | %.3g | %.4f |\n",
                schedule.size(), name.c_str(), excess / seeds, accuracy / seeds);
  }
  // Shuffled epochs, then Newton passes.
  for (const auto& [epochs, newton] : std::vector<std::pair<int, int>>{
           {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 8}, {1, 1}, {1, 2}, {2, 1}, {2, 2}, {1, 3}}) {
    if (newton_only && epochs > 0) continue;
    Options given = o;
    given.has_algorithm = true;
    given.algorithm = Algorithm::kDpGd;
    given.iterations = epochs + newton;
    const Plan p = PlanRelease(given, LossKind::kLogistic, n, d);
    const double z = p.noise_scale / p.sensitivity;  // sigma over the mean's sensitivity 2C
    excess = accuracy = 0;
    for (int s = 1; s <= seeds; s++) {
      Eigen::VectorXd w = ShuffledSgd(rows, n, d, std::vector<int64_t>(size_t(epochs), 30),
                                      p.noise_scale * double(n), 1 / p.beta, true, uint64_t(s));
      w = testing::PrivateNewtonPasses(rows.data(), n, d, w, newton, z, p.sensitivity * double(n),
                                       uint64_t(s), share, ridge);
      excess += f->Value(w) - minimum;
      accuracy += testing::TrainingAccuracy(w, rows, n, d);
    }
    std::printf("| shuffled epochs (m = 30) then Newton passes | %d + %d | %s | %.3g | %.4f |\n",
                epochs, newton, epochs > 0 ? "30" : "-", excess / seeds, accuracy / seeds);
  }
  return 0;
}
