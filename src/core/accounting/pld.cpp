// Discrete privacy loss distributions: hockey-stick divergence, ε(δ), and
// composition by FFT (Koskela, Jälkö & Honkela, AISTATS 2020).
#include "dperm/accounting/pld.hpp"

#include "dperm/util/interrupt.hpp"
#include "dperm/util/numeric_util.hpp"

#include <unsupported/Eigen/FFT>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <utility>

namespace dperm {
namespace {

using Complex = std::complex<double>;

// Below this many multiplications Compose convolves directly (exact sums).
constexpr double kDirectConvolutionWork = 1 << 20;

// Grid indices must stay far from int64 overflow when offsets are added.
constexpr double kMaxGridIndex = 4611686018427387904.0;  // 2^62

// Refuses a grid or FFT of more than kPldMaxPoints points (memory guard).
void CheckPoints(double points, const char* what) {
  if (!(points <= static_cast<double>(kPldMaxPoints)))
    ThrowInvalid(std::string("PLD accounting: ") + what + " needs " + Num(std::ceil(points)) +
                     " grid points, more than the limit of " + std::to_string(kPldMaxPoints),
                 "use a coarser discretization or fewer steps");
}

// The smallest 2^a·3^b·5^c ≥ n with a ≥ 2: kissfft's fast radices, and a
// multiple of 4 so that Eigen takes its real-input half-length path.
int64_t FftLength(int64_t n) {
  int64_t best = std::numeric_limits<int64_t>::max();
  for (int64_t p5 = 4; p5 < 2 * n + 8; p5 *= 5)
    for (int64_t p35 = p5; p35 < 2 * n + 8; p35 *= 3) {
      int64_t m = p35;
      while (m < n) m *= 2;
      best = std::min(best, m);
    }
  return best;
}

// z^k by binary exponentiation (the Fourier transform of a k-fold
// convolution is the k-th power of the transform).
Complex Power(Complex z, int64_t k) {
  if (static_cast<double>(k) * std::log(std::abs(z)) < -745.0) return Complex(0.0, 0.0);
  Complex result(1.0, 0.0);
  while (k > 0) {
    if (k & 1) result *= z;
    z *= z;
    k >>= 1;
  }
  return result;
}

// Circular convolution helper: forward real FFT of `values` zero-padded to
// `length` (a multiple of 4), as the half spectrum of length/2 + 1 entries.
std::vector<Complex> HalfSpectrum(const std::vector<double>& values, int64_t length) {
  CheckInterrupt();  // an FFT of up to kPldMaxPoints is the longest stretch without a probe
  std::vector<double> padded(static_cast<size_t>(length), 0.0);
  std::copy(values.begin(), values.end(), padded.begin());
  std::vector<Complex> spectrum(static_cast<size_t>(length / 2 + 1));
  Eigen::FFT<double> fft;  // scoped: its twiddle tables are freed on return
  fft.SetFlag(Eigen::FFT<double>::HalfSpectrum);
  fft.fwd(spectrum.data(), padded.data(), length);
  return spectrum;
}

// Inverse of HalfSpectrum (scaled by 1/length), real output.
std::vector<double> FromHalfSpectrum(const std::vector<Complex>& spectrum, int64_t length) {
  CheckInterrupt();
  std::vector<double> values(static_cast<size_t>(length));
  Eigen::FFT<double> fft;
  fft.SetFlag(Eigen::FFT<double>::HalfSpectrum);
  fft.inv(values.data(), spectrum.data(), length);
  return values;
}

// dp_accounting's tail cut for pessimistic PLDs: drop the longest prefix and
// suffix of mass ≤ t/2 each; the prefix mass moves up to the first kept point
// (losses only rise) and the suffix mass goes to +∞. Returns the prefix
// length and the suffix mass.
std::pair<size_t, double> TruncateTails(std::vector<double>& probs, double t) {
  if (!(t > 0.0)) return {0, 0.0};
  size_t left = 0;
  double left_mass = 0.0;
  while (left < probs.size() && left_mass + probs[left] <= t / 2) left_mass += probs[left++];
  size_t right = probs.size();
  double right_mass = 0.0;
  while (right > 0 && right_mass + probs[right - 1] <= t / 2) right_mass += probs[--right];
  right = std::max(right, left + 1);
  if (right > probs.size()) {  // everything fits in the tails: keep one point
    left = probs.size() - 1;
    right = probs.size();
  }
  left_mass = 0.0;
  for (size_t i = 0; i < left; ++i) left_mass += probs[i];
  right_mass = 0.0;
  for (size_t i = right; i < probs.size(); ++i) right_mass += probs[i];
  std::vector<double> kept(probs.begin() + static_cast<std::ptrdiff_t>(left),
                           probs.begin() + static_cast<std::ptrdiff_t>(right));
  kept[0] += left_mass;
  probs = std::move(kept);
  return {left, right_mass};
}

// Chernoff window for a k-fold self-convolution (dp_accounting's
// compute_self_convolve_bounds): for λ = j/n, j = ±1..±20, the mass of the
// sum of k indices above u is at most M(λ)^k e^{−λu}, so u = (k log M(λ) +
// log(2/t))/λ leaves at most t/2 outside on each side. Returns [lower, upper]
// as doubles (indices relative to k·offset).
std::pair<double, double> SelfConvolutionWindow(const std::vector<double>& p, int64_t k, double t) {
  const double n = static_cast<double>(p.size());
  double lower = 0.0;
  double upper = (n - 1.0) * static_cast<double>(k);
  if (!(t > 0.0)) return {lower, upper};
  for (int j = -20; j <= 20; ++j) {
    if (j == 0) continue;
    const double lambda = j / n;
    double shift = -std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < p.size(); ++i)
      if (p[i] > 0.0) shift = std::max(shift, static_cast<double>(i) * lambda);
    double sum = 0.0;
    for (size_t i = 0; i < p.size(); ++i)
      if (p[i] > 0.0) sum += p[i] * std::exp(static_cast<double>(i) * lambda - shift);
    const double log_mgf = shift + std::log(sum);
    const double bound = (static_cast<double>(k) * log_mgf + std::log(2.0 / t)) / lambda;
    if (!std::isfinite(bound)) continue;
    if (j > 0) upper = std::min(upper, std::ceil(bound));
    if (j < 0) lower = std::max(lower, std::floor(bound));
  }
  return {lower, upper};
}

// Sets FFT round-off below zero to zero: a PMF has no negative mass, and
// dropping it can only raise δ(ε).
void ClipNegative(std::vector<double>& probs) {
  for (double& p : probs)
    if (!(p > 0.0)) p = 0.0;
}

}  // namespace

