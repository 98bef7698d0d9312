// Privacy audit harness: an empirical lower bound on the epsilon a mechanism
// actually spends, in the spirit of Google's DP stochastic tester and of
// Jagielski, Ullman & Oprea, "Auditing Differentially Private Machine
// Learning: How Private is Private SGD?" (NeurIPS 2020).
//
// For one release (options, loss, n, d):
//  1. Worst-case neighbours. D = B + c, D' = B + c' share n - 1 base rows B
//     and differ in one row, moved to an extreme point (features at the bound
//     or 0, logistic label +-1, Huber target -Y, 0 or +Y). Over a few base
//     sets and all candidate pairs, keep the pair with the largest distance
//     ||a - b|| between the noiseless outputs a = w_T(D), b = w_T(D').
//  2. Runs. Train on D and on D' `runs` times each with real noise (a
//     ChaCha20 stream per side) and reduce every released w to one number s,
//     larger when w looks like a D' output: the log-likelihood ratio up to a
//     monotone map, so a threshold on s is the Neyman-Pearson test. Gaussian
//     noise: s = <w - a, u>, u = (b - a)/||b - a||. Laplace-vector noise
//     (density ~ exp(-||z||/scale)): s = ||w - a|| - ||w - b||.
//  3. Test. The first half of each side's runs chooses a threshold t and a
//     tail; the second half, untouched until then, counts the event E = {s > t}
//     (or {s <= t}) under both datasets. (epsilon, delta)-DP gives
//     P_num(E) <= e^eps P_den(E) + delta, so with Clopper-Pearson bounds
//     p_num_low, p_den_high at alpha/2 each,
//        eps_lb = ln((p_num_low - delta) / p_den_high)
//     is below the true epsilon with probability >= 1 - alpha: a mechanism
//     whose eps_lb exceeds its claimed epsilon is not private as claimed.
#pragma once
#include <math.h>  // lgamma_r: std::lgamma writes the global signgam

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "dperm/analytic_gaussian.hpp"
#include "dperm/options.hpp"
#include "dperm/plan.hpp"
#include "dperm/random.hpp"
#include "dperm/train.hpp"

namespace dperm::audit {

// ---------------------------------------------------------------------------
// Clopper-Pearson intervals.

// log Gamma(x) without touching the global signgam (thread-safe).
inline double LogGamma(double x) {
  int sign = 0;
  return lgamma_r(x, &sign);
}

// Continued fraction of the incomplete beta function (modified Lentz;
// Numerical Recipes' betacf), converging fast for x < (a + 1)/(a + b + 2).
inline double BetaContinuedFraction(double a, double b, double x) {
  const double tiny = 1e-300;
  auto guard = [&](double v) { return std::fabs(v) < tiny ? tiny : v; };
  double c = 1, d = 1 / guard(1 - (a + b) * x / (a + 1)), h = d;
  for (int m = 1; m <= 100000; m++) {
    double aa = m * (b - m) * x / ((a - 1 + 2 * m) * (a + 2 * m));
    d = 1 / guard(1 + aa * d);
    c = guard(1 + aa / c);
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1 + 2 * m));
    d = 1 / guard(1 + aa * d);
    c = guard(1 + aa / c);
    h *= d * c;
    if (std::fabs(d * c - 1) < 1e-16) break;
  }
  return h;
}

// The regularised incomplete beta function I_x(a, b), a, b > 0.
inline double RegularizedBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  double front = std::exp(LogGamma(a + b) - LogGamma(a) - LogGamma(b) +
                          a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * BetaContinuedFraction(a, b, x) / a;
  return 1 - front * BetaContinuedFraction(b, a, 1 - x) / b;
}

// P(Bin(n, p) >= k) = I_p(k, n - k + 1), for 1 <= k <= n.
inline double BinomialUpperTail(int64_t k, int64_t n, double p) {
  return RegularizedBeta(double(k), double(n - k + 1), p);
}

// Clopper-Pearson lower bound: the p with P(Bin(n, p) >= k) = alpha (0 when
// k = 0). Bisection, rounded down, so P(bound > true p) <= alpha.
inline double ClopperPearsonLower(int64_t k, int64_t n, double alpha) {
  if (k <= 0) return 0;
  double lo = 0, hi = 1;
  for (int i = 0; i < 64; i++) {
    double mid = 0.5 * (lo + hi);
    (BinomialUpperTail(k, n, mid) < alpha ? lo : hi) = mid;
  }
  return lo;
}

