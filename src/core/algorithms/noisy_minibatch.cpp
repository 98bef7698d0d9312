// The noisy mini-batch loop of dp_sgd and dp_lssgd (see the header).
#include "dperm/algorithms/noisy_minibatch.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "dperm/util/interrupt.hpp"
#include "dperm/algorithms/laplacian_smoothing.hpp"
#include "dperm/plan/plan_noise.hpp"

namespace dperm {

Eigen::VectorXd NoisyMinibatchSgd(const Plan& plan, const Objective& objective, SecureRng& rng) {
  const int dim = plan.dim;
  const int64_t n = plan.n, m = plan.batch_size, T = plan.iterations;
  if (objective.dim() != dim || objective.n() != n || m < 1 || m > n || T < 1 ||
      plan.noisy_steps != T)
    throw Error(ErrorKind::kInternal, "noisy mini-batch SGD: the plan does not fit the data");
  const double eta = plan.step_size, l2 = objective.l2();
  const LaplacianSmoother smoother(plan.mechanism_fields.Get(kLsSigma));
  // Smoothing acts on each class block (one block for binary models).
  const int blocks = std::max(plan.classes, 1), block = dim / blocks;

  Eigen::VectorXd w = Eigen::VectorXd::Zero(dim), g(dim);
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(dim);  // w_1 + ... + w_t
  std::vector<int64_t> scratch, batch;
  if (m == n) {  // full batch: every step reads all rows
    batch.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; i++) batch[static_cast<size_t>(i)] = i;
  }
  for (int64_t t = 0; t < T; t++) {
    if ((t & 15) == 0) CheckInterrupt();
    ReportIterations(t, T);
    if (m < n) SampleWithoutReplacement(rng, n, m, scratch, batch);
    g.setZero();
    objective.AddRowGradients(w, batch.data(), m, g);
    g /= static_cast<double>(m);
    // The noisy batch mean, snapped to the plan's grid with discrete
    // Gaussian noise: the one release per step the accountant counts.
    AddPlannedNoise(plan, rng, g.data());
    // The regulariser's gradient is the same on neighbouring datasets.
    if (l2 > 0) g += l2 * w;
    if (plan.mechanism_fields.Get(kLsSigma) > 0)
      for (int k = 0; k < blocks; k++) smoother.Apply(g.data() + k * block, block);
    w -= eta * g;
    if (plan.radius > 0) {
      const double norm = w.norm();
      if (norm > plan.radius) w *= plan.radius / norm;
    }
    sum += w;
  }
  ReportIterations(T, T);
  return sum / static_cast<double>(T);
}

int64_t ChooseIterations(const Plan& base, int64_t t_max,
                         const std::function<void(Plan&, int64_t)>& plan_steps,
                         const std::function<double(const Plan&)>& bound,
                         const std::function<bool(const Plan&)>& accept) {
  // Without `accept`, stop once the bound is this many times the best one:
  // below the minimiser the noise no longer matters and the bound only
  // grows like 1/sqrt(T).
  const double kGiveUp = 2;
  int64_t best_t = t_max, last = -1;
  double best = std::numeric_limits<double>::infinity();
  bool have_error = false;
  Error first_error(ErrorKind::kInternal, "");
  for (int k = 0;; k++) {
    int64_t t = std::max<int64_t>(1, std::llround(double(t_max) * std::pow(0.5, 0.5 * k)));
    if (t == last) continue;  // small t_max: the grid repeats values
    last = t;
    if ((k & 7) == 0) CheckInterrupt();
    Plan q = base;
    double u;
    try {
      plan_steps(q, t);
      if (accept && accept(q)) return t;
      u = bound(q);
    } catch (const Error& e) {
      // No noise reaches (epsilon, delta) with this many steps: try fewer.
      if (e.kind() != ErrorKind::kInvalidParameter) throw;
      if (!have_error) first_error = e;
      have_error = true;
      u = std::numeric_limits<double>::infinity();
    }
    if (u < best) {
      best = u;
      best_t = t;
    } else if (!accept && u > kGiveUp * best) {
      break;
    }
    if (t == 1) break;
  }
  if (!std::isfinite(best)) throw first_error;
  return best_t;
}

}  // namespace dperm