DiscretePld::DiscretePld(double width, int64_t offset, std::vector<double> pmf,
                         double infinity_mass)
    : width_(width), offset_(offset), pmf_(std::move(pmf)), infinity_mass_(infinity_mass) {
  if (!std::isfinite(width_) || !(width_ > 0.0))
    ThrowInvalid("PLD width must be a finite number greater than 0, got " + Num(width_));
  if (pmf_.empty()) ThrowInvalid("PLD pmf must not be empty");
  CheckPoints(static_cast<double>(pmf_.size()), "this PLD");
  const double last = static_cast<double>(offset_) + static_cast<double>(pmf_.size());
  if (std::fabs(static_cast<double>(offset_)) > kMaxGridIndex || std::fabs(last) > kMaxGridIndex)
    ThrowInvalid("PLD grid offset out of range: " + std::to_string(offset_));
  for (double p : pmf_)
    if (!std::isfinite(p) || p < 0.0)
      ThrowInvalid("PLD pmf entries must be finite and >= 0, got " + Num(p));
  if (!(infinity_mass_ >= 0.0 && infinity_mass_ <= 1.0))
    ThrowInvalid("PLD infinity mass must be in [0, 1], got " + Num(infinity_mass_));
}

// Hockey-stick divergence of a PLD (Meiser & Mohammadi, CCS 2018; Doroshenko
// et al. 2022): δ(ε) = p(∞) + Σ_{l>ε} p(l)(1 − e^{ε−l}).
double DiscretePld::GetDelta(double epsilon) const {
  if (std::isnan(epsilon)) ThrowInvalid("epsilon must not be NaN");
  double delta = 0.0;
  for (size_t i = pmf_.size(); i-- > 0;) {
    const double loss = Loss(static_cast<int64_t>(i));
    if (!(loss > epsilon)) break;
    delta += pmf_[i] * -std::expm1(epsilon - loss);
  }
  return std::min(1.0, infinity_mass_ + delta);
}

