// Sanitising and clipping of rows (DESIGN.md section 4).
#include "dperm/rows.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dperm {

void ClipRow(const double* in, int d, double feature_bound, double* out) noexcept {
  int n_inf = 0;
  double max_abs = 0;
  for (int j = 0; j < d; j++) {
    double v = in[j];
    if (std::isnan(v)) v = 0;
    if (std::isinf(v)) n_inf++;
    out[j] = v;
    max_abs = std::max(max_abs, std::fabs(v));
  }
  // Rounding slack: the computed norm is within about (d + 4) u of the exact
  // one (u = eps/2; d squares and sums, a division per entry, a square
  // root), so aiming at (1 - tol) times the bound with tol = (d + 8) eps
  // leaves every row's exact norm at or below the bound.
  const double tol = (static_cast<double>(d) + 8) * std::numeric_limits<double>::epsilon();
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
