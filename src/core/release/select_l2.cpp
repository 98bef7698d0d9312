// l2 => 'auto': private selection of l2 (select_l2.hpp has the argument):
// the training of a planned selection (planning/plan_l2_selection.hpp).
#include "dperm/release/select_l2.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/losses/loss_spec.hpp"
#include "dperm/model/evaluate.hpp"
#include "dperm/noise/noise.hpp"
#include "dperm/release/train_model.hpp"
#include "dperm/rows/exact_sum.hpp"
#include "dperm/util/interrupt.hpp"

namespace dperm {

namespace {

// delta > 0: the scores' release, discrete Gaussian of multiplier z on the
// normalised sums (ScoreCurve, plan_l2_selection.cpp, has its RDP).
std::vector<double> ReleaseGaussianScores(const std::vector<double>& sums, double bound, double z,
                                          SecureRng& rng, double slack) {
  const int m = int(sums.size());
  const double root = std::sqrt(double(m));
  const double grid = SnapGrid(root, m, z * root, NoiseKind::kGaussian);
  // z times the rounded sums' sensitivity: each moves by at most 1 + slack
  // (the sums' own rounding, ScoreSumSlack), then the grid's rounding.
  const double sigma = z * root * (1 + grid + slack);
  std::vector<double> u(sums.size());
  for (int i = 0; i < m; i++) u[size_t(i)] = sums[size_t(i)] / bound;
  SnapDiscreteGaussian(rng, grid, GridSigmaSq(sigma, grid), u.data(), m);
  for (double& v : u) v *= bound;
  return u;
}

}  // namespace

double RowScore(const L2Selection& s, const std::vector<double>& w, const double* row) {
  const ValidationScore& score = *LossSpecFor(s.loss).Score();
  LossParams params = LossParamsOf(s.options);
  params.classes = LossIsMulticlass(s.loss) ? s.candidates.front().classes : 0;
  const int d = s.d, classes = std::max(params.classes, 1);
  const bool b = s.options.fit_intercept;
  const int per_class = d + (b ? 1 : 0);
  // The row's scores <w_k, x> (+ b_k), one per class.
  double one = 0;
  std::vector<double> many(classes > 1 ? size_t(classes) : 0);
  double* z = classes > 1 ? many.data() : &one;
  for (int k = 0; k < classes; k++) {
    const double* wk = w.data() + size_t(k) * per_class;
    z[k] = b ? wk[d] : 0.0;
    for (int j = 0; j < d; j++) z[k] += wk[j] * row[j];
  }
  // Clamped to [0, score_bound] (or {0, 1} for counts), whatever the loss
  // returns: the sensitivity of the released sums.
  const double v = score.Row(params, z, row[d]);
  if (score.Counts()) return v >= 0.5 ? 1 : 0;
  return v >= 0 ? std::min(v, s.score_bound) : 0;
}

L2SelectionResult TrainL2Selection(const L2Selection& s, const double* rows, SecureRng& rng) {
  const int stride = s.d + 1;
  // 1. The partition: uniformly random, from the secure generator.
  const std::vector<int64_t> perm = RandomPermutation(rng, s.n);
  std::vector<double> train(size_t(s.n_train) * stride), valid(size_t(s.n_valid) * stride);
  for (int64_t k = 0; k < s.n; k++) {
    const double* r = rows + size_t(perm[size_t(k)]) * stride;
    double* dst =
        k < s.n_train ? &train[size_t(k) * stride] : &valid[size_t(k - s.n_train) * stride];
    std::copy(r, r + stride, dst);
    CountWork(uint64_t(stride));
  }
  // 2. Every candidate, always (a fixed, public number of trainings).
  std::vector<std::vector<double>> models, offsets(s.candidates.size());
  for (size_t g = 0; g < s.candidates.size(); g++) {
    CheckInterrupt();
    models.push_back(TrainModel(s.candidates[g], train.data(), rng, &offsets[g]));
  }
  // 3. The validation sums, released together: discrete Gaussian of
  // multiplier score_multiplier (delta > 0), discrete Laplace at
  // score_epsilon (delta = 0).
  // Counts are exact in doubles; other scores, in [0, score_bound] (the
  // loss's ValidationScore), are summed exactly on the grid SumGrid(score_bound)
  // (exact_sum.hpp): two neighbours' sums then differ by at most one row's
  // range plus one grid step, and their rounding to doubles and division by
  // the bound add at most n_valid 2^-51 more, in units of the bound.
  const ValidationScore& score = *LossSpecFor(s.loss).Score();
  const bool exact_counts = score.Counts();
  const double score_grid = SumGrid(s.score_bound);
  const double slack =
      exact_counts ? 0 : score_grid / s.score_bound + std::ldexp(double(s.n_valid), -51);
  std::vector<double> sums(models.size(), 0.0), bounds(models.size(), s.score_bound);
  for (size_t g = 0; g < models.size(); g++) {
    CheckInterrupt();
    ExactSum sum(1, score_grid);
    for (int64_t i = 0; i < s.n_valid; i++) {
      const double row_score = RowScore(s, models[g], &valid[size_t(i) * stride]);
      CountWork(models[g].size());  // one multiply-add per coefficient
      if (exact_counts) sums[g] += row_score;
      else sum.Add(0, row_score);
    }
    if (!exact_counts) sums[g] = sum.Value(0);
  }
  L2SelectionResult r;
  r.noisy_scores = s.score_multiplier > 0
                       ? ReleaseGaussianScores(sums, s.score_bound, s.score_multiplier, rng, slack)
                       : ReleaseBoundedSums(sums, bounds, s.score_epsilon, rng, slack).values;
  // Post-processing of the noisy scores: the best one (first on ties).
  int best = 0;
  for (int g = 1; g < int(r.noisy_scores.size()); g++) {
    const bool better = score.LowerIsBetter() ? r.noisy_scores[g] < r.noisy_scores[best]
                                              : r.noisy_scores[g] > r.noisy_scores[best];
    if (better) best = g;
  }
  r.chosen = best;
  r.w = std::move(models[size_t(best)]);
  r.offset = std::move(offsets[size_t(best)]);
  return r;
}

}  // namespace dperm