// Clopper-Pearson upper bound: the p with P(Bin(n, p) <= k) = alpha (1 when
// k = n). Bisection, rounded up, so P(bound < true p) <= alpha.
inline double ClopperPearsonUpper(int64_t k, int64_t n, double alpha) {
  if (k >= n) return 1;
  double lo = 0, hi = 1;
  for (int i = 0; i < 64; i++) {
    double mid = 0.5 * (lo + hi);
    (1 - BinomialUpperTail(k + 1, n, mid) > alpha ? lo : hi) = mid;
  }
  return hi;
}

// The Jagielski et al. estimator at confidence 1 - alpha: E happened k_num of
// n times on the side it favours and k_den of n times on the other; the
// bound holds with probability >= 1 - alpha (alpha/2 per side). 0 when the
// counts prove nothing.
inline double EpsilonLowerBound(int64_t k_num, int64_t k_den, int64_t n, double delta,
                                double alpha) {
  double num = ClopperPearsonLower(k_num, n, alpha / 2) - delta;
  double den = ClopperPearsonUpper(k_den, n, alpha / 2);
  return num > den ? std::log(num / den) : 0.0;
}

// ---------------------------------------------------------------------------
// Distinguishing test.

// A threshold test: E = {s > threshold} if upper_tail, else {s <= threshold}.
struct Test {
  double threshold = 0;
  bool upper_tail = true;
  int64_t k_num = 0, k_den = 0, n = 0;  // counts of E under the favoured / other side
  double epsilon_lb = 0;
};

// Runs (of a sorted sample) with statistic > t.
inline int64_t CountAbove(const std::vector<double>& sorted, double t) {
  return sorted.end() - std::upper_bound(sorted.begin(), sorted.end(), t);
}

// Counts and bound of one test on sorted samples of D (s_d) and D' (s_dp).
inline Test Evaluate(const std::vector<double>& s_d, const std::vector<double>& s_dp,
                     double t, bool upper_tail, double delta, double alpha) {
  Test test;
  test.threshold = t;
  test.upper_tail = upper_tail;
  test.n = int64_t(s_d.size());
  int64_t above_d = CountAbove(s_d, t), above_dp = CountAbove(s_dp, t);
  // {s > t} favours D'; {s <= t} favours D.
  test.k_num = upper_tail ? above_dp : test.n - above_d;
  test.k_den = upper_tail ? above_d : test.n - above_dp;
  test.epsilon_lb = EpsilonLowerBound(test.k_num, test.k_den, test.n, delta, alpha);
  return test;
}

// The threshold and tail with the best bound on a calibration sample (sorted,
// same size per side). Candidates: up to ~2000 quantiles of the pooled
// sample, denser in both tails where the best bounds live.
inline Test ChooseTest(const std::vector<double>& s_d, const std::vector<double>& s_dp,
                       double delta, double alpha) {
  std::vector<double> pooled(s_d);
  pooled.insert(pooled.end(), s_dp.begin(), s_dp.end());
  std::sort(pooled.begin(), pooled.end());
  const size_t m = pooled.size();
  std::vector<size_t> idx;
  for (size_t i = 0; i < std::min<size_t>(m, 200); i++) {
    idx.push_back(i);
    idx.push_back(m - 1 - i);
  }
  for (size_t j = 0; j <= 1600; j++) idx.push_back(j * (m - 1) / 1600);
  Test best;
  best.epsilon_lb = -1;
  for (size_t i : idx)
    for (bool upper : {true, false}) {
      Test t = Evaluate(s_d, s_dp, pooled[i], upper, delta, alpha);
      if (t.epsilon_lb > best.epsilon_lb) best = t;
    }
  return best;
}

// ---------------------------------------------------------------------------
// Mechanism, neighbours and runs.

// One audited release. noise_divisor > 1 breaks the mechanism on purpose: the
// plan's noise scale is divided by it (as if the sensitivity had been).
struct Case {
  std::string name;
  LossKind loss = LossKind::kLogistic;
  Options options;
  int n = 50;
  int d = 2;
  double noise_divisor = 1;
};

// An output_gd case on n = 50 rows of d = 2 features (fit_intercept, feature
// bound 1, default T and step), named like "huber l2=0.1 tight Gaussian".
inline Case MakeCase(LossKind loss, double l2, Accountant accountant, double epsilon,
                     double delta, double noise_divisor = 1) {
  Case c;
  c.loss = loss;
  c.options.algorithm = Algorithm::kOutputGd;
  c.options.epsilon = epsilon;
  c.options.delta = delta;
  c.options.l2 = l2;
  c.options.accountant = accountant;
  c.noise_divisor = noise_divisor;
  char buf[160];
  snprintf(buf, sizeof buf, "%s l2=%g %s %s", LossName(loss), l2, AccountantName(accountant),
           delta > 0 ? "Gaussian" : "Laplace-vector");
  c.name = buf;
  if (noise_divisor != 1) {
    snprintf(buf, sizeof buf, ", noise / %g (broken)", noise_divisor);
    c.name += buf;
  }
  return c;
}