// The smallest ε ≥ 0 with δ(ε) ≤ target. Between grid points, with U the mass
// above loss l_j (∞ included) and S = Σ_{l_i > l_j} p_i e^{l_j − l_i}, δ(ε) =
// U − e^{ε − l_j} S, so the root there is l_j + log((U − target)/S). S is kept
// relative to the current l_j, so no e^{−l} term underflows even when ε is
// in the hundreds (dp_accounting sums p·e^{−l}, which underflows above ~745).
double DiscretePld::GetEpsilon(double delta) const {
  if (!(delta >= 0.0 && delta <= 1.0)) ThrowInvalid("delta must be in [0, 1], got " + Num(delta));
  if (infinity_mass_ > delta) return std::numeric_limits<double>::infinity();
  const double decay = std::exp(-width_);
  double upper = infinity_mass_;  // U
  double scaled = 0.0;            // S, relative to the current loss
  for (size_t i = pmf_.size(); i-- > 0;) {
    const double loss = Loss(static_cast<int64_t>(i));
    if (upper > delta && scaled > 0.0 && upper - delta >= scaled)
      return std::max(0.0, loss + std::log((upper - delta) / scaled));
    if (loss <= 0.0) return 0.0;  // the root lies below this loss ≤ 0
    upper += pmf_[i];
    scaled += pmf_[i];
    if (i > 0) scaled *= decay;  // re-reference S to the next loss down
  }
  // Below the grid δ(ε) = U − e^{ε − l_0} S, with S relative to l_0.
  if (!(upper > delta)) return 0.0;
  return std::max(0.0, Loss(0) + std::log((upper - delta) / scaled));
}

// Composition of two PLDs is the convolution of their PMFs (Sommer, Meiser &
// Mohammadi, PETS 2019; Koskela et al. 2020), here by FFT; the ∞ atoms
// combine as 1 − (1 − a)(1 − b).
DiscretePld DiscretePld::Compose(const DiscretePld& other, double tail_mass_truncation) const {
  if (other.width_ != width_)
    ThrowInvalid("PLD widths differ: " + Num(width_) + " and " + Num(other.width_));
  if (!(tail_mass_truncation >= 0.0 && tail_mass_truncation < 1.0))
    ThrowInvalid("tail mass truncation must be in [0, 1), got " + Num(tail_mass_truncation));
  const int64_t n1 = static_cast<int64_t>(pmf_.size());
  const int64_t n2 = static_cast<int64_t>(other.pmf_.size());
  CheckPoints(static_cast<double>(n1) + static_cast<double>(n2) - 1.0, "composition");
  std::vector<double> probs;
  if (static_cast<double>(n1) * static_cast<double>(n2) <= kDirectConvolutionWork) {
    probs.assign(static_cast<size_t>(n1 + n2 - 1), 0.0);
    for (int64_t i = 0; i < n1; ++i)
      for (int64_t j = 0; j < n2; ++j)
        probs[static_cast<size_t>(i + j)] +=
            pmf_[static_cast<size_t>(i)] * other.pmf_[static_cast<size_t>(j)];
  } else {
    const int64_t length = FftLength(n1 + n2 - 1);
    CheckPoints(static_cast<double>(length), "FFT");
    std::vector<Complex> a = HalfSpectrum(pmf_, length);
    const std::vector<Complex> b = HalfSpectrum(other.pmf_, length);
    for (size_t i = 0; i < a.size(); ++i) a[i] *= b[i];
    probs = FromHalfSpectrum(a, length);
    probs.resize(static_cast<size_t>(n1 + n2 - 1));
    ClipNegative(probs);
  }
  const double a = infinity_mass_, b = other.infinity_mass_;
  const auto [cut, right_mass] = TruncateTails(probs, tail_mass_truncation);
  return DiscretePld(width_, offset_ + other.offset_ + static_cast<int64_t>(cut), std::move(probs),
                     std::min(1.0, a + b - a * b + right_mass));
}

