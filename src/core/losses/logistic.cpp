// The logistic loss log(1 + exp(-y m)) for y in {-1, +1} (dp_logreg): its
// values and derivatives, and its entry in the loss table (losses.def).
#include "dperm/losses/loss.hpp"
#include "dperm/losses/loss_spec.hpp"
#include "dperm/rows/row_kernels.hpp"

#ifdef DPERM_ROW_AVX2
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

namespace dperm {
namespace {

// log(1 + exp(t)) without overflow.
double Softplus(double t) { return t > 0 ? t + std::log1p(std::exp(-t)) : std::log1p(std::exp(t)); }

// exp(t) for t <= 0, the same bits in every kernel below (libm's exp may
// differ between CPUs and cannot be run four lanes at a time): t is clamped
// to [kExpLow, 0] (a NaN t stays NaN), written t = k ln2 + r with k =
// round(t/ln 2) and |r| <= ln2/2 (Cody & Waite's split of ln 2: k ln2_hi is
// exact for |k| < 2^21), exp(r) by its Taylor polynomial of degree 13
// (remainder < 0.3466^14/14! < 4e-18 relative) in Horner's form, times the
// exact power 2^k. Error within 2 ulp of exp(t); at t below kExpLow (where
// exp(t) < 3.4e-308) it returns exp(kExpLow) = 3.3e-308: an absolute error below that.
// No step branches on t, and no product and sum are fused (row_kernels.hpp).
constexpr double kExpLow = -708.0;
constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 0x3fe62e42fee00000
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kRoundMagic = 6755399441055744.0;  // 1.5 2^52
constexpr int64_t kRoundMagicBits = 0x4338000000000000LL;
// 1/j! for j = 13 down to 2.
constexpr double kInvFactorial[] = {1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0,
                                    1.0 / 3628800.0,    1.0 / 362880.0,    1.0 / 40320.0,
                                    1.0 / 5040.0,       1.0 / 720.0,       1.0 / 120.0,
                                    1.0 / 24.0,         1.0 / 6.0,         1.0 / 2.0};

double ExpNonPositive(double t) {
  double c = t > kExpLow ? t : kExpLow;  // NaN -> kExpLow here, restored below
  c = c < 0 ? c : 0;
  const double shifted = c * kLog2e + kRoundMagic;
  const double k = shifted - kRoundMagic;
  int64_t k_bits;
  std::memcpy(&k_bits, &shifted, sizeof k_bits);
  const int64_t ki = k_bits - kRoundMagicBits;
  const double r = (c - k * kLn2Hi) - k * kLn2Lo;
  double p = kInvFactorial[0];
  for (int j = 1; j < 12; j++) p = p * r + kInvFactorial[j];
  p = (p * r + 1.0) * r + 1.0;
  const int64_t scale_bits = (ki + 1023) << 52;
  double scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  const double e = p * scale;
  return t == t ? e : t;
}

// 1 / (1 + exp(-t)) without overflow. Both branches' values are computed
// and one is selected (a conditional move, not a jump), so the time does not
// depend on the sign of t through branch prediction: objective perturbation
// promises a running time independent of the data (objective_perturbation_solver.cpp).
// The values are those of 1/(1 + e) (t >= 0) and e/(1 + e) (t < 0), e =
// ExpNonPositive(-|t|).
double Sigmoid(double t) {
  const double e = ExpNonPositive(-std::fabs(t));
  const double d = 1.0 + e;
  const double positive = 1.0 / d, negative = e / d;
  return t >= 0 ? positive : negative;
}

#ifdef DPERM_ROW_AVX2
// Derivatives four rows at a time: each lane performs Sigmoid's and
// ExpNonPositive's operations in their order (max/min return the clamp
// bound for a NaN, as the scalar comparisons do), so the values are
// LogisticLoss::Derivative's bit for bit (test_loss.cpp checks it).
__attribute__((target("avx2"))) void LogisticDerivativesAvx2(const double* m, const double* y,
                                                             Eigen::Index y_stride,
                                                             Eigen::Index count, double* out) {
  const __m256d low = _mm256_set1_pd(kExpLow), zero = _mm256_setzero_pd(),
                log2e = _mm256_set1_pd(kLog2e), magic = _mm256_set1_pd(kRoundMagic),
                ln2_hi = _mm256_set1_pd(kLn2Hi), ln2_lo = _mm256_set1_pd(kLn2Lo),
                one = _mm256_set1_pd(1.0), sign = _mm256_set1_pd(-0.0);
  const __m256i magic_bits = _mm256_set1_epi64x(kRoundMagicBits), bias = _mm256_set1_epi64x(1023);
  Eigen::Index i = 0;
  for (; i + 4 <= count; i += 4) {
    const __m256d yv = _mm256_set_pd(y[(i + 3) * y_stride], y[(i + 2) * y_stride],
                                     y[(i + 1) * y_stride], y[i * y_stride]);
    const __m256d neg_y = _mm256_xor_pd(yv, sign);
    const __m256d t = _mm256_mul_pd(neg_y, _mm256_loadu_pd(m + i));    // -y m
    const __m256d a = _mm256_xor_pd(_mm256_andnot_pd(sign, t), sign);  // -|t|
    __m256d c = _mm256_max_pd(a, low);  // NaN -> low, as t > kExpLow ? t : kExpLow
    c = _mm256_min_pd(c, zero);
    const __m256d shifted = _mm256_add_pd(_mm256_mul_pd(c, log2e), magic);
    const __m256d k = _mm256_sub_pd(shifted, magic);
    const __m256i ki = _mm256_sub_epi64(_mm256_castpd_si256(shifted), magic_bits);
    const __m256d r =
        _mm256_sub_pd(_mm256_sub_pd(c, _mm256_mul_pd(k, ln2_hi)), _mm256_mul_pd(k, ln2_lo));
    __m256d p = _mm256_set1_pd(kInvFactorial[0]);
    for (int j = 1; j < 12; j++)
      p = _mm256_add_pd(_mm256_mul_pd(p, r), _mm256_set1_pd(kInvFactorial[j]));
    p = _mm256_add_pd(_mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(p, r), one), r), one);
    const __m256d scale = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(ki, bias), 52));
    __m256d e = _mm256_mul_pd(p, scale);
    const __m256d is_nan = _mm256_cmp_pd(a, a, _CMP_UNORD_Q);
    e = _mm256_blendv_pd(e, a, is_nan);  // t == t ? e : t
    const __m256d d = _mm256_add_pd(one, e);
    // One division: the numerator is selected first (1 for t >= 0, else
    // e), so each lane divides exactly what Sigmoid's selected branch does.
    const __m256d s =
        _mm256_div_pd(_mm256_blendv_pd(e, one, _mm256_cmp_pd(t, zero, _CMP_GE_OQ)), d);
    _mm256_storeu_pd(out + i, _mm256_mul_pd(neg_y, s));  // -y s(-y m)
  }
  for (; i < count; i++) {
    const double yi = y[i * y_stride];
    out[i] = -yi * Sigmoid(-yi * m[i]);
  }
}
#endif

