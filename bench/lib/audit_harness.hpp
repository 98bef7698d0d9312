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
//
// Two kinds of release (PairKind, chosen from the plan):
//  * Output perturbation (output_gd, bolton: noisy_steps = 0, no objective
//    noise): the noiseless output is deterministic, so step 1's search and
//    the exact means a, b above apply.
//  * Noisy iterations, objective perturbation and ssp (the other ten): noise
//    enters inside the computation and the output is not Gaussian around a
//    known mean. The pair is a designed canary (CanaryNeighbours): n - 1
//    inert rows (features 0, no intercept column, so zero gradient for every
//    w) and one row x = feature_bound e_1 whose two labels give gradients
//    pointing in opposite directions (Huber targets +-10^6: -+huber_delta x
//    for every w in reach, a difference of exactly 2L, the sensitivity the
//    noise is calibrated for; logistic labels +-1 and softmax classes 0 / 1:
//    a difference of exactly L, as no logistic or softmax pair can reach 2L
//    at finite margins). The means a, b and the noise covariance S are
//    estimated from a pilot set of runs per side, separate noise, never used
//    by the test, and s = <w - a, S^-1 (b - a)> (Fisher's linear
//    discriminant: the likelihood ratio for Gaussians of equal covariance).
//
// Unit level (Case::unit_rows = k > 1): the neighbours differ in all k slots
// of one privacy unit (the canary row, or the extreme row of the search,
// repeated k times on each side; the base has n - k rows). With
// options.max_rows_per_unit = k the release is planned as dperm.train plans
// a unit-level release (PlanInMemoryRelease: the row-level plan at epsilon / k
// and GroupDelta's delta'), and its eps_lb must stay <= epsilon; with
// max_rows_per_unit unset the same release ignores the unit (planned per row
// at epsilon) and must be flagged.
//
// Broken releases (noise_divisor > 1) divide the plan's noise_scale and
// objective_noise after planning: the mechanism runs as planned but with
// less noise than its epsilon was charged for. Production code is unchanged.
#pragma once

#include "audit_whitebox.hpp"

