// Synthetic problems shared by the bolton and rrpsgd unit tests.
#pragma once
#include "dperm/options/options.hpp"
#include "dperm/rows/rows.hpp"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace dperm::testing {

// {L, beta} of a loss from the options, written out from plan_steps.hpp.
struct Constants {
  double L, beta;
};
inline Constants ConstantsFor(const dperm::Options& o, dperm::LossKind loss) {
  double R = std::sqrt(o.feature_bound * o.feature_bound + (o.fit_intercept ? 1 : 0));
  switch (loss) {
    case dperm::LossKind::kLogistic: return {R, R * R / 4};
    case dperm::LossKind::kHuber: return {dperm::HuberDelta(o) * R, R * R};
    case dperm::LossKind::kSoftmax: return {std::sqrt(2.0) * R, R * R / 2};
    default: break;  // a loss with no written-out constants: NaN fails every check
  }
  return {NAN, NAN};
}

// Rows of stride d + 1 with features clipped to norm <= 1: logistic labels
// +-1 from a logistic model; Huber targets linear plus noise; softmax class
// indices 0..K-1 from a multinomial model. huber_outliers adds a large
// error to every tenth Huber target.
inline std::vector<double> SyntheticRows(dperm::LossKind loss, int n, int d, uint64_t seed,
                                         int classes = 3, bool huber_outliers = false) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> unif(0, 1);
  std::vector<double> truth((d + 1) * classes);
  for (double& v : truth) v = normal(gen);
  std::vector<double> rows(size_t(n) * (d + 1));
  std::vector<double> raw(d);
  for (int i = 0; i < n; i++) {
    for (double& v : raw) v = 0.8 * normal(gen);
    double* r = &rows[size_t(i) * (d + 1)];
    dperm::ClipRow(raw.data(), d, 1.0, r);
    auto margin = [&](int k) {
      double m = truth[k * (d + 1) + d];
      for (int j = 0; j < d; j++) m += truth[k * (d + 1) + j] * r[j];
      return m;
    };
    if (loss == dperm::LossKind::kLogistic) {
      r[d] = unif(gen) < 1 / (1 + std::exp(-3 * margin(0))) ? 1.0 : -1.0;
    } else if (loss == dperm::LossKind::kHuber) {
      r[d] =
          margin(0) + 0.3 * normal(gen) + (huber_outliers && i % 10 == 0 ? 5 * normal(gen) : 0.0);
    } else {
      std::vector<double> p(classes);
      double sum = 0;
      for (int k = 0; k < classes; k++) sum += p[k] = std::exp(2 * margin(k));
      double u = unif(gen) * sum;
      int k = 0;
      while (k < classes - 1 && (u -= p[k]) > 0) k++;
      r[d] = k;
    }
  }
  return rows;
}

}  // namespace dperm::testing
