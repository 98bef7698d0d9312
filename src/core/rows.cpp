// Sanitising and clipping of rows (DESIGN.md section 4).
#include "dperm/rows.hpp"

#include <algorithm>
#include <cmath>
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

}  // namespace

void ClipRow(const double* in, int d, double feature_bound, double* out) noexcept {
  // Fast path (issue 12: clipping was most of a pass's per-row cost): most
  // rows are finite and well inside the bound, and such a row is its own
  // output with NaN entries zeroed -- exactly what the scaled computation
  // below writes when it does not scale. One pass, no division; four sums
  // so that the additions do not wait on each other. An infinite entry or
  // an overflow makes the sum infinite and the row takes the scaled path.
  const double tol = (static_cast<double>(d) + 8) * std::numeric_limits<double>::epsilon();
  double sums[4] = {0, 0, 0, 0};
  int j = 0;
  for (; j + 4 <= d; j += 4)
    for (int k = 0; k < 4; k++) {
      double v = in[j + k];
      v = v == v ? v : 0.0;  // NaN -> 0
      out[j + k] = v;
      sums[k] += v * v;
    }
  for (; j < d; j++) {
    double v = in[j];
    v = v == v ? v : 0.0;
    out[j] = v;
    sums[0] += v * v;
  }
  double squares = (sums[0] + sums[1]) + (sums[2] + sums[3]);
  if (std::isfinite(squares) && feature_bound >= kFastClipMinBound &&
      std::sqrt(squares) <= feature_bound * (1.0 - tol) * (1.0 - kFastClipMargin))
    return;

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
    for (int j = 0; j < d; j++)
      out[j] = std::isinf(out[j]) ? std::copysign(unit, out[j]) : 0.0;
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
