// Karney 2016, Algorithm N (see exact_normal.hpp). Each helper names the
// step of the paper it implements; the probabilities in the comments are
// the ones Karney proves for them.
#include "dperm/noise/exact_normal.hpp"

#include <cmath>
#include <vector>

#include "dperm/util/errors.hpp"
#include "dperm/util/interrupt.hpp"

namespace dperm {
namespace {

// A uniform deviate in (0, 1) whose binary expansion is drawn 64 bits at a
// time, only as far as a comparison needs ("u-rand", Karney Sec. 2).
class LazyUniform {
 public:
  explicit LazyUniform(SecureRng& rng) : rng_(rng) {}
  void Reset() { words_.clear(); }
  void Swap(LazyUniform& other) { words_.swap(other.words_); }
  uint64_t Word(size_t i) {
    while (words_.size() <= i) words_.push_back(rng_.NextU64());
    return words_[i];
  }
  // this < other, deciding bit by bit (equal words: probability 2^-64 each).
  bool Less(LazyUniform& other) {
    for (size_t i = 0;; ++i) {
      const uint64_t a = Word(i), b = other.Word(i);
      if (a != b) return a < b;
    }
  }

 private:
  SecureRng& rng_;
  std::vector<uint64_t> words_;
};

struct Deviates {
  explicit Deviates(SecureRng& r) : rng(r), p(r), q(r), x(r) {}
  SecureRng& rng;
  LazyUniform p, q, x;
};

// Algorithm H: true with probability exp(-1/2) (von Neumann: the length of
// the decreasing run 1/2 > u_1 > u_2 > ... is even).
bool ExpMinusHalf(Deviates& d) {
  d.p.Reset();
  if (d.p.Word(0) >> 63) return true;  // u_1 > 1/2: a run of length 0
  for (;;) {
    d.q.Reset();
    if (!d.q.Less(d.p)) return false;  // odd length
    d.p.Reset();
    if (!d.p.Less(d.q)) return true;  // even length
  }
}

// Step N1 (Algorithm G): k >= 0 with probability exp(-k/2)(1 - exp(-1/2)).
int64_t GeometricHalf(Deviates& d) {
  int64_t k = 0;
  while (ExpMinusHalf(d)) {
    if (++k >= kExactNormalBound) break;  // the caller refuses it
  }
  return k;
}

// Step N2 (Algorithm P): true with probability exp(-k (k - 1)/2).
bool AcceptInteger(Deviates& d, int64_t k) {
  for (int64_t i = 0; i < k * (k - 1); ++i)
    if (!ExpMinusHalf(d)) return false;
  return true;
}

// Algorithm C: -1, 0 or 1 with probabilities 1/m, 1/m, 1 - 2/m.
int ThreeWay(Deviates& d, uint64_t m) {
  const uint64_t v = d.rng.UniformIndex(m);
  return v == 0 ? -1 : (v == 1 ? 0 : 1);
}

// Algorithm B: true with probability exp(-x (2k + x)/(2k + 2)). Each step
// continues a run z_1 > z_2 > ... below x, thinned by the factor
// (2k + x)/(2k + 2) (C says 1 with probability 2k/(2k + 2), and 0 -- then
// a uniform below x -- with probability 1/(2k + 2)); the run's length is
// even with the stated probability.
bool AcceptFraction(Deviates& d, int64_t k) {
  const uint64_t m = 2 * uint64_t(k) + 2;
  LazyUniform& z = d.q;     // the next value of the run
  LazyUniform& last = d.p;  // the run's current bound (x on the first step)
  for (int64_t n = 0;; ++n) {
    z.Reset();
    if (!z.Less(n == 0 ? d.x : last)) return n % 2 == 0;
    const int f = ThreeWay(d, m);
    if (f < 0) return n % 2 == 0;
    if (f == 0) {
      last.Reset();  // free to reuse: z takes its place below
      if (!last.Less(d.x)) return n % 2 == 0;
    }
    last.Swap(z);  // the run continues below z
  }
}

}  // namespace

int64_t RoundedExactNormal(SecureRng& rng, int frac_bits) {
  if (frac_bits < 0 || frac_bits > 40)
    throw Error(ErrorKind::kInternal, "RoundedExactNormal: frac_bits out of range");
  Deviates d(rng);
  for (;;) {
    const int64_t k = GeometricHalf(d);  // N1
    if (k >= kExactNormalBound)
      throw Error(ErrorKind::kInternal,
                  "exact normal sampler: a proposal beyond 256 standard deviations "
                  "(probability exp(-128), independent of the data); nothing is released");
    if (!AcceptInteger(d, k)) continue;  // N2
    d.x.Reset();                         // N3: x ~ U(0, 1)
    bool accepted = true;
    for (int64_t j = 0; j <= k && accepted; ++j) accepted = AcceptFraction(d, k);  // N4
    if (!accepted) continue;
    // N5-N7: X = s (k + x). round(X 2^b) = s (k 2^b + round(x 2^b)), and
    // round(x 2^b) is the first b bits of x plus its bit b + 1 (x 2^b is a
    // half-integer with probability 0).
    const uint64_t lead = d.x.Word(0) >> (63 - frac_bits);  // the first b + 1 bits
    const int64_t magnitude = (k << frac_bits) + int64_t((lead + 1) >> 1);
    const bool negative = rng.NextU64() >> 63;
    return negative ? -magnitude : magnitude;
  }
}

double DyadicNoiseScale(double sigma) {
  if (!(sigma > 0) || !std::isfinite(sigma)) return sigma;
  int e = 0;
  const double f = std::frexp(sigma, &e);  // sigma = f 2^e, f in [1/2, 1)
  const double m = std::ceil(std::ldexp(f, kObjectiveNoiseBits));
  return std::ldexp(m, e - kObjectiveNoiseBits);
}

Eigen::VectorXd ObjectiveNoise(SecureRng& rng, int dim, double sigma) {
  if (!(sigma >= 0) || !std::isfinite(sigma) || DyadicNoiseScale(sigma) != sigma)
    throw Error(ErrorKind::kInternal, "ObjectiveNoise: sigma must be a DyadicNoiseScale value");
  Eigen::VectorXd b(dim);
  for (int i = 0; i < dim; ++i) {
    // |K| < 2^28 and sigma has <= 20 significant bits: sigma K is exact.
    const int64_t k = RoundedExactNormal(rng, kObjectiveNoiseBits);
    b[i] = std::ldexp(sigma * double(k), -kObjectiveNoiseBits);
    CountWork(kNoiseCoordinateWork);
  }
  return b;
}

double ObjectiveNoiseRounding(double sigma, int dim) {
  return sigma * std::sqrt(double(dim)) * std::ldexp(1.0, -kObjectiveNoiseBits - 1);
}

double ObjectiveNoiseNormBound(double sigma, int dim) {
  return sigma * std::sqrt(double(dim)) * kExactNormalBound;
}

// Why theta ||Z|| X has density proportional to exp(-||b||/theta). Given
// V = ||Z||^2 ~ chi^2_{dim+1} (density proportional to v^{(dim-1)/2}
// e^{-v/2}), b = theta sqrt(V) X is N(0, theta^2 V I_dim); with r = ||b||/theta,
//   p(b) ∝ int_0^inf v^{-dim/2} e^{-r^2/(2v)} v^{(dim-1)/2} e^{-v/2} dv
//        = int_0^inf v^{-1/2} e^{-v/2 - r^2/(2v)} dv = sqrt(2 pi) e^{-r}
// by int_0^inf t^{-1/2} e^{-a t - c/t} dt = sqrt(pi/a) e^{-2 sqrt(a c)}
// (a = 1/2, c = r^2/2): the Gaussian scale mixture of the exponential-norm
// law, so ||b|| ~ Gamma(dim, theta) with a uniform direction
// (test_objective_pure.cpp, GammaNormNoiseHasTheExponentialNormLaw,
// checks that law).
//
// The rounding, for every draw the sampler returns (|X_i|, |Z_j| < 256,
// each rounded to 2^-40, so |X~_i - X_i| <= 2^-41):
//   ||X~ - X|| <= sqrt(dim) 2^-41, ||X~|| <= 256 sqrt(dim),
//   | ||Z~|| - ||Z|| | <= ||Z~ - Z|| <= sqrt(dim+1) 2^-41, ||Z|| < 256 sqrt(dim+1);
//   s, the computed ||Z~|| (an exact integer sum of squares, one long-double
//   square root, one rounding to double), is within ||Z~|| 2^-52 of it;
//   b_i = (theta s) X~_i in doubles is within |theta s X~_i| 2^-51 of its value.
// So ||b - theta ||Z|| X|| <= theta (|s - ||Z||| ||X~|| + ||Z|| ||X~ - X||)
// + theta s ||X~|| 2^-51 <= theta sqrt(dim (dim+1)) 256 (2^-41 + 2^-44 +
// 2^-41 + 2^-43 (1 + 2^-48)) < theta sqrt(dim (dim+1)) 2^-31.
Eigen::VectorXd GammaNormNoise(SecureRng& rng, int dim, double theta) {
  if (!(theta >= 0) || !std::isfinite(theta) || dim < 1)
    throw Error(ErrorKind::kInternal, "GammaNormNoise: no scale");
  unsigned __int128 sum_sq = 0;  // sum of K_j^2, K_j = round(Z_j 2^40), |K_j| < 2^48
  for (int j = 0; j <= dim; ++j) {
    const int64_t k = RoundedExactNormal(rng, kGammaNormNoiseBits);
    const unsigned __int128 m = uint64_t(k < 0 ? -k : k);
    sum_sq += m * m;
    CountWork(kNoiseCoordinateWork);
  }
  const long double norm = std::sqrt(static_cast<long double>(sum_sq));
  const double scale = theta * double(std::ldexp(norm, -kGammaNormNoiseBits));
  Eigen::VectorXd b(dim);
  for (int i = 0; i < dim; ++i) {
    const int64_t k = RoundedExactNormal(rng, kGammaNormNoiseBits);
    b[i] = scale * std::ldexp(double(k), -kGammaNormNoiseBits);  // k < 2^48: exact
    CountWork(kNoiseCoordinateWork);
  }
  return b;
}

double GammaNormNoiseRounding(double theta, int dim) {
  return theta * std::sqrt(double(dim) * double(dim + 1)) * std::ldexp(1.0, -31);
}

}  // namespace dperm
