// Sanitising and clipping of rows (docs/design.md section 4).
#include "dperm/rows/rows.hpp"
#include "dperm/rows/row_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace dperm {

namespace {

// Relative margin of ClipRow's fast path. The unscaled sum of squares is
// within about (d/2 + 1) u of the exact squared norm and the scaled norm
// below within (d + 4) u (u = eps/2): for every d under 10^9 their sum is
// far below 1e-6, so a row the fast path leaves unclipped would not be
// clipped by the scaled computation either.
const double kFastClipMargin = 1e-6;
// Below this bound the squares of tiny entries (subnormal or flushed) could
// matter against the bound; such rows take the scaled path.
const double kFastClipMinBound = 1e-100;

double ClipTolerance(int d) {
  return (static_cast<double>(d) + 8) * std::numeric_limits<double>::epsilon();
}

// Whether the row is finite, free of NaN and well inside the bound, so that
// it is its own clipped output (clipping was most of a pass's
// per-row cost). One loop of products, no division, no store; the squares
// summed as FourSumDot sums (row_kernels.hpp: four independent sums, so that
// the additions do not wait on each other). A NaN or infinite entry, or an
// overflow, makes the sum NaN or infinite and the row takes the scaled path
// of ClipRow.
bool InsideBound(const double* in, int d, double feature_bound) noexcept {
  const double squares = FourSumDot(in, in, d);
  return std::isfinite(squares) && feature_bound >= kFastClipMinBound &&
         std::sqrt(squares) <= feature_bound * (1.0 - ClipTolerance(d)) * (1.0 - kFastClipMargin);
}

}  // namespace

const double* ClippedRow(const double* in, int d, double feature_bound, double* scratch) noexcept {
  if (InsideBound(in, d, feature_bound)) return in;
  ClipRow(in, d, feature_bound, scratch);
  return scratch;
}

void ClipRow(const double* in, int d, double feature_bound, double* out) noexcept {
  // Fast path: a row InsideBound is its own output -- exactly what the
  // scaled computation below writes when it does not scale (the margin
  // kFastClipMargin is far above both computations' rounding), so every
  // output is bit-identical to the scaled path's. A row with a NaN entry
  // takes the scaled path, which zeroes it and then leaves the row as it
  // is when it is inside the bound.
  const double tol = ClipTolerance(d);
  if (InsideBound(in, d, feature_bound)) {
    if (out != in) memcpy(out, in, sizeof(double) * static_cast<size_t>(d));
    return;
  }

  int n_inf = 0;
  double max_abs = 0;
  for (int j = 0; j < d; j++) {
    double v = in[j];
    if (std::isnan(v)) v = 0;
    if (std::isinf(v)) n_inf++;
    out[j] = v;
    max_abs = std::max(max_abs, std::fabs(v));
  }
  // Rounding slack (tol above): the computed norm is within about (d + 4) u
  // of the exact one (u = eps/2; d squares and sums, a division per entry, a
  // square root), so aiming at (1 - tol) times the bound with tol = (d + 8)
  // eps leaves every row's exact norm at or below the bound.
  if (n_inf > 0) {
    double unit = feature_bound / std::sqrt(static_cast<double>(n_inf)) * (1.0 - tol);
    for (int j = 0; j < d; j++) out[j] = std::isinf(out[j]) ? std::copysign(unit, out[j]) : 0.0;
    return;
  }
  if (max_abs == 0) return;
  double scaled = 0;  // ||x / max_abs||^2, in [1, d]
  for (int j = 0; j < d; j++) scaled += (out[j] / max_abs) * (out[j] / max_abs);
  double norm = max_abs * std::sqrt(scaled);
  // Rows within tol of the bound are scaled too: their computed norm may be
  // below the bound while their exact norm is an ulp above it.
  if (norm > feature_bound * (1.0 - tol)) {
    // Divide in two steps so that neither factor overflows; aim tol under
    // the bound so rounding cannot leave a row above it.
    double factor = feature_bound / std::sqrt(scaled) * (1.0 - tol);
    for (int j = 0; j < d; j++) out[j] = (out[j] / max_abs) * factor;
  }
}

double LogisticLabel(double value) noexcept { return value > 0 ? 1.0 : -1.0; }

double HuberTarget(double value, double target_bound) noexcept {
  if (std::isnan(value)) return 0.0;
  return std::clamp(value, -target_bound, target_bound);
}

}  // namespace dperm
