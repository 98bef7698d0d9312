// Stage 2: the private decision threshold (decision.hpp has the argument).
#include "dperm/release/decision.hpp"

#include <algorithm>
#include <cmath>

#include "dperm/noise/noise.hpp"
#include "dperm/util/interrupt.hpp"

namespace dperm {
namespace {

// The status quo's index in DecisionThresholds (p = 0.5).
constexpr int kZeroIndex = 9;

}  // namespace

std::vector<double> DecisionThresholds() {
  std::vector<double> t;
  for (int k = 1; k <= 19; k++) {
    const double p = 0.05 * k;
    t.push_back(k == 10 ? 0.0 : std::log(p / (1 - p)));
  }
  return t;
}

DecisionPlan PlanDecision(const Options& o, LossKind loss, int64_t n, const OffsetPlan& offset) {
  DecisionPlan p;
  // A threshold on the sigmoid's probability (the grid above): binary labels
  // with the sigmoid link only.
  if (LossLabel(loss) != LabelKind::kBinary || LossLink(loss) != Link::kSigmoid ||
      !o.fit_intercept || !o.intercept_offset || n < 1)
    return p;
  // The shares sum to epsilon exactly: rest = epsilon - epsilon0 is exact
  // (offset.cpp), mechanism = rest - epsilon/20 lies in [rest/2, rest], so
  // epsilon_t = rest - mechanism is exact (Sterbenz) and MechanismOptions
  // gets back the same mechanism share.
  const double rest = o.epsilon - offset.epsilon;
  const double mechanism = rest - kDecisionShare * o.epsilon;
  if (!(mechanism >= kMinEpsilon)) return p;
  // Too few rows for its noise: the chosen threshold's count is within about
  // 2 (2/epsilon_t) ln 19 + the head start ~ 12/epsilon_t rows of the best,
  // over 3 % of n below n epsilon_t = 400 -- there it could cost accuracy.
  if (!(double(n) * (rest - mechanism) >= kDecisionMinNEpsilon)) return p;
  p.epsilon = rest - mechanism;
  p.noise_scale = 2 / p.epsilon;  // report noisy max, scores of sensitivity 1
  p.thresholds = DecisionThresholds();
  p.bonus = std::ceil(p.noise_scale * std::log(double(p.thresholds.size())));
  p.rule =
      "epsilon_t = epsilon/20; the threshold on the margin among logit(0.05), logit(0.10), ..., "
      "logit(0.95) that classifies the most training rows correctly, by report noisy max (discrete "
      "Laplace of scale 2/epsilon_t on each count; threshold 0 starts ceil(scale ln 19) ahead); "
      "the intercept is released minus it (decision.hpp)";
  return p;
}

double ReleaseDecisionThreshold(const Plan& plan, const double* rows, const std::vector<double>& w,
                                SecureRng& rng) {
  const DecisionPlan& dp = plan.decision;
  const std::vector<double>& t = dp.thresholds;
  const int k = int(t.size());
  // bin[j]: the rows whose margin exceeds exactly the thresholds t_0 .. t_{j-1}
  // (a NaN margin exceeds none); "margin > t_k" holds for j > k.
  std::vector<int64_t> pos(size_t(k) + 1, 0), neg(size_t(k) + 1, 0);
  const int64_t stride = int64_t(plan.d) + 1;
  for (int64_t i = 0; i < plan.n; i++) {
    const double* r = rows + i * stride;
    double m = w[size_t(plan.d)];
    for (int j = 0; j < plan.d; j++) m += w[size_t(j)] * r[j];
    int j = 0;  // every threshold compared: the same work for every margin
    for (int c = 0; c < k; c++) j += t[size_t(c)] < m ? 1 : 0;
    (r[plan.d] > 0 ? pos : neg)[size_t(j)]++;
    CountWork(uint64_t(plan.d) + 1);
  }
  // c_k = positives above t_k + negatives at or below it: exact integers.
  std::vector<int64_t> correct(size_t(k), 0);
  int64_t above = 0, below = 0;
  for (int j = 0; j <= k; j++) above += pos[size_t(j)];
  for (int c = 0; c < k; c++) {
    above -= pos[size_t(c)];
    below += neg[size_t(c)];
    correct[size_t(c)] = above + below;
  }
  // The discrete Laplace's scale as t/s with t, s <= 2^32 (DiscreteLaplace),
  // t rounded up: at least 2/epsilon_t.
  uint64_t scale_s = uint64_t(1) << 32;
  while (scale_s > 1 && dp.noise_scale * double(scale_s) > 4294967295.0) scale_s >>= 1;
  const uint64_t scale_t = uint64_t(std::ceil(dp.noise_scale * double(scale_s)));
  int best = 0;
  __int128 best_score = 0;
  for (int c = 0; c < k; c++) {
    const __int128 score = __int128(correct[size_t(c)]) +
                           (c == kZeroIndex ? __int128(dp.bonus) : 0) +
                           DiscreteLaplace(rng, scale_t, scale_s);
    if (c == 0 || score > best_score) best = c, best_score = score;  // ties: the lower index
  }
  return t[size_t(best)];
}

}  // namespace dperm
