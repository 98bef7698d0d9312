// The noise multiplier sigma / sensitivity of the unit-level plan that
// dperm.train makes in memory (PlanInMemoryRelease), for dp_gd on logistic
// at d = 11, per k and epsilon: compiled against one build's src/core
// objects, so two builds (before and after the per-unit curves) can be
// compared plan for plan. The model's share: 0.9 epsilon (the count takes a
// tenth; units_estimate unset), delta as given.
// Build (one line): g++ -std=c++17 -O2 -Iinclude -I/usr/include/eigen3
//   -o /tmp/unit_noise bench/units/unit_noise.cpp src/core/*/*.o -pthread
// Usage: /tmp/unit_noise [delta]
#include <cstdio>
#include <cstdlib>

#include "dperm/planning/release_plan.hpp"

int main(int argc, char** argv) {
  using namespace dperm;
  const double delta = argc > 1 ? std::atof(argv[1]) : 1e-6;
  std::printf("| epsilon (model: 0.9 epsilon) | k | n | steps T | noise multiplier sigma/C |\n");
  std::printf("|---:|---:|---:|---:|---:|\n");
  for (double eps : {1.0, 3.0, 10.0})
    for (int k : {1, 2, 4, 7}) {
      Options o;
      o.epsilon = 0.9 * eps;
      o.delta = delta;
      o.dimension = 11;
      o.has_algorithm = true;
      o.algorithm = Algorithm::kDpGd;
      o.max_rows_per_unit = k;
      const int64_t n = 446 * k;
      Plan p = PlanInMemoryRelease(o, LossKind::kLogistic, n, 11).plan;
      std::printf("| %g | %d | %lld | %d | %.4g |\n", eps, k, static_cast<long long>(n),
                  static_cast<int>(p.noisy_steps), p.noise_multiplier);
    }
}
