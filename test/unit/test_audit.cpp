// Reduced privacy audit (the full one is bench/audit.sh, results in
// bench/reports/audit.md): for representative output_gd releases and for every
// algorithm (logistic and Huber where supported, softmax for four),
// worst-case or canary neighbours, 10000 real releases per side and a
// Clopper-Pearson lower bound on epsilon (bench/lib/audit_harness.hpp). An honest
// release must stay at or below its claimed epsilon; the same release with
// its noise divided by 10 (the Plan mutated after planning, production code
// untouched) must be caught above it, which proves the audit can fail.
//
// Flakiness: seeds are fixed, so the outcome is deterministic. Were the seeds
// drawn at random, an honest case would fail with probability <= kAlpha = 1e-4
// (that is what the Clopper-Pearson bound guarantees, the threshold being
// chosen on the first half of the runs and tested on the second), so <= 4e-4
// for the four honest cases together. The broken cases are caught with a wide
// margin (bounds 4.2 and 3.7 against epsilon = 1; the exact epsilon of the
// broken noise on the chosen pairs is 14.4 and 5.7). The every-algorithm
// tests run on two threads (the noise streams are per chunk of runs, so the
// outcome does not depend on the thread count); all Audit* tests take about
// 40 s of CPU (20 s on two idle cores). Their broken cases use each algorithm's strongest canary
// (Huber; logistic for the objective methods, which refuse Huber) and more
// runs where the audit is loose (dp_svrg, dp_svrg_pp: bench/reports/audit.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "../../bench/lib/audit_harness.hpp"