// The intercept offset (offset.hpp): S = #{y = +1}, the positive count;
// p = (S + 1/2)/(n + 1) clamped to [1/(2(n+1)), 1 - 1/(2(n+1))] and
// b0 = logit(p), so |b0| <= log(2n + 1).
class PositiveCount final : public OffsetStatistic {
 public:
  const char* Text() const override { return "positive count; b0 = logit((S + 1/2)/(n + 1))"; }
  bool Histogram() const override { return false; }
  bool Counts() const override { return true; }
  double Bound(const LossParams&, int64_t n) const override {
    return std::log(2.0 * double(n) + 1);
  }
  double Row(const LossParams&, double y, int* sum) const noexcept override {
    *sum = 0;
    return y > 0 ? 1.0 : 0.0;
  }
  std::vector<double> FromSums(const LossParams&, const std::vector<double>& s,
                               int64_t n) const override {
    const double nn = double(n), lo = 0.5 / (nn + 1);
    const double p = std::clamp((s[0] + 0.5) / (nn + 1), lo, 1 - lo);
    return {std::log(p) - std::log1p(-p)};
  }
};

// l2 => 'auto''s score: 1 when sign(m) is the label, else 0.
class Correct final : public ValidationScore {
 public:
  const char* Text() const override { return "correct predictions (higher is better)"; }
  double Bound(const LossParams&) const override { return 1; }
  bool Counts() const override { return true; }
  bool LowerIsBetter() const override { return false; }
  double Row(const LossParams&, const double* s, double y) const noexcept override {
    return (s[0] > 0 ? 1.0 : -1.0) == y ? 1 : 0;
  }
};

