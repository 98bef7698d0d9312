// The per-row arithmetic of a full pass (row_kernels.hpp states the order
// every kernel keeps).
#include "dperm/rows/row_kernels.hpp"

#include "dperm/rows/exact_sum.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#define DPERM_ROW_AVX2 1
#include <immintrin.h>
#endif

namespace dperm {
namespace {

using sum_detail::kRound;
using sum_detail::kRoundBits;

void RowMarginsPortable(const double* x, int64_t stride, int64_t count, int d, const double* w,
                        bool intercept, double* m) {
  for (int64_t i = 0; i < count; i++) {
    double v = FourSumDot(w, x + i * stride, d);
    if (intercept) v += w[d];
    m[i] = v;
  }
}

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
// The end of FourSumDot for a row whose four sums are the lanes of `a`.
__attribute__((target("avx2"))) inline double FinishDot(__m256d a, const double* w, const double* x,
                                                        int d4, int d, bool intercept) {
  alignas(32) double s[4];
  _mm256_store_pd(s, a);
  double m0 = s[0];
  for (int j = d4; j < d; j++) m0 += w[j] * x[j];
  double v = (m0 + s[1]) + (s[2] + s[3]);
  if (intercept) v += w[d];
  return v;
}

// Four rows at a time (four independent chains of additions), each row's
// four sums in one register's lanes.
__attribute__((target("avx2"))) void RowMarginsAvx2(const double* x, int64_t stride, int64_t count,
                                                     int d, const double* w, bool intercept,
                                                     double* m) {
  const int d4 = d & ~3;
  int64_t i = 0;
  for (; i + 4 <= count; i += 4) {
    const double* r0 = x + i * stride;
    const double* r1 = r0 + stride;
    const double* r2 = r1 + stride;
    const double* r3 = r2 + stride;
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd(), a2 = _mm256_setzero_pd(),
            a3 = _mm256_setzero_pd();
    for (int j = 0; j < d4; j += 4) {
      const __m256d wv = _mm256_loadu_pd(w + j);
      a0 = _mm256_add_pd(a0, _mm256_mul_pd(wv, _mm256_loadu_pd(r0 + j)));
      a1 = _mm256_add_pd(a1, _mm256_mul_pd(wv, _mm256_loadu_pd(r1 + j)));
      a2 = _mm256_add_pd(a2, _mm256_mul_pd(wv, _mm256_loadu_pd(r2 + j)));
      a3 = _mm256_add_pd(a3, _mm256_mul_pd(wv, _mm256_loadu_pd(r3 + j)));
    }
    m[i] = FinishDot(a0, w, r0, d4, d, intercept);
    m[i + 1] = FinishDot(a1, w, r1, d4, d, intercept);
    m[i + 2] = FinishDot(a2, w, r2, d4, d, intercept);
    m[i + 3] = FinishDot(a3, w, r3, d4, d, intercept);
  }
  for (; i < count; i++) {
    const double* r = x + i * stride;
    __m256d a = _mm256_setzero_pd();
    for (int j = 0; j < d4; j += 4)
      a = _mm256_add_pd(a, _mm256_mul_pd(_mm256_loadu_pd(w + j), _mm256_loadu_pd(r + j)));
    m[i] = FinishDot(a, w, r, d4, d, intercept);
  }
}

// AddRoundedRowsPortable four coordinates at a time.
__attribute__((target("avx2"))) void AddRoundedRowsAvx2(int64_t* __restrict p, const double* c,
                                                         double inv, const double* x,
                                                         int64_t stride, int64_t count, int d,
                                                         bool intercept) {
  const __m256d low = _mm256_set1_pd(-kSumClamp), high = _mm256_set1_pd(kSumClamp),
                round = _mm256_set1_pd(kRound);
  const __m256i round_bits = _mm256_set1_epi64x(kRoundBits);
  const int d4 = d & ~3;
  for (int64_t i = 0; i < count; i++) {
    const double s = c[i] * inv;
    const double* r = x + i * stride;
    const __m256d vs = _mm256_set1_pd(s);
    for (int j = 0; j < d4; j += 4) {
      const __m256d t =
          _mm256_min_pd(_mm256_max_pd(_mm256_mul_pd(vs, _mm256_loadu_pd(r + j)), low), high);
      const __m256i units =
          _mm256_sub_epi64(_mm256_castpd_si256(_mm256_add_pd(t, round)), round_bits);
      __m256i* out = reinterpret_cast<__m256i*>(p + j);
      _mm256_storeu_si256(out, _mm256_add_epi64(_mm256_loadu_si256(out), units));
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

RowIsa BestRowIsa() {
#ifdef DPERM_ROW_AVX2
  static const RowIsa best = [] {
    __builtin_cpu_init();  // idempotent; in case no constructor has run it yet
    return __builtin_cpu_supports("avx2") ? RowIsa::kAvx2 : RowIsa::kPortable;
  }();
  return best;
#else
  return RowIsa::kPortable;
#endif
}

void RowMargins(const double* x, int64_t stride, int64_t count, int d, const double* w,
                bool intercept, double* m, RowIsa isa) {
#ifdef DPERM_ROW_AVX2
  if (isa == RowIsa::kAvx2 && BestRowIsa() == RowIsa::kAvx2)
    return RowMarginsAvx2(x, stride, count, d, w, intercept, m);
#endif
  (void)isa;
  RowMarginsPortable(x, stride, count, d, w, intercept, m);
}

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
  if (isa == RowIsa::kAvx2 && BestRowIsa() == RowIsa::kAvx2) return AddRoundedLimbsAvx2(lo, s, x, d);
#endif
  (void)isa;
  AddRoundedLimbsPortable(lo, s, x, d);
}

}  // namespace dperm
