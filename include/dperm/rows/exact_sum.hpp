// Exact sums over rows (docs/design.md section 4: "sums over rows are exact up to
// a bound the sensitivity accounts for").
//
// WHY. Every sensitivity in dperm is derived in exact arithmetic, but a
// floating-point sum of n terms carries a rounding error of up to
// (n - 1) u sum |t_i| (u = 2^-53) that depends on the order of the rows and
// on every other row. Two neighbouring tables can then give sums that
// differ by more than the one changed row allows: at n = 10^7 the bound is
// about 1% of the sensitivity, far above the release grid's 2^-10 slack
// (Casacuberta, Shoemate, Vadhan & Wagaman, "Widespread underestimation of
// sensitivity in differentially private libraries", CCS 2022).
//
// HOW. Each row's contribution v (one coordinate of f'(m) x, or f'(m) for
// an intercept) is rounded to a public grid q = 2^k: I = round(v/q), an
// integer with |I| <= 2^kSumRowBits (v/q is clamped first, which is
// non-expansive and the identity on every contribution within the bound
// the grid was chosen for). The integers are summed exactly: in 128-bit
// integers in memory (ExactSum), in two integer-valued float8 limbs in the
// streaming state (the Limb* functions). The sum q sum_i I_i depends on
// neither the order of the rows nor on how they were split into partial
// sums, and the double that reports it is one rounding of that integer.
//
// SENSITIVITY (the "sum slack"; plan.sum_slack, BasePlan). Let a_i be a
// row's exact contribution vector, ||a_i|| <= L, and r_i = q I_i its
// rounded one. Per coordinate |r_ij - a_ij| <= q/2 + u |a_ij| (the product
// f'(m) x_j is rounded once before the grid), and u |a_ij| <= u L <=
// 2^(kSumRowBits - 53) q = q/128, so ||r_i - a_i|| <= sqrt(dim) (q/2 + q/128).
// Reporting the exact sum as a double and dividing by the batch size adds
// two more roundings of the mean, each at most u |mean_j| <= q/128 per
// coordinate. Hence the computed mean of any m rows lies within
// sqrt(dim) q of the exact mean of the a_i, whatever the rows, and:
//  (a) at one point w for both neighbours (a noisy gradient at a released
//      w), the two computed means differ by at most 2L/m + 2 sqrt(dim) q
//      <= 2 (L + m sqrt(dim) q)/m;
//  (b) at different points (output perturbation's iterations, whose w_t
//      depend on the rows), each step's computed mean is the exact one
//      plus an error of norm <= sqrt(dim) q on each side, and the
//      contraction arguments see 2L/n + 2 sqrt(dim) q = 2 (L + n sqrt(dim) q)/n.
// So every argument that bounds one row's gradient by L holds with
// L + n sqrt(dim) q (m <= n): SumSlack is that term, and the mechanisms'
// sensitivities count it (plan_steps.hpp, PlanOutputNoise and
// PlanGradientNoise; svrg_common.cpp; objective perturbation's solver
// distance). With q < 2^(1 - kSumRowBits) L it is below
// n sqrt(dim) 2^-45 L: 2e-6 L at n = 10^7, dim = 51.
#pragma once
#include "dperm/rows/row_kernels.hpp"
#include "dperm/util/errors.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

