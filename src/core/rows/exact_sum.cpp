// Exact sums over rows on a public grid (exact_sum.hpp states the argument).
#include "dperm/rows/exact_sum.hpp"

#include "dperm/rows/row_kernels.hpp"

#include <algorithm>
#include <cmath>

namespace dperm {
namespace {

const double kTwo32 = 4294967296.0;
const double kInvTwo32 = 1.0 / 4294967296.0;
const double kTwo53 = 9007199254740992.0;

}  // namespace

double SumGrid(double bound) {
  if (!(bound > 0) || !std::isfinite(bound))
    throw Error(ErrorKind::kInternal, "SumGrid: the bound must be positive and finite");
  // bound = f 2^e with f in [1/2, 1): 2^(e - kSumRowBits) is the smallest
  // power of two q with bound <= 2^kSumRowBits q.
  int e = 0;
  std::frexp(bound, &e);
  return std::ldexp(1.0, e - kSumRowBits);
}

double SumSlack(int64_t n, int dim, double grid) {
  return double(n) * std::sqrt(double(dim)) * grid;
}

ExactSum::ExactSum(int dim, double grid)
    : grid_(grid), inv_(1.0 / grid), partial_(size_t(dim), 0), total_(size_t(dim), 0) {
  // 1/q is exact for a power of two; anything else is a caller's bug.
  if (!(grid > 0) || !std::isfinite(inv_) || std::ldexp(1.0, std::ilogb(grid)) != grid)
    throw Error(ErrorKind::kInternal, "ExactSum: the grid must be a power of two");
}

void ExactSum::AddScaled(int first, double c, const double* x, int d, bool intercept) {
  // c/q is exact (q a power of two), so fl(s x_j) = fl(c x_j)/q: the
  // contribution is rounded once, then put on the grid (row_kernels.hpp).
  AddRoundedRows(partial_.data() + first, &c, inv_, x, 0, 1, d, intercept);
  Counted();
}

void ExactSum::AddScaledRows(int first, const double* c, const double* x, int64_t stride,
                             int64_t count, int d, bool intercept) {
  // In chunks that end where Counted would flush: the same partial sums.
  while (count > 0) {
    const int64_t chunk = std::min<int64_t>(count, kFlushAdds - adds_);
    AddRoundedRows(partial_.data() + first, c, inv_, x, stride, chunk, d, intercept);
    adds_ += int(chunk);
    if (adds_ >= kFlushAdds) Flush();
    c += chunk;
    x += chunk * stride;
    count -= chunk;
  }
}

void ExactSum::Add(int j, double v) {
  partial_[size_t(j)] += RoundToGridInt(v * inv_);
  Counted();
}

void ExactSum::Flush() {
  for (size_t j = 0; j < total_.size(); j++) {
    total_[j] += partial_[j];
    partial_[j] = 0;
  }
  adds_ = 0;
}

void ExactSum::Merge(const ExactSum& other) {
  if (other.grid_ != grid_ || other.total_.size() != total_.size())
    throw Error(ErrorKind::kInternal, "ExactSum::Merge: another grid or size");
  for (size_t j = 0; j < total_.size(); j++)
    total_[j] += other.total_[j] + __int128(other.partial_[j]);
}

__int128 ExactSum::Units(int j) const { return total_[size_t(j)] + partial_[size_t(j)]; }

double ExactSum::Value(int j) const { return UnitsValue(Units(j), grid_); }

void ExactSum::Reset() {
  std::fill(partial_.begin(), partial_.end(), 0);
  std::fill(total_.begin(), total_.end(), 0);
  adds_ = 0;
}

double UnitsValue(__int128 units, double grid) noexcept {
  // The conversion rounds to nearest; times a power of two it is exact
  // (below overflow, which the bounds on rows exclude).
  return static_cast<double>(units) * grid;
}

void LimbAddScaled(double* __restrict lo, double s, const double* __restrict x, int d) noexcept {
  AddRoundedLimbs(lo, s, x, d);  // row_kernels.hpp
}

void LimbNormalise(double* __restrict lo, double* __restrict hi, int count) noexcept {
  for (int j = 0; j < count; j++) {
    // carry = round(lo/2^32) (|lo/2^32| < 2^21); lo - carry 2^32 is an
    // integer of magnitude <= 2^31, so the subtraction is exact.
    const double carry = (lo[j] * kInvTwo32 + sum_detail::kRound) - sum_detail::kRound;
    lo[j] -= carry * kTwo32;
    hi[j] += carry;
  }
}

bool LimbsValid(const double* lo, const double* hi, int count) noexcept {
  for (int j = 0; j < count; j++) {
    // Integer-valued and below 2^53 in magnitude (NaN fails every test).
    if (!(std::fabs(lo[j]) < kTwo53) || !(std::fabs(hi[j]) < kTwo53)) return false;
    if (std::floor(lo[j]) != lo[j] || std::floor(hi[j]) != hi[j]) return false;
  }
  return true;
}

void LimbCombine(double* lo, double* hi, const double* from_lo, const double* from_hi,
                 int count) noexcept {
  LimbNormalise(lo, hi, count);
  for (int j = 0; j < count; j++) {
    // from's low limb split exactly as LimbNormalise would, then added:
    // |lo| <= 2^31 + 2^31 and the high limbs stay below 2^52 for every
    // table of fewer than kMaxLimbRows rows.
    const double carry = (from_lo[j] * kInvTwo32 + sum_detail::kRound) - sum_detail::kRound;
    lo[j] += from_lo[j] - carry * kTwo32;
    hi[j] += from_hi[j] + carry;
  }
  LimbNormalise(lo, hi, count);
}

__int128 LimbUnits(double lo, double hi) noexcept {
  // Both are integers below 2^53 in magnitude: exact in int64.
  return __int128(static_cast<int64_t>(lo)) + __int128(static_cast<int64_t>(hi)) * (__int128(1) << 32);
}

}  // namespace dperm