namespace dperm::audit {

// Statistics of `runs` real releases of the plan on rows.
inline std::vector<double> Release(const Plan& plan, const std::vector<double>& rows,
                                   const Neighbours& pair, int64_t runs, uint64_t stream,
                                   int threads) {
  return MapReleases(plan, rows, runs, stream, threads, [&](const std::vector<double>& w) {
    return std::vector<double>{Statistic(plan.noise, w, pair)};
  });
}

// Pilot runs for the canary pair: the means a, b of each side's releases and
// the discriminant direction S^-1 (b - a), S the pooled sample covariance
// (slightly regularised so that a degenerate coordinate cannot blow it up).
inline void PilotMeans(const Plan& plan, Neighbours& pair, int64_t runs, uint64_t stream,
                       int threads) {
  auto identity = [](const std::vector<double>& w) { return w; };
  std::vector<double> wd =
      MapReleases(SidePlan(plan, pair, false), pair.rows_d, runs, stream, threads, identity);
  std::vector<double> wdp =
      MapReleases(SidePlan(plan, pair, true), pair.rows_dp, runs, stream + 1, threads, identity);
  const int dim = int(wd.size() / size_t(runs));  // w, or a white-box tap
  Eigen::Map<const Eigen::MatrixXd> md(wd.data(), dim, runs), mdp(wdp.data(), dim, runs);
  Eigen::VectorXd a = md.rowwise().mean(), b = mdp.rowwise().mean();
  Eigen::MatrixXd cd = md.colwise() - a, cdp = mdp.colwise() - b;
  Eigen::MatrixXd cov = (cd * cd.transpose() + cdp * cdp.transpose()) / double(2 * runs - 2);
  cov.diagonal().array() += 1e-9 * std::max(cov.diagonal().maxCoeff(), 1e-300);
  Eigen::VectorXd u = cov.ldlt().solve(b - a);
  u /= std::max(u.norm(), 1e-300);
  pair.a.assign(a.data(), a.data() + dim);
  pair.b.assign(b.data(), b.data() + dim);
  pair.direction.assign(u.data(), u.data() + dim);
  pair.shift = (b - a).norm();
}

// The epsilon of the plan's noise on this pair at the plan's delta: the
// most any test of this pair can show. Laplace vector: the privacy loss
// (||z|| - ||z - shift||)/scale is at most shift/scale, attained along the
// shift; per-coordinate Laplace: ||b - a||_1/scale; Gaussian: the analytic
// Gaussian curve of Balle & Wang (the snapped discrete Gaussian's exact
// curve is within a rounding step of it). Output perturbation only
// (elsewhere the output is no single noise draw: NaN).
// delta: the claim's (a unit-level plan's options hold the per-slot delta').
inline double PairEpsilon(const Plan& plan, const Neighbours& pair, double delta) {
  if (!OutputPerturbation(plan)) return std::nan("");
  if (plan.noise == NoiseKind::kLaplaceVector) return pair.shift / plan.noise_scale;
  if (plan.noise == NoiseKind::kLaplace) {
    double l1 = 0;
    for (size_t i = 0; i < pair.a.size(); i++) l1 += std::abs(pair.b[i] - pair.a[i]);
    return l1 / plan.noise_scale;
  }
  return GaussianEpsilon(plan.noise_scale, delta, pair.shift);
}

// Everything one audit found.
struct Result {
  Case audit_case;
  Plan plan;  // as run (noise already divided for a broken case)
  Neighbours pair;
  double pair_epsilon = 0;  // PairEpsilon: the ceiling of any audit of this pair
  int64_t pilot_runs = 0;   // per side (canary pairs only)
  Test calibration;         // the test chosen on the first half
  Test test;                // the same test on the second half: the reported bound
  double seconds = 0;
};

// Audits one case: runs_per_side releases on each of D and D' (half to choose
// the test, half to evaluate it) at confidence 1 - alpha, after pilot_runs
// releases per side to estimate the means (canary pairs only; default
// runs_per_side / 4); seed keys the noise streams.
//
// model_threshold: the test comes from ModelTest on a second pilot of
// pilot_runs releases per side (own streams, after the means are fixed),
// and all runs_per_side releases evaluate it.
inline Result RunAudit(const Case& c, int64_t runs_per_side, double alpha, uint64_t seed,
                       int threads = 1, int64_t pilot_runs = 0, bool model_threshold = false) {
  auto start = std::chrono::steady_clock::now();
  Result r;
  r.audit_case = c;
  // A unit-level case is planned as dperm.train plans it (epsilon / k per slot).
  r.plan = c.options.max_rows_per_unit > 0 ? PlanInMemoryRelease(c.options, c.loss, c.n, c.d).plan
                                           : PlanRelease(c.options, c.loss, c.n, c.d);
  const bool output = OutputPerturbation(r.plan);
  const int64_t k = std::max<int64_t>(c.unit_rows, 1);
  if (output) r.pair = WorstNeighbours(r.plan, k);  // the pair does not depend on the noise
  else if (c.white_box) r.pair = WhiteBoxNeighbours(r.plan, k);
  else r.pair = CanaryNeighbours(r.plan, k, c.conditioned_base);
  DivideNoise(r.plan, c.noise_divisor);
  const uint64_t stream = 4 * seed;
  if (!output) {
    r.pilot_runs = pilot_runs > 0 ? pilot_runs : std::max<int64_t>(runs_per_side / 4, 100);
    PilotMeans(r.plan, r.pair, r.pilot_runs, stream + 2, threads);
  }
  r.pair_epsilon = r.pair.seam_d ? WhiteBoxEpsilon(r.plan, r.pair, c.options.delta)
                                 : PairEpsilon(r.plan, r.pair, c.options.delta);
  const double delta = c.options.delta;
  if (model_threshold) {
    const int64_t pilot = pilot_runs > 0 ? pilot_runs : std::max<int64_t>(runs_per_side / 4, 100);
    if (r.pilot_runs == 0) r.pilot_runs = pilot;
    // Streams far from every case's 4 seed + 0..3 (seeds are < 2^52).
    const uint64_t model_stream = stream + (uint64_t(1) << 56);
    std::vector<double> p_d = Release(SidePlan(r.plan, r.pair, false), r.pair.rows_d, r.pair, pilot,
                                      model_stream, threads);
    std::vector<double> p_dp = Release(SidePlan(r.plan, r.pair, true), r.pair.rows_dp, r.pair,
                                       pilot, model_stream + 1, threads);
    r.calibration = c.gaussian_statistic ? GaussianModelTest(p_d, p_dp, runs_per_side, delta, alpha)
                                         : ModelTest(p_d, p_dp, runs_per_side, delta, alpha);
    std::vector<double> s_d = Release(SidePlan(r.plan, r.pair, false), r.pair.rows_d, r.pair,
                                      runs_per_side, stream, threads);
    std::vector<double> s_dp = Release(SidePlan(r.plan, r.pair, true), r.pair.rows_dp, r.pair,
                                       runs_per_side, stream + 1, threads);
    std::sort(s_d.begin(), s_d.end());
    std::sort(s_dp.begin(), s_dp.end());
    r.test = Evaluate(s_d, s_dp, r.calibration.threshold, r.calibration.upper_tail, delta, alpha);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }
  const int64_t half = runs_per_side / 2;
  std::vector<double> s_d = Release(SidePlan(r.plan, r.pair, false), r.pair.rows_d, r.pair,
                                    runs_per_side, stream, threads);
  std::vector<double> s_dp = Release(SidePlan(r.plan, r.pair, true), r.pair.rows_dp, r.pair,
                                     runs_per_side, stream + 1, threads);
  std::vector<double> cal_d(s_d.begin(), s_d.begin() + half),
      cal_dp(s_dp.begin(), s_dp.begin() + half);
  std::vector<double> ev_d(s_d.begin() + half, s_d.end()), ev_dp(s_dp.begin() + half, s_dp.end());
  for (auto* v : {&cal_d, &cal_dp, &ev_d, &ev_dp}) std::sort(v->begin(), v->end());
  r.calibration = ChooseTest(cal_d, cal_dp, delta, alpha);
  r.test = Evaluate(ev_d, ev_dp, r.calibration.threshold, r.calibration.upper_tail, delta, alpha);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace dperm::audit