// The output of the plan's training on rows without noise (w_T itself).
inline std::vector<double> NoiselessOutput(Plan plan, const std::vector<double>& rows) {
  plan.noise_scale = 0;  // both samplers return zeros at scale 0
  SecureRng unused = SecureRng::FromSeed(0);
  return TrainModel(plan, rows.data(), unused);
}

// Euclidean distance of two outputs.
inline double Distance(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); i++) s += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(s);
}

// The chosen neighbours: rows of D and D' (stride d + 1) and their noiseless outputs.
struct Neighbours {
  std::vector<double> rows_d, rows_dp;
  std::vector<double> a, b;  // w_T(D), w_T(D')
  double shift = 0;          // ||a - b||
  std::string base, row_d, row_dp;  // what was chosen, for the report
};

// Huber targets this far out keep every residual in the linear part of the
// loss for the whole run (|h'| = huber_delta, h'' = 0).
constexpr double kFarTarget = 1e6;

// Extreme rows (d features then label): features 0 or +-feature_bound on an
// axis or a diagonal, crossed with labels +-1 (logistic) or -Y, 0, +Y (Huber).
inline std::vector<std::vector<double>> ExtremeRows(const Plan& plan) {
  const int d = plan.d;
  const double fb = plan.options.feature_bound;
  std::vector<std::vector<double>> points(1, std::vector<double>(d, 0.0));
  for (int j = 0; j < d; j++)
    for (double s : {1.0, -1.0}) {
      points.emplace_back(d, 0.0);
      points.back()[j] = s * fb;
    }
  if (d >= 2)
    for (double s1 : {1.0, -1.0})
      for (double s2 : {1.0, -1.0}) {
        points.emplace_back(d, 0.0);
        points.back()[0] = s1 * fb / std::sqrt(2.0);
        points.back()[1] = s2 * fb / std::sqrt(2.0);
      }
  std::vector<double> labels = plan.loss == LossKind::kLogistic
                                   ? std::vector<double>{1.0, -1.0}
                                   : std::vector<double>{kFarTarget, 0.0, -kFarTarget};
  std::vector<std::vector<double>> rows;
  for (const auto& x : points)
    for (double y : labels) {
      rows.push_back(x);
      rows.back().push_back(y);
    }
  return rows;
}

// A row as text: "(x1, x2; y)".
inline std::string RowText(const std::vector<double>& row) {
  std::string s = "(";
  for (size_t i = 0; i < row.size(); i++) {
    char buf[32];
    snprintf(buf, sizeof buf, "%g", row[i]);
    s += (i == 0 ? "" : i + 1 == row.size() ? "; " : ", ") + std::string(buf);
  }
  return s + ")";
}

// Base sets of n - 1 rows: every extreme row repeated, and a synthetic sample
// (features uniform in the ball, labels from a fixed linear model).
inline std::vector<std::pair<std::string, std::vector<double>>> BaseSets(const Plan& plan) {
  const int n1 = int(plan.n) - 1, stride = plan.d + 1;
  std::vector<std::pair<std::string, std::vector<double>>> bases;
  for (const auto& row : ExtremeRows(plan)) {
    std::vector<double> rows;
    for (int i = 0; i < n1; i++) rows.insert(rows.end(), row.begin(), row.end());
    bases.emplace_back(std::to_string(n1) + " x " + RowText(row), rows);
  }
  std::mt19937_64 gen(7);
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> rows(size_t(n1) * stride);
  for (int i = 0; i < n1; i++) {
    double* r = &rows[size_t(i) * stride];
    double norm = 0, m = 0.3;
    for (int j = 0; j < plan.d; j++) {
      r[j] = normal(gen);
      norm += r[j] * r[j];
    }
    double scale = plan.options.feature_bound * std::pow(std::generate_canonical<double, 53>(gen),
                                                         1.0 / std::max(plan.d, 1)) /
                   std::max(std::sqrt(norm), 1e-300);
    for (int j = 0; j < plan.d; j++) m += (r[j] *= scale) * (j % 2 ? -1.0 : 1.0);
    r[plan.d] = plan.loss == LossKind::kLogistic ? (m + 0.5 * normal(gen) > 0 ? 1.0 : -1.0)
                                                 : m + 0.3 * normal(gen);
  }
  bases.emplace_back("synthetic sample", rows);
  return bases;
}