namespace {

using dperm::Accountant;
using dperm::Algorithm;
using dperm::LossKind;
using dperm::audit::AlgorithmCase;
using dperm::audit::Case;
using dperm::audit::MakeCase;
using dperm::audit::Result;
using dperm::audit::RunAudit;
using dperm::audit::Supports;

const int64_t kRuns = 10000;  // releases per side: 5000 choose the test, 5000 evaluate it
const double kAlpha = 1e-4;   // one audit's bound exceeds the true epsilon w.p. <= kAlpha
const double kEpsilon = 1.0, kDelta = 1e-5;
const int kThreads = 2;

// Runs one audit with a seed of its own and prints its line.
Result Audit(const Case& c, uint64_t seed, int64_t runs = kRuns, int threads = 1) {
  Result r = RunAudit(c, runs, kAlpha, seed, threads);
  if (r.pilot_runs == 0)  // output perturbation: searched pair, exact means
    std::printf(
        "[ info ] %s: T=%lld shift/sensitivity=%.3f pair epsilon=%.3f "
        "epsilon_lb=%.3f (claimed %g), %.2f s\n",
        c.name.c_str(), static_cast<long long>(r.plan.iterations),
        r.pair.shift / r.plan.sensitivity, r.pair_epsilon, r.test.epsilon_lb, c.options.epsilon,
        r.seconds);
  else  // canary pair, pilot means
    std::printf(
        "[ info ] %s: T=%lld canary, pilot mean shift=%.4g epsilon_lb=%.3f "
        "(claimed %g), %.2f s\n",
        c.name.c_str(), static_cast<long long>(r.plan.iterations), r.pair.shift, r.test.epsilon_lb,
        c.options.epsilon, r.seconds);
  return r;
}

// Clopper-Pearson against reference values (Boost's find_lower/upper_bound_on_p
// and closed forms at k = 0 and k = n).
TEST(AuditStatistics, ClopperPearson) {
  using dperm::audit::ClopperPearsonLower;
  using dperm::audit::ClopperPearsonUpper;
  EXPECT_NEAR(ClopperPearsonLower(5, 20, 0.025), 0.0865715, 1e-6);
  EXPECT_NEAR(ClopperPearsonUpper(5, 20, 0.025), 0.491046, 1e-6);
  EXPECT_NEAR(ClopperPearsonLower(5, 50000, 1e-4), 8.88952e-6, 1e-10);
  EXPECT_NEAR(ClopperPearsonUpper(16666, 50000, 0.025), 0.337472, 1e-6);
  EXPECT_EQ(ClopperPearsonLower(0, 1000, 0.025), 0.0);
  EXPECT_EQ(ClopperPearsonUpper(1000, 1000, 0.025), 1.0);
  EXPECT_NEAR(ClopperPearsonUpper(0, 1000, 0.025), 1 - std::pow(0.025, 1e-3), 1e-12);
  EXPECT_NEAR(ClopperPearsonLower(1000, 1000, 0.025), std::pow(0.025, 1e-3), 1e-12);
}

// The estimator: equal counts prove nothing; delta is subtracted.
TEST(AuditStatistics, EpsilonLowerBound) {
  using dperm::audit::EpsilonLowerBound;
  EXPECT_EQ(EpsilonLowerBound(500, 500, 1000, 0, 0.05), 0.0);
  double pure = EpsilonLowerBound(900, 100, 1000, 0, 0.05);
  EXPECT_GT(pure, 1.8);  // ln(0.9 / 0.1) = 2.2 less the confidence margins
  EXPECT_LT(pure, std::log(9.0));
  EXPECT_LT(EpsilonLowerBound(900, 100, 1000, 0.5, 0.05), pure);
}

// The pair search finds neighbours that attain the tight sensitivity where it
// is attainable (Huber targets far out, output_gd.cpp's derivation).
TEST(Audit, WorstNeighboursAttainTightHuberSensitivity) {
  for (double l2 : {0.1, 0.0}) {
    Case c = MakeCase(LossKind::kHuber, l2, Accountant::kTight, kEpsilon, kDelta);
    dperm::Plan plan = dperm::PlanRelease(c.options, c.loss, c.n, c.d);
    dperm::audit::Neighbours pair = dperm::audit::WorstNeighbours(plan);
    // plan.sensitivity includes the snapping's rounding term (noise.hpp),
    // which no pair of unrounded outputs shows.
    const double unrounded = plan.sensitivity - plan.rounding_inflation;
    EXPECT_NEAR(pair.shift, unrounded, 1e-9 * unrounded) << c.name;
  }
}

// Honest releases: the lower bound stays at or below the claimed epsilon.
TEST(Audit, HonestReleasesWithinClaimedEpsilon) {
  const Case cases[] = {
      MakeCase(LossKind::kLogistic, 0.1, Accountant::kTight, kEpsilon, kDelta),
      MakeCase(LossKind::kLogistic, 0.0, Accountant::kTight, kEpsilon, 0.0),
      MakeCase(LossKind::kHuber, 0.1, Accountant::kTight, kEpsilon, 0.0),
      MakeCase(LossKind::kHuber, 0.0, Accountant::kPaper, kEpsilon, kDelta),
  };
  uint64_t seed = 1000;
  for (const Case& c : cases) {
    Result r = Audit(c, seed++);
    EXPECT_LE(r.test.epsilon_lb, c.options.epsilon) << c.name;
  }
}

// Teeth: the same mechanism with its noise divided by 10 is caught.
TEST(Audit, BrokenMechanismIsFlagged) {
  const Case cases[] = {
      MakeCase(LossKind::kHuber, 0.1, Accountant::kTight, kEpsilon, kDelta, 10),
      MakeCase(LossKind::kLogistic, 0.1, Accountant::kTight, kEpsilon, 0.0, 10),
  };
  uint64_t seed = 2000;
  for (const Case& c : cases) {
    Result r = Audit(c, seed++);
    EXPECT_GT(r.test.epsilon_lb, c.options.epsilon) << c.name;
  }
}

// Every algorithm and loss, honest: the bound stays at or below epsilon.
// Softmax for the four cheapest (output_gd, bolton, dp_gd, dp_accmd).
TEST(AuditAlgorithms, HonestReleasesWithinClaimedEpsilon) {
  uint64_t seed = 3000;
  for (Algorithm a : dperm::AllAlgorithms())
    for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber, LossKind::kSoftmax}) {
      bool softmax_ok = a == Algorithm::kOutputGd || a == Algorithm::kBolton ||
                        a == Algorithm::kDpGd || a == Algorithm::kDpAccmd;
      if (!Supports(a, loss) || (loss == LossKind::kSoftmax && !softmax_ok)) continue;
      Case c = AlgorithmCase(a, loss, kEpsilon, kDelta);
      Result r = Audit(c, seed++, kRuns, kThreads);
      EXPECT_LE(r.test.epsilon_lb, c.options.epsilon) << c.name;
    }
}

