// A release's memory estimate (memory.hpp).
#include "dperm/planning/memory.hpp"

#include <algorithm>

#include "dperm/algorithms/registry.hpp"
#include "dperm/losses/loss.hpp"

namespace dperm {

double ReleaseMemoryBytes(const Plan& p, bool streaming) {
  const AlgorithmSpec& spec = SpecFor(p.algorithm);
  const double dim = double(p.dim), n = double(p.n), k = double(std::max(p.classes, 1));
  const double vectors = double(spec.model_vectors + kSharedModelVectors) * dim;
  const double matrices = double(spec.model_matrices) * dim * dim;
  const double rows = streaming ? 0.0 : double(spec.row_arrays) * n;
  const double block = double(kFullPassBlockWork) + 3 * k;
  return 8 * (vectors + matrices + rows + block) + kModelTextBytes * dim;
}

double SelectionMemoryBytes(const L2Selection& s) {
  double largest = 0, coefficients = 0;
  for (const Plan& p : s.candidates) {
    largest = std::max(largest, ReleaseMemoryBytes(p, false));
    coefficients += 8 * double(p.dim);
  }
  return 8 * (double(s.n) * double(s.d + 1) + double(s.n)) + coefficients + largest;
}

}  // namespace dperm
