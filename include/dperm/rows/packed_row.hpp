// One row's packed sums (ssp's moments and dp_newton's passes): the
// weighted gradient g t and the upper triangle of c t t^T, t = (x, 1) (x
// alone without an intercept), off-diagonal entries times sqrt 2 so that
// the packed vector's norm is ||c t t^T||_F. The in-memory objective
// (LinearObjective::PackedSums, into an ExactSum) and a streaming curvature
// pass (streaming.cpp, into the state's limbs) add rows through this one
// function, so the two round the same products to the same integers.
#pragma once

#include <cmath>
#include <cstdint>

namespace dperm {

// The number of packed values of a model of dim coordinates: dim gradient
// entries, then dim (dim + 1)/2 of the triangle.
inline int64_t PackedCount(int dim) { return int64_t(dim) + int64_t(dim) * (dim + 1) / 2; }

// Adds row x (d features; dim = d + intercept) to `sink`, which has
// AddScaled(first, s, x, count, intercept) (round(s x_j / q) to entries
// first + j, and round(s / q) to first + count when intercept) and
// Add(j, v) (round(v / q) to entry j), as ExactSum does. Layout: entries
// 0 .. dim - 1 are g t; then for each row j of the triangle its entries
// k = j .. dim - 1, so (j, k) is at dim + j dim - j (j - 1)/2 + (k - j).
// Each product is the same double on every path: g t_j one rounding of g
// x_j, c x_j x_j, (sqrt 2 c x_j) x_k.
template <class Sink>
inline void AddPackedRow(Sink& sink, int dim, const double* x, int d, bool intercept, double g,
                         double c) {
  static const double root2 = std::sqrt(2.0);
  sink.AddScaled(0, g, x, d, intercept);
  int first = dim;
  for (int j = 0; j < d; j++) {
    sink.Add(first, c * x[j] * x[j]);  // the diagonal, packed weight 1
    // (j, k) for k > j, weight sqrt 2, and (j, intercept) = sqrt 2 x_j.
    sink.AddScaled(first + 1, root2 * c * x[j], x + j + 1, d - j - 1, intercept);
    first += dim - j;
  }
  if (intercept) sink.Add(first, c);  // (intercept, intercept): c times 1
}

}  // namespace dperm