// Teeth for every algorithm: noise / 10 is caught, with the algorithm's
// strongest canary (Huber, whose gradient gap is the full 2L; logistic for
// the objective methods) and 4x the runs for the SVRG pair, whose audit only
// reaches the snapshot part of the split analysis (svrg_common.cpp).
// Where the broken release stands far out, 4000 runs per side suffice
// (kStrongRuns): output_gd, dp_sgd, dp_lssgd, bolton, dp_gd and dp_accmd
// bound at 3.8-4.2 with 10000 runs, and at 4000 runs with four seeds each
// (4000 + k to 7000 + k by 1000, k the algorithm's enum value) at 3.19 to
// 3.92: more than 2 above epsilon = 1 every time. rrpsgd (its canary is
// the drawn row in 1 run of 10: 1.67 to 1.99 at 4000 runs) and the
// objective and SVRG methods (1.3-1.7) keep their runs.
const int64_t kStrongRuns = 4000;
TEST(AuditAlgorithms, BrokenReleasesAreFlagged) {
  uint64_t seed = 4000;
  for (Algorithm a : dperm::AllAlgorithms()) {
    LossKind loss = Supports(a, LossKind::kHuber) ? LossKind::kHuber : LossKind::kLogistic;
    bool svrg = a == Algorithm::kDpSvrg || a == Algorithm::kDpSvrgPp;
    bool strong = a == Algorithm::kOutputGd || a == Algorithm::kDpSgd || a == Algorithm::kDpLssgd ||
                  a == Algorithm::kBolton || a == Algorithm::kDpGd || a == Algorithm::kDpAccmd;
    Case c = AlgorithmCase(a, loss, kEpsilon, kDelta, 10);
    Result r = Audit(c, seed++, svrg ? 4 * kRuns : strong ? kStrongRuns : kRuns, kThreads);
    EXPECT_GT(r.test.epsilon_lb, c.options.epsilon) << c.name;
  }
}

}  // namespace

// Issue 44 item 13: the auditor sees a factor of two. The canary moves the
// full calibrated sensitivity in every step (rrpsgd at n = 1: its one
// noisy step is on the canary; dp_sgd at batch n: the Huber canary's
// gradient gap 2L in every step) and the threshold comes from a Gaussian
// model of pilot statistics (ModelTest), so every evaluation run counts.
// The same release with its noise halved must then be flagged (eps_lb > eps),
// at row level and at unit level (k = 5 slots, planned with
// max_rows_per_unit = 5), and the honest one not. Seeds fixed. Measured
// with these seeds (alpha = 1e-4): honest 0.258 / 0.384 / 0.402, noise / 2
// 1.196 / 1.192 / 1.204 (rrpsgd row, dp_sgd row, dp_sgd unit; the exact
// epsilon of rrpsgd's pair is 1.00 honest and 2.15 at noise / 2), 30 s
// wall (9 s CPU) on two busy cores. kHalfRuns: releases per side (plus a quarter of that
// for each of the two pilots).
const int64_t kHalfRuns = 100000;
TEST(AuditTable, NoiseHalvedIsFlaggedHonestIsNot) {
  uint64_t seed = 5000;
  for (int64_t unit : {int64_t(1), int64_t(5)})
    for (Algorithm a : {Algorithm::kRrpsgd, Algorithm::kDpSgd}) {
      // rrpsgd's unit (n = k = 5 rows, all in the unit, so its one step is
      // always on a canary slot) is left to the bench table: the unit plan
      // is the row-level one at epsilon / 5, sampled at q = 1/5, with group
      // delta', and its Gaussian (sigma 1.004, gap 2L = 0.2) is at exact
      // epsilon 0.72 as planned and only 1.55 at noise / 2
      // (GaussianEpsilon), too little room at alpha = 1e-4: 0.999 with
      // 400000 runs per side (seed 5004).
      if (unit > 1 && a == Algorithm::kRrpsgd) continue;
      Case c = AlgorithmCase(a, LossKind::kHuber, kEpsilon, kDelta);
      if (unit > 1) {
        c.unit_rows = unit;
        c.options.max_rows_per_unit = unit;
        if (a == Algorithm::kRrpsgd) c.n = int(unit);
        c.name += " (unit of 5)";
      }
      for (double divisor : {1.0, 2.0}) {
        Case run = divisor > 1 ? dperm::audit::Broken(c, divisor) : c;
        Result r = RunAudit(run, kHalfRuns, kAlpha, seed++, kThreads, 0, true);
        std::printf("[ info ] %s: T=%lld epsilon_lb=%.3f (claimed %g), %.2f s\n", run.name.c_str(),
                    static_cast<long long>(r.plan.iterations), r.test.epsilon_lb, kEpsilon,
                    r.seconds);
        if (divisor > 1) EXPECT_GT(r.test.epsilon_lb, kEpsilon) << run.name;
        else EXPECT_LE(r.test.epsilon_lb, kEpsilon) << run.name;
      }
    }
}

