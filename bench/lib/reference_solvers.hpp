// Reference pieces the benches and the mechanism tests share (bench code:
// tests may include it, never the reverse): the exact minimiser by damped
// Newton, seeded training, and a plan with its noise turned off.
#pragma once
#include "dperm/losses/objective.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"
#include "dperm/release/train_model.hpp"

#include <Eigen/Dense>
#include <cstdint>
#include <vector>

namespace dperm::testing {

// The exact minimiser of a smooth strongly convex objective by damped
// Newton's method on its Hessian (independent of every mechanism).
inline Eigen::VectorXd NewtonMinimiser(const Objective& f) {
  Eigen::VectorXd w = Eigen::VectorXd::Zero(f.dim());
  for (int it = 0; it < 200; it++) {
    Eigen::VectorXd g = f.Gradient(w);
    if (g.norm() < 1e-14) break;
    Eigen::VectorXd step = f.Hessian(w).partialPivLu().solve(g);
    // Backtracking while far from the minimiser; near it the decrease is
    // below the rounding of F and full steps converge quadratically.
    double t = 1, fw = f.Value(w);
    if (g.norm() > 1e-6)
      while (f.Value(w - t * step) > fw - 1e-4 * t * g.dot(step) && t > 1e-10) t /= 2;
    w -= t * step;
  }
  return w;
}

inline Eigen::VectorXd ToVector(const std::vector<double>& v) {
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

// Trains by the plan with a seeded generator.
inline Eigen::VectorXd TrainSeeded(const Plan& p, const std::vector<double>& rows, uint64_t seed) {
  SecureRng rng = SecureRng::FromSeed(seed);
  return ToVector(TrainModel(p, rows.data(), rng));
}

// The plan with its noise turned off: training then returns the noiseless output.
inline Plan Noiseless(Plan p) {
  p.noise_scale = 0;
  return p;
}

}  // namespace dperm::testing