// The neighbouring pair (over base sets and extreme differing rows) whose
// noiseless outputs are farthest apart.
inline Neighbours WorstNeighbours(const Plan& plan) {
  const auto candidates = ExtremeRows(plan);
  Neighbours best;
  best.shift = -1;
  for (const auto& [base_name, base] : BaseSets(plan)) {
    std::vector<std::vector<double>> datasets, outputs;
    for (const auto& row : candidates) {
      datasets.push_back(base);
      datasets.back().insert(datasets.back().end(), row.begin(), row.end());
      outputs.push_back(NoiselessOutput(plan, datasets.back()));
    }
    for (size_t i = 0; i < candidates.size(); i++)
      for (size_t j = i + 1; j < candidates.size(); j++) {
        double shift = Distance(outputs[i], outputs[j]);
        if (shift > best.shift) {
          best = {datasets[i], datasets[j], outputs[i], outputs[j], shift,
                  base_name, RowText(candidates[i]), RowText(candidates[j])};
        }
      }
  }
  return best;
}

// The test statistic of a released w: larger means "more like D'" (see the
// top of this file).
inline double Statistic(NoiseKind noise, const std::vector<double>& w,
                        const std::vector<double>& a, const std::vector<double>& b) {
  if (noise == NoiseKind::kLaplaceVector) return Distance(w, a) - Distance(w, b);
  double dot = 0, norm = 0;
  for (size_t i = 0; i < w.size(); i++) {
    dot += (w[i] - a[i]) * (b[i] - a[i]);
    norm += (b[i] - a[i]) * (b[i] - a[i]);
  }
  return dot / std::sqrt(norm);
}

// Statistics of `runs` real releases of the plan on rows, noise from rng.
inline std::vector<double> Release(const Plan& plan, const std::vector<double>& rows,
                                   const Neighbours& pair, int64_t runs, SecureRng& rng) {
  std::vector<double> s(static_cast<size_t>(runs));
  for (auto& v : s) v = Statistic(plan.noise, TrainModel(plan, rows.data(), rng), pair.a, pair.b);
  return s;
}

// The exact epsilon of the plan's noise on this pair at the plan's delta:
// the most any test of this pair can show. Laplace vector: the privacy loss
// (||z|| - ||z - shift||)/scale is at most shift/scale, attained along the
// shift; Gaussian: the analytic Gaussian curve of Balle & Wang.
inline double PairEpsilon(const Plan& plan, double shift) {
  if (plan.noise == NoiseKind::kLaplaceVector) return shift / plan.noise_scale;
  return GaussianEpsilon(plan.noise_scale, plan.options.delta, shift);
}

// Everything one audit found.
struct Result {
  Case audit_case;
  Plan plan;           // as run (noise already divided for a broken case)
  Neighbours pair;
  double pair_epsilon = 0;  // PairEpsilon: the ceiling of any audit of this pair
  Test calibration;    // the test chosen on the first half
  Test test;           // the same test on the second half: the reported bound
  double seconds = 0;
};

// Audits one case: runs_per_side releases on each of D and D' (half to choose
// the test, half to evaluate it) at confidence 1 - alpha; seed keys the two
// noise streams.
inline Result RunAudit(const Case& c, int64_t runs_per_side, double alpha, uint64_t seed) {
  auto start = std::chrono::steady_clock::now();
  Result r;
  r.audit_case = c;
  r.plan = PlanRelease(c.options, c.loss, c.n, c.d);
  r.pair = WorstNeighbours(r.plan);  // the pair does not depend on the noise
  r.plan.noise_scale /= c.noise_divisor;
  r.pair_epsilon = PairEpsilon(r.plan, r.pair.shift);
  SecureRng rng_d = SecureRng::FromSeed(2 * seed), rng_dp = SecureRng::FromSeed(2 * seed + 1);
  const int64_t half = runs_per_side / 2;
  std::vector<double> s_d = Release(r.plan, r.pair.rows_d, r.pair, runs_per_side, rng_d);
  std::vector<double> s_dp = Release(r.plan, r.pair.rows_dp, r.pair, runs_per_side, rng_dp);
  std::vector<double> cal_d(s_d.begin(), s_d.begin() + half), cal_dp(s_dp.begin(), s_dp.begin() + half);
  std::vector<double> ev_d(s_d.begin() + half, s_d.end()), ev_dp(s_dp.begin() + half, s_dp.end());
  for (auto* v : {&cal_d, &cal_dp, &ev_d, &ev_dp}) std::sort(v->begin(), v->end());
  const double delta = c.options.delta;
  r.calibration = ChooseTest(cal_d, cal_dp, delta, alpha);
  r.test = Evaluate(ev_d, ev_dp, r.calibration.threshold, r.calibration.upper_tail, delta, alpha);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace dperm::audit