// The white-box seam (dperm/algorithms/audit_seam.hpp) is test-only and
// inert when unused: a plan pointing at a seam whose hooks are empty, or
// whose oracle adds nothing and whose observer only reads, trains to the
// same w bit for bit with the same seed as the plan without it (no extra
// draws, no changed arithmetic), for the four mechanisms that call it.
TEST(AuditWhiteBox, SeamWithoutEffectChangesNothing) {
  dperm::AuditSeam empty, reading;
  int64_t observed = 0;
  reading.oracle = [](dperm::AuditSite, const int64_t*, int64_t, double*, int) {};
  reading.observe = [&](dperm::AuditSite, const double*, int, double) { observed++; };
  for (Algorithm a :
       {Algorithm::kDpSvrg, Algorithm::kDpSvrgPp, Algorithm::kSsp, Algorithm::kDpNewton}) {
    LossKind loss = Supports(a, LossKind::kHuber) ? LossKind::kHuber : LossKind::kLogistic;
    Case c = AlgorithmCase(a, loss, kEpsilon, kDelta);
    dperm::Plan plan = dperm::PlanRelease(c.options, c.loss, c.n, c.d);
    std::vector<double> rows(size_t(c.n) * (c.d + 1));
    for (size_t i = 0; i < rows.size(); i++)
      rows[i] = (i % 3 == 2) ? (i % 2 ? 1.0 : -1.0) : 0.3 * std::sin(double(i));
    auto train = [&](const dperm::AuditSeam* seam) {
      dperm::Plan p = plan;
      p.audit_seam = seam;
      dperm::SecureRng rng = dperm::SecureRng::FromSeed(77);
      return dperm::TrainModel(p, rows.data(), rng);
    };
    const std::vector<double> w = train(nullptr);
    EXPECT_EQ(w, train(&empty)) << c.name;
    observed = 0;
    EXPECT_EQ(w, train(&reading)) << c.name;
    EXPECT_GT(observed, 0) << c.name;
  }
}