namespace dperm {

// |I| <= 2^kSumRowBits for every rounded contribution (after the clamp).
constexpr int kSumRowBits = 46;
// The clamp of v/q: 2^46 (1 + 2^-20), above every contribution within the
// bound (|fl(c x_j)| <= L (1 + u) <= 2^46 q (1 + u)).
constexpr double kSumClamp = 70368811286528.0;
// Rows added to a low limb between two normalisations (LimbNormalise):
// after one, |lo| <= 2^31, and 64 rows add at most 64 (kSumClamp + 1/2),
// so |lo| stays below 2^53 and every addition is exact.
constexpr int kLimbWindow = 64;
// More rows than this are refused by the plans that use limbs (the high
// limb holds at most n 2^15 < 2^53).
constexpr int64_t kMaxLimbRows = int64_t(1) << 37;

// The grid for per-coordinate contributions of magnitude <= bound: the
// smallest power of two q with bound <= 2^kSumRowBits q (bound > 0, finite).
double SumGrid(double bound);
// n sqrt(dim) q: what the rounding adds to the per-row bound L (above).
double SumSlack(int64_t n, int dim, double grid);

namespace sum_detail {
constexpr double kRound = 6755399441055744.0;         // 1.5 2^52
constexpr int64_t kRoundBits = 0x4338000000000000LL;  // its bits
// v/q clamped to +-kSumClamp; NaN becomes -kSumClamp (bounded, deterministic).
inline double Clamp(double t) {
  t = t > -kSumClamp ? t : -kSumClamp;
  return t < kSumClamp ? t : kSumClamp;
}
}  // namespace sum_detail

// round(t) of the clamped t = v/q as an integer-valued double (nearest,
// ties to even): |t| < 2^51, so t + 1.5 2^52 lies in [2^52, 2^53), where
// the spacing of doubles is 1. No -ffast-math: the build never reassociates.
inline double RoundToGrid(double t) {
  return (sum_detail::Clamp(t) + sum_detail::kRound) - sum_detail::kRound;
}
// The same integer as an int64_t (the bits of t + 1.5 2^52 minus its own).
inline int64_t RoundToGridInt(double t) {
  const double r = sum_detail::Clamp(t) + sum_detail::kRound;
  int64_t bits;
  std::memcpy(&bits, &r, sizeof bits);
  return bits - sum_detail::kRoundBits;
}

// Exact sums of `dim` coordinates on the grid q: int64 partials, flushed
// into 128-bit totals every 2^16 additions (2^16 (2^46 + 1) < 2^63).
class ExactSum {
 public:
  ExactSum(int dim, double grid);
  int dim() const { return static_cast<int>(total_.size()); }
  double grid() const { return grid_; }
  // Adds round(c x_j / q) to coordinate first + j for j < d, and, when
  // `intercept`, round(c/q) to coordinate first + d.
  void AddScaled(int first, double c, const double* x, int d, bool intercept);
  // AddScaled(first, c[i], x + i stride, d, intercept) for i < count: a block
  // of rows in one call (a full pass's inner loop).
  void AddScaledRows(int first, const double* c, const double* x, int64_t stride, int64_t count,
                     int d, bool intercept);
  // Adds round(v/q) to coordinate j.
  void Add(int j, double v);
  // Adds another sum on the same grid (exact).
  void Merge(const ExactSum& other);
  // q times coordinate j's exact integer sum, rounded once to a double.
  double Value(int j) const;
  // The exact integer sum of coordinate j.
  __int128 Units(int j) const;
  void Reset();

 private:
  void Counted() {
    if (++adds_ >= kFlushAdds) Flush();
  }
  void Flush();
  static constexpr int kFlushAdds = 1 << 16;
  double grid_;
  double inv_;
  int adds_ = 0;
  std::vector<int64_t> partial_;
  std::vector<__int128> total_;
};

// ---- Limbs: an exact integer sum in integer-valued doubles ---------------
// S = lo + 2^32 hi, lo and hi integer-valued, |lo| < 2^53 and |hi| < 2^53,
// normalised to |lo| <= 2^31. The streaming pass state stores these, so its
// combine is exact in any order, in parallel workers and across Citus
// nodes (an integer-valued double below 2^53 survives float8's text form).

// lo[j] += round(s x_j) for j < d (s = c/q; exact while |lo| < 2^53).
void LimbAddScaled(double* lo, double s, const double* x, int d) noexcept;
// Moves lo's multiples of 2^32 into hi: afterwards |lo[j]| <= 2^31.
void LimbNormalise(double* lo, double* hi, int count) noexcept;
// Whether lo/hi hold valid limbs (integer-valued, in range).
bool LimbsValid(const double* lo, const double* hi, int count) noexcept;
// into += from, both valid; the result is normalised.
void LimbCombine(double* lo, double* hi, const double* from_lo, const double* from_hi,
                 int count) noexcept;
// The exact integer lo + 2^32 hi.
__int128 LimbUnits(double lo, double hi) noexcept;
// q times an exact integer sum, rounded once.
double UnitsValue(__int128 units, double grid) noexcept;

// ---- The rounding kernels (portable and AVX2: the same integers) -------

// p[j] += round(clamp(s_i x_ij)) for every row i < count and j < d, with
// s_i = c[i] * inv (inv = 1/q, q the grid), and p[d] += round(clamp(s_i))
// when `intercept`: the rounding of ExactSum::AddScaled (above),
// row after row. Integer sums: exact in any order, so every kernel returns
// the same p. The caller keeps count within ExactSum's flush window.
void AddRoundedRows(int64_t* p, const double* c, double inv, const double* x, int64_t stride,
                    int64_t count, int d, bool intercept, RowIsa isa = BestRowIsa());

// lo[j] += round(clamp(s x_j)) for j < d in integer-valued doubles: the
// streaming state's low limbs (LimbAddScaled). Exact while
// |lo| < 2^53, so every kernel returns the same lo.
void AddRoundedLimbs(double* lo, double s, const double* x, int d, RowIsa isa = BestRowIsa());

}  // namespace dperm
