// Exact sums over rows on a public grid (exact_sum.hpp states the argument).
#include "dperm/rows/exact_sum.hpp"

#include <algorithm>
#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#ifdef DPERM_ROW_AVX2
#include <immintrin.h>
#endif

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

namespace {

using sum_detail::kRound;
using sum_detail::kRoundBits;

// One row's rounded contributions, two coordinates at a time where SSE2 is
// there (bit-identical to RoundToGridInt: maxpd(t, -clamp) returns -clamp
// for a NaN t, as Clamp does).
inline void AddRoundedRow(int64_t* __restrict p, double s, const double* __restrict x, int d) {
  int j = 0;
#if defined(__SSE2__)
  const __m128d vs = _mm_set1_pd(s), low = _mm_set1_pd(-kSumClamp), high = _mm_set1_pd(kSumClamp),
                round = _mm_set1_pd(kRound);
  const __m128i round_bits = _mm_set1_epi64x(kRoundBits);
  for (; j + 2 <= d; j += 2) {
    __m128d t = _mm_min_pd(_mm_max_pd(_mm_mul_pd(vs, _mm_loadu_pd(x + j)), low), high);
    const __m128i units = _mm_sub_epi64(_mm_castpd_si128(_mm_add_pd(t, round)), round_bits);
    __m128i* out = reinterpret_cast<__m128i*>(p + j);
    _mm_storeu_si128(out, _mm_add_epi64(_mm_loadu_si128(out), units));
  }
#endif
  for (; j < d; j++) p[j] += RoundToGridInt(s * x[j]);
}

void AddRoundedRowsPortable(int64_t* p, const double* c, double inv, const double* x,
                            int64_t stride, int64_t count, int d, bool intercept) {
  for (int64_t i = 0; i < count; i++) {
    const double s = c[i] * inv;
    AddRoundedRow(p, s, x + i * stride, d);
    if (intercept) p[d] += RoundToGridInt(s);
  }
}

// lo[j] += round(clamp(s x_j)) as integer-valued doubles, two at a time
// where SSE2 is there (bit-identical to RoundToGrid).
void AddRoundedLimbsPortable(double* __restrict lo, double s, const double* __restrict x, int d) {
  int j = 0;
#if defined(__SSE2__)
  const __m128d vs = _mm_set1_pd(s), low = _mm_set1_pd(-kSumClamp), high = _mm_set1_pd(kSumClamp),
                round = _mm_set1_pd(kRound);
  for (; j + 2 <= d; j += 2) {
    const __m128d t = _mm_min_pd(_mm_max_pd(_mm_mul_pd(vs, _mm_loadu_pd(x + j)), low), high);
    const __m128d units = _mm_sub_pd(_mm_add_pd(t, round), round);
    _mm_storeu_pd(lo + j, _mm_add_pd(_mm_loadu_pd(lo + j), units));
  }
#endif
  for (; j < d; j++) lo[j] += RoundToGrid(s * x[j]);
}

#ifdef DPERM_ROW_AVX2
// One vector of four rounded contributions: round(clamp(s x_j)), j = 0..3,
// as int64 lanes (RoundToGridInt lane by lane).
__attribute__((target("avx2"))) inline __m256i RoundedUnits(__m256d vs, const double* x,
                                                            __m256d low, __m256d high,
                                                            __m256d round, __m256i round_bits) {
  const __m256d t = _mm256_min_pd(_mm256_max_pd(_mm256_mul_pd(vs, _mm256_loadu_pd(x)), low), high);
  return _mm256_sub_epi64(_mm256_castpd_si256(_mm256_add_pd(t, round)), round_bits);
}

// AddRoundedRowsPortable four coordinates and four rows at a time: each
// coordinate's four rounded integers are added together, then to p once
// (one load and one store of p per four rows, not per row). Integer sums
// of at most 4 (2^46 + 1) < 2^63 per step: exact, so p is the portable
// kernel's whatever the grouping.
__attribute__((target("avx2"))) void AddRoundedRowsAvx2(int64_t* __restrict p, const double* c,
                                                        double inv, const double* x, int64_t stride,
                                                        int64_t count, int d, bool intercept) {
  const __m256d low = _mm256_set1_pd(-kSumClamp), high = _mm256_set1_pd(kSumClamp),
                round = _mm256_set1_pd(kRound);
  const __m256i round_bits = _mm256_set1_epi64x(kRoundBits);
  const int d4 = d & ~3;
  int64_t i = 0;
  for (; i + 4 <= count; i += 4) {
    const double s0 = c[i] * inv, s1 = c[i + 1] * inv, s2 = c[i + 2] * inv, s3 = c[i + 3] * inv;
    const double* r0 = x + i * stride;
    const double* r1 = r0 + stride;
    const double* r2 = r1 + stride;
    const double* r3 = r2 + stride;
    const __m256d v0 = _mm256_set1_pd(s0), v1 = _mm256_set1_pd(s1), v2 = _mm256_set1_pd(s2),
                  v3 = _mm256_set1_pd(s3);
    for (int j = 0; j < d4; j += 4) {
      const __m256i u01 = _mm256_add_epi64(RoundedUnits(v0, r0 + j, low, high, round, round_bits),
                                           RoundedUnits(v1, r1 + j, low, high, round, round_bits));
      const __m256i u23 = _mm256_add_epi64(RoundedUnits(v2, r2 + j, low, high, round, round_bits),
                                           RoundedUnits(v3, r3 + j, low, high, round, round_bits));
      __m256i* out = reinterpret_cast<__m256i*>(p + j);
      _mm256_storeu_si256(out,
                          _mm256_add_epi64(_mm256_loadu_si256(out), _mm256_add_epi64(u01, u23)));
    }
    for (int j = d4; j < d; j++)
      p[j] += (RoundToGridInt(s0 * r0[j]) + RoundToGridInt(s1 * r1[j])) +
              (RoundToGridInt(s2 * r2[j]) + RoundToGridInt(s3 * r3[j]));
    if (intercept)
      p[d] += (RoundToGridInt(s0) + RoundToGridInt(s1)) + (RoundToGridInt(s2) + RoundToGridInt(s3));
  }
  for (; i < count; i++) {
    const double s = c[i] * inv;
    const double* r = x + i * stride;
    const __m256d vs = _mm256_set1_pd(s);
    for (int j = 0; j < d4; j += 4) {
      __m256i* out = reinterpret_cast<__m256i*>(p + j);
      _mm256_storeu_si256(out,
                          _mm256_add_epi64(_mm256_loadu_si256(out),
                                           RoundedUnits(vs, r + j, low, high, round, round_bits)));
    }
    for (int j = d4; j < d; j++) p[j] += RoundToGridInt(s * r[j]);
    if (intercept) p[d] += RoundToGridInt(s);
  }
}

// AddRoundedLimbsPortable four coordinates at a time.
__attribute__((target("avx2"))) void AddRoundedLimbsAvx2(double* __restrict lo, double s,
                                                         const double* __restrict x, int d) {
  const __m256d vs = _mm256_set1_pd(s), low = _mm256_set1_pd(-kSumClamp),
                high = _mm256_set1_pd(kSumClamp), round = _mm256_set1_pd(kRound);
  int j = 0;
  for (; j + 4 <= d; j += 4) {
    const __m256d t =
        _mm256_min_pd(_mm256_max_pd(_mm256_mul_pd(vs, _mm256_loadu_pd(x + j)), low), high);
    const __m256d units = _mm256_sub_pd(_mm256_add_pd(t, round), round);
    _mm256_storeu_pd(lo + j, _mm256_add_pd(_mm256_loadu_pd(lo + j), units));
  }
  for (; j < d; j++) lo[j] += RoundToGrid(s * x[j]);
}
#endif

}  // namespace