// k-fold self-composition as dp_accounting's self_convolve: one FFT of the
// PMF padded to the Chernoff window, each coefficient raised to the k-th
// power, one inverse FFT. Mass outside the window (≤ t in all, which also
// bounds what wraps around the circular convolution) is charged to +∞, as is
// 1 − (1 − p(∞))^k.
DiscretePld DiscretePld::SelfCompose(int64_t times, double tail_mass_truncation) const {
  if (times < 1) ThrowInvalid("times must be at least 1, got " + std::to_string(times));
  if (!(tail_mass_truncation >= 0.0 && tail_mass_truncation < 1.0))
    ThrowInvalid("tail mass truncation must be in [0, 1), got " + Num(tail_mass_truncation));
  if (times == 1) return *this;
  const double k = static_cast<double>(times);
  if (std::fabs(static_cast<double>(offset_)) * k > kMaxGridIndex)
    ThrowInvalid("PLD grid offset out of range after " + std::to_string(times) + " compositions");
  const double infinity_mass =
      std::min(1.0, tail_mass_truncation - std::expm1(k * std::log1p(-infinity_mass_)));
  double finite_mass = 0.0;
  for (double p : pmf_) finite_mass += p;
  if (!(finite_mass > 0.0))  // everything is at +∞ already
    return DiscretePld(width_, 0, {0.0}, 1.0);
  const auto [lower, upper] = SelfConvolutionWindow(pmf_, times, tail_mass_truncation);
  if (!(upper >= lower))
    throw Error(ErrorKind::kInternal, "PLD self-composition: empty Chernoff window");
  CheckPoints(upper - lower + 1.0, "composition");
  const int64_t lo = static_cast<int64_t>(lower);
  const int64_t out_len = static_cast<int64_t>(upper) - lo + 1;
  const int64_t length = FftLength(std::max<int64_t>(out_len, static_cast<int64_t>(pmf_.size())));
  CheckPoints(static_cast<double>(length), "FFT");
  std::vector<Complex> spectrum = HalfSpectrum(pmf_, length);
  for (Complex& z : spectrum) z = Power(z, times);
  const std::vector<double> circular = FromHalfSpectrum(spectrum, length);
  spectrum = {};
  // The circular result holds index i at i mod length; read the window.
  std::vector<double> probs(static_cast<size_t>(out_len));
  for (int64_t i = 0; i < out_len; ++i)
    probs[static_cast<size_t>(i)] = circular[static_cast<size_t>((lo + i) % length)];
  ClipNegative(probs);
  return DiscretePld(width_, offset_ * times + lo, std::move(probs), infinity_mass);
}

DiscretePld ConnectTheDotsPld(double width, double first, double last,
                              const std::function<double(double)>& delta_at) {
  const double h = width;
  if (!std::isfinite(first) || !std::isfinite(last))
    ThrowInvalid("PLD accounting: privacy loss range is not finite",
                 "use a larger noise multiplier");
  const double count = last - first + 1.0;
  if (!(count <= static_cast<double>(kPldMaxPoints)))
    ThrowInvalid("PLD accounting: one step needs " + Num(count) +
                     " grid points, more than the limit of " + std::to_string(kPldMaxPoints),
                 "use a coarser discretization or a larger noise multiplier");
  const int64_t offset = static_cast<int64_t>(first);
  const size_t n = static_cast<size_t>(count);
  std::vector<double> deltas(n);
  for (size_t i = 0; i < n; ++i) {
    deltas[i] = delta_at(static_cast<double>(offset + static_cast<int64_t>(i)) * h);
    if (i > 0) deltas[i] = std::min(deltas[i], deltas[i - 1]);  // round-off
  }
  std::vector<double> pmf(n);
  if (n == 1) {
    pmf[0] = 1.0 - deltas[0];
  } else {
    const double em1 = std::expm1(h), eh = std::exp(h);
    pmf[0] = 1.0 - deltas[0] + (deltas[1] - deltas[0]) / em1;
    for (size_t i = 1; i + 1 < n; ++i)
      pmf[i] = ((deltas[i + 1] - deltas[i]) - (deltas[i] - deltas[i - 1]) * eh) / em1;
    pmf[n - 1] = (deltas[n - 1] - deltas[n - 2]) / std::expm1(-h);
    for (double& p : pmf) p = std::max(0.0, p);  // round-off in second differences
  }
  return DiscretePld(h, offset, std::move(pmf), deltas[n - 1]);
}

}  // namespace dperm
