// Privacy loss distributions (PLDs) on a grid, and the PLD accountant for the
// Poisson-subsampled Gaussian mechanism under add/remove-one neighbours.
//
// Method: Koskela, Jälkö & Honkela (AISTATS 2020, "Computing tight differential
// privacy guarantees using FFT") and Meiser & Mohammadi (CCS 2018, "Tight on
// budget?") for composing discretised PLDs by FFT; Doroshenko, Ghazi, Kamath,
// Kumar & Manurangsi (PETS 2022, "Connect the Dots: Tighter Discrete
// Approximations of Privacy Loss Distributions") for the pessimistic
// discretisation. It follows the PLDAccountant of Google's dp_accounting
// (pessimistic estimate, connect-the-dots, log_mass_truncation_bound = −50,
// tail_mass_truncation = 1e-15) and matches it to ~1e-9 relative, except:
// GetEpsilon keeps Σ p·e^{−l} relative to the current loss, so it does not
// underflow when ε is above ~745 (dp_accounting then returns the δ-quantile
// of the loss: 949.83 instead of 948.89 for q = 1, σ = 0.8, 1000 steps);
// negative FFT round-off is set to 0; PMFs are always dense; and the final
// composition with the identity PLD (one more 1e-15 tail cut) is skipped.
#pragma once

#include "dperm/util/errors.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace dperm {

// Largest number of grid points a PLD may hold, before or after composition
// (and the largest FFT length). SelfCompose's peak working memory is about 36
// bytes per FFT point, so this caps one accounting call at roughly 0.6 GB;
// beyond it the functions below ThrowInvalid (hint: coarser discretisation).
constexpr int64_t kPldMaxPoints = int64_t{1} << 24;

// Probability mass a composition may drop from the tails of the grid (moved
// pessimistically to +∞); dp_accounting's default.
constexpr double kPldTailMassTruncation = 1e-15;

// A discrete PLD: mass pmf[i] at privacy loss (offset + i)·width, plus mass
// infinity_mass at +∞. For a pessimistic PLD, GetDelta upper-bounds the
// hockey-stick divergence of the mechanism it describes.
class DiscretePld {
 public:
  // Validates: width > 0 finite, pmf non-empty (at most kPldMaxPoints) with
  // finite entries ≥ 0, infinity_mass in [0, 1], |offset + size| ≤ 2^62.
  DiscretePld(double width, int64_t offset, std::vector<double> pmf, double infinity_mass);

  double width() const { return width_; }
  int64_t offset() const { return offset_; }
  const std::vector<double>& pmf() const { return pmf_; }
  double infinity_mass() const { return infinity_mass_; }
  // The privacy loss of pmf[i].
  double Loss(int64_t i) const { return static_cast<double>(offset_ + i) * width_; }

  // δ(ε) = p(∞) + Σ_{l > ε} p(l)(1 − e^{ε−l}) (hockey-stick divergence).
  // epsilon may be ±∞; NaN throws.
  double GetDelta(double epsilon) const;

  // The smallest ε ≥ 0 with GetDelta(ε) ≤ delta; +∞ if p(∞) > delta.
  // delta in [0, 1].
  double GetEpsilon(double delta) const;

  // The PLD of running both mechanisms (FFT convolution); tails of mass at
  // most tail_mass_truncation/2 each are cut, the upper one moved to +∞.
  DiscretePld Compose(const DiscretePld& other,
                      double tail_mass_truncation = kPldTailMassTruncation) const;

  // The PLD of `times` runs of this mechanism (times ≥ 1).
  DiscretePld SelfCompose(int64_t times,
                          double tail_mass_truncation = kPldTailMassTruncation) const;

 private:
  double width_;
  int64_t offset_;
  std::vector<double> pmf_;
  double infinity_mass_;
};

// The pessimistic "connect-the-dots" PLD of a mechanism whose privacy
// profile δ(ε) is known exactly: δ is sampled at ε_i = i·width for i in
// [first, last] (a run of at most kPldMaxPoints points, else
// InvalidParameter), made non-increasing against round-off, and turned
// into the PLD whose profile is the piecewise-exponential interpolation
// through those points:
//   p_first = 1 − δ_first + (δ_{first+1} − δ_first)/(e^h − 1),
//   p_i = ((δ_{i+1} − δ_i) − e^h(δ_i − δ_{i−1}))/(e^h − 1),
//   p_last = (δ_last − δ_{last−1})/(e^{−h} − 1),  p(∞) = δ_last
// (h = width; negative second-difference round-off is clipped to 0;
// Doroshenko et al. 2022, Algorithm 1: δ is convex in e^ε, so the chords
// through exact points never fall below it). Used
// by the Poisson-subsampled Gaussian and by sampling without replacement.
DiscretePld ConnectTheDotsPld(double width, double first, double last,
                              const std::function<double(double)>& delta_at);

// Which pair of neighbouring outputs a one-sided PLD describes
// (dp_accounting's AdjacencyType). Remove: upper = (1−q)N(0,σ²) + qN(1,σ²),
// lower = N(0,σ²). Add: upper = N(0,σ²), lower = (1−q)N(0,σ²) + qN(1,σ²).
enum class PldAdjacency { kAdd, kRemove };

// Exact hockey-stick divergence δ(ε) of one step of the Poisson-subsampled
// Gaussian (rate q, noise σ, sensitivity 1) for one adjacency direction.
double SubsampledGaussianDelta(double q, double sigma, PldAdjacency adjacency, double epsilon);

// One step's pessimistic connect-the-dots PLD on the grid of the given width.
DiscretePld SubsampledGaussianPld(double q, double sigma, PldAdjacency adjacency,
                                  double discretization = 1e-4);

// ε(δ) of `steps` adaptive runs of the Poisson-subsampled Gaussian mechanism
// (rate q, noise multiplier σ, L2 sensitivity 1) under add/remove-one
// neighbours: the larger of the add and remove PLD epsilons. An upper bound on
// the true ε. q in (0,1], σ > 0, steps ≥ 1, δ in (0,1), discretization > 0.
double EpsilonPoissonSubsampledGaussianPld(double q, double sigma, int64_t steps, double delta,
                                           double discretization = 1e-4);

// δ(ε) of the same composition (the larger of both directions); ε ≥ 0.
double DeltaPoissonSubsampledGaussianPld(double q, double sigma, int64_t steps, double epsilon,
                                         double discretization = 1e-4);

}  // namespace dperm
