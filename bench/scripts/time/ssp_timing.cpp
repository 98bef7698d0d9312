// BANK timing of algorithm => 'ssp' against dperm's default (bench/reports/ssp.md):
// plans and trains both on the whole table in memory (core only, no server),
// printing per epsilon the algorithm, its planned passes over the rows
// (gradient evaluations / n, plus the stage-0 offset's one pass) and the
// median wall time of `repeats` fits.
// Input: the heldout driver's DATA file (bench/scripts/heldout/heldout_main.cpp).
// Build: g++ -std=c++17 -O2 -Iinclude -I/usr/include/eigen3
//   bench/scripts/time/ssp_timing.cpp src/core/*/*.o -o /tmp/ssp_timing -pthread
// Usage: ssp_timing DATA [repeats]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "dperm/algorithms/registry.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  std::FILE* f = std::fopen(argv[1], "rb");
  if (f == nullptr) return 2;
  int64_t n = 0;
  int32_t d = 0, loss = 0;
  if (std::fread(&n, 8, 1, f) != 1 || std::fread(&d, 4, 1, f) != 1 ||
      std::fread(&loss, 4, 1, f) != 1)
    return 2;
  std::vector<double> rows(size_t(n) * (d + 1));
  if (std::fread(rows.data(), 8, rows.size(), f) != rows.size()) return 2;
  std::fclose(f);
  std::printf(
      "| eps | method | algorithm | l2 | passes (planned) | seconds (median of %d) |\n|---:|---|---|---:|---:|---:|\n",
      repeats);
  for (double eps : {0.1, 0.5, 1.0, 2.0})
    for (int ssp = 0; ssp < 2; ssp++) {
      dperm::Options o;
      o.epsilon = eps;
      o.delta = 1e-6;
      o.fit_intercept = true;
      o.feature_bound = 1;
      o.has_l2 = false;           // as SQL without l2: DefaultL2
      o.has_algorithm = false;    // DefaultAlgorithm
      o.intercept_offset = true;  // as SQL: the intercept on the private offset
      if (ssp) o.algorithm = dperm::Algorithm::kSsp, o.has_algorithm = true;
      const dperm::Plan plan = dperm::PlanRelease(o, dperm::LossKind::kLogistic, n, d);
      std::vector<double> secs;
      for (int r = 0; r < repeats; r++) {
        dperm::SecureRng rng = dperm::SecureRng::FromSeed(uint64_t(r + 1));
        auto start = std::chrono::steady_clock::now();
        std::vector<double> w = dperm::TrainModel(plan, rows.data(), rng);
        secs.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
      std::sort(secs.begin(), secs.end());
      // Full passes: the plan's gradient evaluations / n, or its full-batch
      // iterations (dp_gd), plus stage 0's one pass.
      const double own = plan.gradient_evaluations > 0
                             ? double(plan.gradient_evaluations) / double(n)
                             : double(plan.iterations);
      const double passes = own + (plan.offset.epsilon > 0 ? 1 : 0);
      std::printf("| %g | %s | %s | %.3g | %.0f | %.3f |\n", eps,
                  ssp ? "algorithm => 'ssp'" : "default", dperm::AlgorithmName(plan.algorithm),
                  plan.mu, passes, secs[secs.size() / 2]);
      std::fflush(stdout);
    }
  return 0;
}
