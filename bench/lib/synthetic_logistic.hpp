// The synthetic logistic problem of bench/scripts/algorithms/dp_gd_schedule.cpp and
// bench/scripts/algorithms/few_pass.cpp: n rows of d features uniform in the unit ball, then
// a label +-1 drawn from a logistic model with ||w_true|| = 8 and
// intercept -1 (generator seed 7: the same rows every run), in dperm's
// row layout (d features, then the label).
#pragma once
#include <Eigen/Dense>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "reference_solvers.hpp"
#include "dperm/options/options.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"

namespace dperm::testing {

inline std::vector<double> SyntheticLogistic(int64_t n, int d) {
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

// The share of rows whose label has the sign of w's margin (w(d): the intercept).
inline double TrainingAccuracy(const Eigen::VectorXd& w, const std::vector<double>& rows, int64_t n,
                               int d) {
  int64_t right = 0;
  for (int64_t i = 0; i < n; i++) {
    const double* r = rows.data() + size_t(i) * size_t(d + 1);
    double m = w(d);
    for (int k = 0; k < d; k++) m += w(k) * r[k];
    right += (m > 0) == (r[d] > 0);
  }
  return double(right) / double(n);
}

// The command line "N D EPSILON ..." of both benches: the rows, dperm's
// default plan for them at (EPSILON, delta = 1e-6), its objective and the
// objective's minimum (w* by Newton). Exits with the usage on too few
// arguments.
struct SyntheticProblem {
  int64_t n = 0;
  int d = 0;
  Options options;
  std::vector<double> rows;
  Plan base;
  std::unique_ptr<Objective> f;
  Eigen::VectorXd optimum;
  double minimum = 0;
};

inline SyntheticProblem SyntheticProblemFromArgs(int argc, char** argv, const char* usage) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
    std::exit(2);
  }
  SyntheticProblem p;
  p.n = std::atoll(argv[1]);
  p.d = std::atoi(argv[2]);
  p.options.epsilon = std::atof(argv[3]);
  p.options.delta = 1e-6;
  p.options.has_algorithm = false;
  p.rows = SyntheticLogistic(p.n, p.d);
  p.base = PlanRelease(p.options, LossKind::kLogistic, p.n, p.d);
  p.f = MakeObjective(p.base, p.rows.data());
  p.optimum = NewtonMinimiser(*p.f);
  p.minimum = p.f->Value(p.optimum);
  return p;
}

}  // namespace dperm::testing
