// A few-pass candidate for streaming (issue 26, item 2), measured in the
// core only: K epochs of noisy mini-batch SGD over ONE random partition of
// the rows into m disjoint batches, against dp_gd's default (100
// accelerated full-batch steps), on bench/dp_gd_schedule.cpp's synthetic
// logistic problem (rows uniform in the unit ball, ||w_true|| = 8).
//
// Privacy of the candidate (not a dperm mechanism; the argument it would
// need): the partition is drawn independently of the rows, and under
// replace-one neighbours the replaced row keeps its batch, so in each epoch
// one step's batch gradient sum moves by at most 2L and the other steps'
// conditional distributions are the same on both tables. K epochs are then
// K adaptively composed Gaussian mechanisms of sensitivity 2L on a sum: the
// accounting of dp_gd with T = K (no amplification by the shuffle is
// claimed). So sigma_sum = n x the noise_scale of dp_gd's plan at
// iterations = K (which also spends the same stage-0 offset share).
//
// Reported: excess empirical risk F(w) - F(w*) (F the mean logistic loss
// with the intercept, no l2, w* by Newton), training accuracy, mean of 3
// seeds. The candidate's step: w -= eta (g_b / B) with eta = 1/beta and
// Nesterov momentum within and across epochs; its output is the last
// iterate.
// Build and run (from the repository root, after `make`):
//   g++ -std=c++17 -O2 -Iinclude -I/usr/include/eigen3 bench/shuffled_sgd.cpp
//     src/core/*/*.o -o /tmp/shuffled_sgd -pthread
//   /tmp/shuffled_sgd N D EPSILON    # e.g. 1000000 8 1
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "lib/reference_solvers.hpp"
#include "dperm/options/options.hpp"
#include "dperm/release/plan_release.hpp"

using namespace dperm;

namespace {

std::vector<double> SyntheticLogistic(int64_t n, int d) {  // as bench/dp_gd_schedule.cpp
  std::mt19937_64 gen(7);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::vector<double> w;
  double norm = 0;
  for (int k = 0; k < d; k++) {
    w.push_back(normal(gen));
    norm += w.back() * w.back();
  }
  for (double& v : w) v *= 8 / std::sqrt(norm);
  std::vector<double> rows(size_t(n) * size_t(d + 1));
  for (int64_t i = 0; i < n; i++) {
    double* r = rows.data() + size_t(i) * size_t(d + 1);
    double sq = 0, margin = -1;
    for (int k = 0; k < d; k++) {
      r[k] = normal(gen);
      sq += r[k] * r[k];
    }
    const double scale = std::sqrt(uniform(gen)) / std::sqrt(sq);
    for (int k = 0; k < d; k++) {
      r[k] *= scale;
      margin += w[size_t(k)] * r[k];
    }
    r[d] = uniform(gen) < 1 / (1 + std::exp(-margin)) ? 1 : -1;
  }
  return rows;
}

double Accuracy(const Eigen::VectorXd& w, const std::vector<double>& rows, int64_t n, int d) {
  int64_t right = 0;
  for (int64_t i = 0; i < n; i++) {
    const double* r = rows.data() + size_t(i) * size_t(d + 1);
    double m = w(d);
    for (int k = 0; k < d; k++) m += w(k) * r[k];
    right += (m > 0) == (r[d] > 0);
  }
  return double(right) / double(n);
}

// K epochs over one seeded partition into m batches; sigma_sum per batch sum.
// momentum: Nesterov with gradient restart (as dp_gd's accelerated
// schedule), last iterate; otherwise plain steps, the mean of the last
// epoch's iterates (Polyak-Ruppert averaging).
Eigen::VectorXd ShuffledSgd(const std::vector<double>& rows, int64_t n, int d, int epochs, int64_t m,
                            double sigma_sum, double eta, bool momentum, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0, 1);
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), gen);
  const int dim = d + 1;
  Eigen::VectorXd x = Eigen::VectorXd::Zero(dim), prev = x, g(dim), mean = x;
  int64_t k = 1;
  for (int e = 0; e < epochs; e++) {
    for (int64_t b = 0; b < m; b++) {
      const int64_t lo = b * n / m, hi = (b + 1) * n / m;
      const Eigen::VectorXd y = momentum ? Eigen::VectorXd(x + double(k - 1) / double(k + 2) * (x - prev)) : x;
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
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s N D EPSILON\n", argv[0]);
    return 2;
  }
  const int64_t n = std::atoll(argv[1]);
  const int d = std::atoi(argv[2]);
  Options o;
  o.epsilon = std::atof(argv[3]);
  o.delta = 1e-6;
  o.has_algorithm = false;
  const std::vector<double> rows = SyntheticLogistic(n, d);
  const Plan base = PlanRelease(o, LossKind::kLogistic, n, d);
  const auto f = MakeObjective(base, rows.data());
  const Eigen::VectorXd optimum = testing::NewtonMinimiser(*f);
  const double minimum = f->Value(optimum);
  std::printf("n = %lld, d = %d, epsilon = %g, delta = 1e-6: default %s, %lld steps; F(w*) = %.6f\n\n",
              static_cast<long long>(n), d, o.epsilon, AlgorithmName(base.algorithm),
              static_cast<long long>(base.iterations), minimum);
  std::printf("| method | passes | batches m | excess | accuracy |\n|---|---:|---:|---:|---:|\n");
  const int seeds = 3;
  double excess = 0, accuracy = 0;
  for (int s = 1; s <= seeds; s++) {
    const Eigen::VectorXd w = testing::TrainSeeded(base, rows, uint64_t(s));
    excess += f->Value(w) - minimum;
    accuracy += Accuracy(w, rows, n, d);
  }
  std::printf("| dp_gd default | %lld | 1 | %.3g | %.4f |\n", static_cast<long long>(base.iterations),
              excess / seeds, accuracy / seeds);
  for (int epochs : {1, 2, 3}) {
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
          const Eigen::VectorXd w =
              ShuffledSgd(rows, n, d, epochs, m, sigma_sum, 1 / p.beta, momentum, uint64_t(s));
          excess += f->Value(w) - minimum;
          accuracy += Accuracy(w, rows, n, d);
        }
        std::printf("| shuffled SGD, %s | %d | %lld | %.3g | %.4f |\n",
                    momentum ? "Nesterov, last iterate" : "plain, last epoch's mean", epochs,
                    static_cast<long long>(m), excess / seeds, accuracy / seeds);
      }
  }
  return 0;
}
