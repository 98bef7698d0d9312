// How raw rows become training rows: the sanitising and clipping rules of
// docs/design.md section 4. Data-dependent errors would leak, so nothing here
// fails on values; shape errors are the boundary's business.
#pragma once
#include "dperm/util/errors.hpp"
#include "dperm/options/options.hpp"

namespace dperm {

// Writes the clipped row to out[0..d): NaN entries become 0; a row with
// infinite entries becomes the limit of clipping (feature_bound times the unit
// vector of the signs of its infinite entries); any other row with norm above
// feature_bound is scaled down to norm feature_bound. The norm is computed
// with scaling so huge finite values do not overflow. To absorb rounding, the
// target is feature_bound (1 - (d + 8) eps) and rows within that relative
// distance of the bound are scaled too, so the exact norm of every output is
// <= feature_bound.
void ClipRow(const double* in, int d, double feature_bound, double* out) noexcept;

// The clipped row without a copy where none is needed: `in` itself when the
// row is finite, free of NaN and inside the bound (ClipRow would copy it
// unchanged), else ClipRow's output written to scratch[0..d).
const double* ClippedRow(const double* in, int d, double feature_bound, double* scratch) noexcept;

// Label of a logistic row: +1 when the value is > 0, else -1 (NaN is -1).
double LogisticLabel(double value) noexcept;

// Target of a Huber row: NaN becomes 0 and values are clamped to
// [-target_bound, target_bound] (the public option, <= 1e150, which keeps
// every loss value finite). This is sanitising, not a sensitivity argument:
// the Huber gradient is bounded by huber_delta whatever the target, so the
// clamp changes no constant (plan_steps.hpp); it only keeps outliers beyond
// the public scale from pulling the model.
double HuberTarget(double value, double target_bound) noexcept;

}  // namespace dperm