class LogisticSpec final : public LossSpec {
 public:
  LossKind kind() const override { return LossKind::kLogistic; }
  LossConstants Constants(const LossParams&, double R) const override {
    const LogisticLoss f;
    LossConstants c;
    // grad = f'(m) x and Hessian = f''(m) x x^T with |f'| <= 1 and
    // f'' = s(1 - s) <= 1/4 ([CMS11], logistic regression): L = R and
    // beta = R^2/4 (loss.hpp, Lipschitz and Smoothness).
    c.L = f.Lipschitz(R);
    c.beta = f.Smoothness(R);
    // F(0) = log(1 + e^0) = ln 2 for every row.
    c.zero_model_bound = std::log(2.0);
    // f'(m) = -y s(-y m) lies between 0 and -y (|y| = 1): two rows'
    // gradients at any w, w' differ by at most R.
    c.gradient_range = R;
    return c;
  }
  std::unique_ptr<Loss> MakeMarginLoss(const LossParams&) const override {
    return std::make_unique<LogisticLoss>();
  }
  double RowKernel(const LossParams&, double* s, double y, bool with_loss) const noexcept override {
    const LogisticLoss f;
    const double value = with_loss ? f.Value(s[0], y) : 0.0;
    s[0] = f.Derivative(s[0], y);
    return value;
  }
  double RowCurvature(const LossParams&, double m, double y) const noexcept override {
    return LogisticLoss().Curvature(m, y);
  }
  // f''(m, y) = s(m) s(-m) (Curvature): continuous in m, the same for y = +1
  // and y = -1 (s(-y m) s(y m)).
  bool SmoothCurvature() const override { return true; }
  bool LabelFreeCurvature() const override { return true; }
  const OffsetStatistic* Offset() const override {
    static const PositiveCount offset;
    return &offset;
  }
  const ValidationScore* Score() const override {
    static const Correct score;
    return &score;
  }
};

}  // namespace

double LogisticLoss::Value(double m, double y) const { return Softplus(-y * m); }
double LogisticLoss::Derivative(double m, double y) const { return -y * Sigmoid(-y * m); }
void LogisticLoss::Derivatives(const double* m, const double* y, Eigen::Index y_stride,
                               Eigen::Index count, double* out) const {
  // Derivative, inlined: the same values.
#ifdef DPERM_ROW_AVX2
  if (BestRowIsa() == RowIsa::kAvx2) return LogisticDerivativesAvx2(m, y, y_stride, count, out);
#endif
  for (Eigen::Index i = 0; i < count; i++) {
    const double yi = y[i * y_stride];
    out[i] = -yi * Sigmoid(-yi * m[i]);
  }
}
double LogisticLoss::Curvature(double m, double) const {
  double s = Sigmoid(m);
  return s * (1.0 - s);
}

template <>
const LossSpec& LossSpecOf<LossKind::kLogistic>() {
  static const LogisticSpec spec;
  return spec;
}

}  // namespace dperm
