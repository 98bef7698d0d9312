// The per-row arithmetic of a full pass, with one order of floating-point
// operations whatever instructions carry it out.
//
// A margin <w, x> is a sum of d products, and a sum's value depends on the
// order of its additions. dperm fixes that order here, once: four
// interleaved sums s_l over the coordinates j = l (mod 4) below 4 floor(d/4),
// in increasing j, the leftover coordinates added to s_0 in order, then
// (s_0 + s_1) + (s_2 + s_3). The streaming pass (streaming.cpp) and the
// in-memory objective (loss.cpp) both use it, so a model trained on the
// same rows is the same bits in memory and streaming, on a CPU with AVX2
// or without: the AVX2 kernel keeps s_0..s_3 in the four lanes of one
// register, which performs exactly the scalar operations lane by lane. No
// kernel contracts a product and a sum into one fused multiply-add (the
// build never enables FMA; the AVX2 functions are compiled for AVX2 only).
//
// WHY NO FMA (issue 50 asked for it where it is safe). Privacy would allow
// it in the margins: a margin only chooses f'(m), and every sensitivity
// bounds |f'| over all margins, so no bound depends on how a margin is
// rounded. And in the rounding to the exact sums' grid (exact_sum.hpp) one
// fused round(c x_j/q) would only tighten the per-coordinate error q/2 +
// u|a_ij| to q/2. Either would break the one order above: a model would
// be other bits on a CPU without FMA, in a streaming pass (PassAddRow) or
// on a Citus worker of another CPU. And it would buy nothing: a full pass
// waits on reading its rows (perf: the margin loop's samples sit on its
// loads), not on arithmetic, so a pass is made faster by reading rows once
// (loss.hpp, FullPassTileRows), prefetching them and fewer stores
// (exact_sum.cpp), which keep every bit (bench/results/pass_kernels.md).
#pragma once
#include <cstdint>

// Defined where the AVX2 kernels are compiled (x86-64 with GCC or Clang);
// whether they run is BestRowIsa()'s decision, at run time.
#if defined(__x86_64__) && defined(__GNUC__)
#define DPERM_ROW_AVX2 1
#endif

namespace dperm {

// <w, x> over d coordinates in the order above.
inline double FourSumDot(const double* w, const double* x, int d) {
  double m0 = 0, m1 = 0, m2 = 0, m3 = 0;
  int j = 0;
  for (; j + 4 <= d; j += 4) {
    m0 += w[j] * x[j];
    m1 += w[j + 1] * x[j + 1];
    m2 += w[j + 2] * x[j + 2];
    m3 += w[j + 3] * x[j + 3];
  }
  for (; j < d; j++) m0 += w[j] * x[j];
  return (m0 + m1) + (m2 + m3);
}

// Which instructions the kernels below use: the best this CPU has unless a
// test asks for the portable ones. The results are the same bits either way.
enum class RowIsa { kPortable, kAvx2 };
RowIsa BestRowIsa();

// m[i] = FourSumDot(w, x + i stride, d) (+ w[d] when `intercept`), i < count.
void RowMargins(const double* x, int64_t stride, int64_t count, int d, const double* w,
                bool intercept, double* m, RowIsa isa = BestRowIsa());

}  // namespace dperm