void AddRoundedRows(int64_t* p, const double* c, double inv, const double* x, int64_t stride,
                    int64_t count, int d, bool intercept, RowIsa isa) {
#ifdef DPERM_ROW_AVX2
  if (isa == RowIsa::kAvx2 && BestRowIsa() == RowIsa::kAvx2)
    return AddRoundedRowsAvx2(p, c, inv, x, stride, count, d, intercept);
#endif
  (void)isa;
  AddRoundedRowsPortable(p, c, inv, x, stride, count, d, intercept);
}

void AddRoundedLimbs(double* lo, double s, const double* x, int d, RowIsa isa) {
#ifdef DPERM_ROW_AVX2
  if (isa == RowIsa::kAvx2 && BestRowIsa() == RowIsa::kAvx2)
    return AddRoundedLimbsAvx2(lo, s, x, d);
#endif
  (void)isa;
  AddRoundedLimbsPortable(lo, s, x, d);
}

void ExactSum::AddScaled(int first, double c, const double* x, int d, bool intercept) {
  // c/q is exact (q a power of two), so fl(s x_j) = fl(c x_j)/q: the
  // contribution is rounded once, then put on the grid (AddRoundedRows).
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
  AddRoundedLimbs(lo, s, x, d);  // the portable or the AVX2 kernel
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
  return __int128(static_cast<int64_t>(lo)) +
         __int128(static_cast<int64_t>(hi)) * (__int128(1) << 32);
}

}  // namespace dperm