// The white-box canaries attain the calibrated sensitivity: the oracle
// pair's shift of the packed sums (ssp, dp_newton) is the plan's exact
// sensitivity (the plan's adds only the sums' rounding slack
// here, up to 0.5 %); for dp_svrg each step's two parts move by 2L/n and 2D/b.
TEST(AuditWhiteBox, OraclePairsAttainTheSensitivity) {
  for (Algorithm a :
       {Algorithm::kDpSvrg, Algorithm::kDpSvrgPp, Algorithm::kSsp, Algorithm::kDpNewton}) {
    LossKind loss = Supports(a, LossKind::kHuber) ? LossKind::kHuber : LossKind::kLogistic;
    Case c = AlgorithmCase(a, loss, kEpsilon, kDelta);
    c.n = 50;
    dperm::Plan plan = dperm::PlanRelease(c.options, c.loss, c.n, c.d);
    dperm::audit::Neighbours pair = dperm::audit::WhiteBoxNeighbours(plan);
    // svrg: plan.sensitivity = 2D/b + 2L/n (+ rounding), the sum of the two
    // parts' shifts; measured by calling both sides' oracles on a full batch.
    double attained = pair.oracle_shift;
    if (a == Algorithm::kDpSvrg || a == Algorithm::kDpSvrgPp) {
      std::vector<int64_t> batch(size_t(plan.batch_size));
      for (size_t i = 0; i < batch.size(); i++) batch[i] = plan.n - 1 - int64_t(i);
      attained = 0;
      for (dperm::AuditSite site :
           {dperm::AuditSite::kSvrgSnapshot, dperm::AuditSite::kSvrgSampled}) {
        std::vector<double> vd(size_t(plan.dim), 0.0), vdp(size_t(plan.dim), 0.0);
        const int64_t count = site == dperm::AuditSite::kSvrgSnapshot ? plan.n : plan.batch_size;
        pair.seam_d->oracle(site, batch.data(), count, vd.data(), plan.dim);
        pair.seam_dp->oracle(site, batch.data(), count, vdp.data(), plan.dim);
        double d2 = 0;
        for (int j = 0; j < plan.dim; j++)
          d2 += (vd[size_t(j)] - vdp[size_t(j)]) * (vd[size_t(j)] - vdp[size_t(j)]);
        attained += std::sqrt(d2);
      }
    }
    EXPECT_GT(attained / plan.sensitivity, 0.995) << c.name;
    EXPECT_LE(attained / plan.sensitivity, 1.0) << c.name;
    std::printf("[ info ] %s: oracle shift %.6g, plan sensitivity %.6g\n", c.name.c_str(),
                pair.oracle_shift, plan.sensitivity);
  }
}

// Issue 44 item 13, white box: ssp's noise / 2 release is flagged and the
// honest one is not, with the white-box canary (WhiteBoxNeighbours: the
// attaining pair of packed contributions of ssp.cpp's sensitivity
// derivation, supplied by the oracle, and the noisy packed sums read through
// Plan::audit_seam). Its exact pair epsilon (WhiteBoxEpsilon) is 0.999 as
// planned and 2.152 at noise / 2, the Gaussian mechanism of ratio 2 mu
// (through w, real logistic rows reach r = 0.47 of the sensitivity and
// noise / 2 audited at 0.08: bench/reports/audit.md). Seeds fixed; alpha =
// 1e-4; kHalfRuns releases per side plus a quarter for each pilot.
TEST(AuditTable, WhiteBoxSspNoiseHalvedIsFlaggedHonestIsNot) {
  uint64_t seed = 6000;
  Case c = AlgorithmCase(Algorithm::kSsp, LossKind::kLogistic, kEpsilon, kDelta);
  c.white_box = true;
  c.conditioned_base = 0;
  c.n = 50;
  c.name += " (white box)";
  for (double divisor : {1.0, 2.0}) {
    Case run = divisor > 1 ? dperm::audit::Broken(c, divisor) : c;
    Result r = RunAudit(run, kHalfRuns, kAlpha, seed++, kThreads, 0, true);
    std::printf("[ info ] %s: epsilon_lb=%.3f (claimed %g, exact pair epsilon %.3f), %.2f s\n",
                run.name.c_str(), r.test.epsilon_lb, kEpsilon, r.pair_epsilon, r.seconds);
    EXPECT_GT(r.pair_epsilon, divisor > 1 ? 2.0 : 0.99) << run.name;
    if (divisor > 1) EXPECT_GT(r.test.epsilon_lb, kEpsilon) << run.name;
    else EXPECT_LE(r.test.epsilon_lb, kEpsilon) << run.name;
  }
}
