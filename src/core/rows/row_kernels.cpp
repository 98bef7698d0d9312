// The per-row arithmetic of a full pass (row_kernels.hpp states the order
// every kernel keeps).
#include "dperm/rows/row_kernels.hpp"

#ifdef DPERM_ROW_AVX2
#include <immintrin.h>
#endif

namespace dperm {
namespace {

void RowMarginsPortable(const double* x, int64_t stride, int64_t count, int d, const double* w,
                        bool intercept, double* m) {
  for (int64_t i = 0; i < count; i++) {
    double v = FourSumDot(w, x + i * stride, d);
    if (intercept) v += w[d];
    m[i] = v;
  }
}

#ifdef DPERM_ROW_AVX2
// How far ahead of the rows it reads the margin kernel prefetches: about 8
// rows of BANK's 43 doubles (measured: 8 rows ahead 0.79 of the time of no
// prefetch, 16 rows 0.83, on the 2-core EPYC the benchmarks run on).
constexpr int64_t kPrefetchBytes = 2560;

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
    // The rows kPrefetchBytes ahead, asked for now (a prefetch never faults,
    // past the end included): the pass is bound by reading rows, and the
    // hardware's own prefetcher leaves about a fifth of the time waiting
    // (bench/results/pass_kernels.md).
    for (const char *ahead = reinterpret_cast<const char*>(r0) + kPrefetchBytes,
                    *stop = reinterpret_cast<const char*>(r0 + 4 * stride) + kPrefetchBytes;
         ahead < stop; ahead += 64)
      __builtin_prefetch(ahead);
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

}  // namespace dperm
