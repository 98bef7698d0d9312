// Helpers shared by the unit tests of dp_sgd and dp_lssgd: synthetic rows
// for the three losses, the exact minimiser, options, and the paper's
// formulas recomputed independently of src/core.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "dperm/losses/objective.hpp"
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/rows/rows.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"
#include "../../bench/lib/reference_solvers.hpp"

namespace dperm::testing {

inline const char* Name(LossKind loss) {
  return loss == LossKind::kLogistic ? "logistic" : loss == LossKind::kHuber ? "huber" : "softmax";
}

// Options of an algorithm with the settings the tests vary (softmax: 3
// classes).
inline Options SgdOpts(Algorithm algorithm, LossKind loss, double epsilon, double delta, double l2,
                       Accountant accountant = Accountant::kTight) {
  Options o;
  o.huber_delta = 1;  // the Huber scale the tests' constants are written for
  o.algorithm = algorithm;
  o.epsilon = epsilon;
  o.delta = delta;
  o.l2 = l2;
  o.accountant = accountant;
  if (loss == LossKind::kSoftmax) o.classes = 3;
  return o;
}

// Rows of stride d + 1 (features clipped to norm <= 1, then the label):
// logistic labels +-1 from a logistic model, Huber targets linear plus
// noise with outliers, softmax classes 0..2 from a softmax model.
inline std::vector<double> SyntheticRows(LossKind loss, int n, int d, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> unif(0, 1);
  const int K = 3;
  std::vector<double> truth(size_t(K) * (d + 1));
  for (double& v : truth) v = normal(gen);
  std::vector<double> rows(size_t(n) * (d + 1)), raw(d);
  for (int i = 0; i < n; i++) {
    for (double& v : raw) v = 0.8 * normal(gen);
    double* r = &rows[size_t(i) * (d + 1)];
    ClipRow(raw.data(), d, 1.0, r);
    auto margin = [&](int k) {
      double m = truth[size_t(k) * (d + 1) + d];
      for (int j = 0; j < d; j++) m += truth[size_t(k) * (d + 1) + j] * r[j];
      return m;
    };
    if (loss == LossKind::kLogistic) {
      r[d] = unif(gen) < 1 / (1 + std::exp(-3 * margin(0))) ? 1.0 : -1.0;
    } else if (loss == LossKind::kHuber) {
      r[d] = margin(0) + 0.3 * normal(gen) + (i % 10 == 0 ? 5 * normal(gen) : 0.0);
    } else {
      double p[K], total = 0;
      for (int k = 0; k < K; k++) total += p[k] = std::exp(2 * margin(k));
      double u = unif(gen) * total;
      int c = 0;
      while (c < K - 1 && u > p[c]) u -= p[c++];
      r[d] = c;
    }
  }
  return rows;
}

// The number from `"key":<number>` in a JSON text (NaN if absent).
inline double JsonNumber(const std::string& json, const std::string& key) {
  std::string needle = "\"" + key + "\":";
  size_t at = json.find(needle);
  if (at == std::string::npos) return NAN;
  return std::strtod(json.c_str() + at + needle.size(), nullptr);
}

}  // namespace dperm::testing
