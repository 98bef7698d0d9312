// The synthetic rows of the unit tests (test/unit/erm_reference.hpp) and of
// bench/scripts/algorithms/newton_schedule.cpp: features 0.8 N(0, I) clipped to the unit ball
// (so in d >= 4 most rows lie on the sphere), labels from a model with
// N(0, 1) weights and margins scaled by 3.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "dperm/options/options.hpp"
#include "dperm/rows/rows.hpp"

namespace dperm::testing {

// Rows of stride d + 1 (features clipped to norm <= 1, then the label):
// logistic labels +-1 from a logistic model, Huber targets linear plus
// noise with outliers, softmax classes 0..classes-1 from a multinomial model.
inline std::vector<double> ErmRows(LossKind loss, int n, int d, uint64_t seed, int classes = 3) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> unif(0, 1);
  int k = loss == LossKind::kSoftmax ? classes : 1;
  std::vector<double> truth(size_t(k) * (d + 1));
  for (double& v : truth) v = normal(gen);
  std::vector<double> rows(size_t(n) * (d + 1));
  std::vector<double> raw(d);
  for (int i = 0; i < n; i++) {
    for (double& v : raw) v = 0.8 * normal(gen);
    double* r = &rows[size_t(i) * (d + 1)];
    ClipRow(raw.data(), d, 1.0, r);
    std::vector<double> m(k);
    for (int c = 0; c < k; c++) {
      m[c] = truth[size_t(c) * (d + 1) + d];
      for (int j = 0; j < d; j++) m[c] += truth[size_t(c) * (d + 1) + j] * r[j];
    }
    if (loss == LossKind::kLogistic) {
      r[d] = unif(gen) < 1 / (1 + std::exp(-3 * m[0])) ? 1.0 : -1.0;
    } else if (loss == LossKind::kHuber) {
      r[d] = m[0] + 0.3 * normal(gen) + (i % 10 == 0 ? 5 * normal(gen) : 0.0);
    } else {
      double total = 0;
      for (double& v : m) total += (v = std::exp(2 * v));
      double u = unif(gen) * total;
      int c = 0;
      while (c < k - 1 && u > m[c]) u -= m[c++];
      r[d] = c;
    }
  }
  return rows;
}

}  // namespace dperm::testing
