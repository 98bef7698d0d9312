// No algorithm ships a default worse than the zero model:
// every algorithm x loss, at its default plan (only epsilon, delta, l2 and,
// for softmax, classes given), on a real dataset, with fixed seeds.
//
// Excess empirical risk F(w) - F(w*), F = mean loss + l2/2 ||w||^2 (the
// objective the mechanisms minimise, intercept included), w* by damped
// Newton (bench/lib/reference_solvers.hpp). The zero model's excess F(0) - F(w*) is
// the bar at epsilon = 1.
//
// The same code prints the tables of bench/reports/algorithms.md ("Defaults against
// the zero model") through the disabled test DefaultRiskTable.Print, which
// bench/scripts/algorithms/default_risk.sh runs with its settings in DPERM_RISK_* variables.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "dperm/algorithms/registry.hpp"
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"
#include "real_datasets.hpp"
#include "../../bench/lib/reference_solvers.hpp"

namespace dperm::testing {
namespace {

// One loss on one real dataset at a fixed l2.
struct Problem {
  std::string name;  // "bank", "wine", "wine3"
  LossKind loss;
  int classes;  // softmax only
  double l2;
  Dataset data;
  double best = 0;  // F(w*)
  double zero = 0;  // F(0) - F(w*)
};

Options DefaultOptions(const Problem& pr, Algorithm a, double epsilon) {
  Options o;
  o.epsilon = epsilon;
  o.delta = 1e-6;
  o.algorithm = a;
  o.l2 = pr.l2;
  o.fit_intercept = true;
  o.classes = pr.classes;
  return o;
}

// A dataset of load_datasets.py by name, or WINE relabelled: "wine2"
// (binary), "wine3" (three classes).
Dataset LoadProblemData(const std::string& name) {
  if (name == "wine2") return WineBinary(LoadCopy("wine"));
  if (name == "wine3") return WineThreeClasses(LoadCopy("wine"));
  return LoadCopy(name);
}

Problem MakeProblem(const std::string& name, LossKind loss, double l2) {
  Problem pr{name, loss, loss == LossKind::kSoftmax ? 3 : 0, l2, LoadProblemData(name)};
  if (pr.data.n() == 0) return pr;  // LoadCopy has failed the test, naming the path
  // Any algorithm's plan gives the objective; output_gd plans every loss.
  Plan p = PlanRelease(DefaultOptions(pr, Algorithm::kOutputGd, 1), loss, pr.data.n(), pr.data.d);
  std::unique_ptr<Objective> f = MakeObjective(p, pr.data.rows.data());
  Eigen::VectorXd w = NewtonMinimiser(*f);
  EXPECT_LT(f->Gradient(w).norm(), 1e-9) << name;
  pr.best = f->Value(w);
  pr.zero = f->Value(Eigen::VectorXd::Zero(f->dim())) - pr.best;
  return pr;
}

struct Outcome {
  bool planned = false;
  std::string error;  // the plan's refusal, when not planned
  double excess = 0;
  double seconds = 0;
  int64_t steps = 0;  // the plan's noisy steps (0: output or objective perturbation)
};

// The default release of `a` at epsilon, trained with `seed`; `noiseless`
// trains the same plan with its noise turned off.
Outcome Release(const Problem& pr, Algorithm a, double epsilon, uint64_t seed,
                bool noiseless = false) {
  Outcome r;
  Plan p;
  try {
    p = PlanRelease(DefaultOptions(pr, a, epsilon), pr.loss, pr.data.n(), pr.data.d);
  } catch (const Error& e) {
    r.error = e.what();
    return r;
  }
  r.planned = true;
  r.steps = p.noisy_steps;
  if (noiseless) p = Noiseless(p);
  const auto start = std::chrono::steady_clock::now();
  Eigen::VectorXd w;
  try {
    w = TrainSeeded(p, pr.data.rows, seed);
  } catch (const Error& e) {  // e.g. objective_approx's missed certificate
    r.planned = false;
    r.error = e.what();
    return r;
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.excess = MakeObjective(p, pr.data.rows.data())->Value(w) - pr.best;
  return r;
}

// The losses each algorithm trains, as its spec says (AlgorithmSpec::
// refused_losses: objective, objective_approx, ssp and dp_newton train
// logistic only).
bool Supports(Algorithm a, LossKind loss) { return dperm::TakesLoss(a, loss); }

// ---------------------------------------------------------------------------
// The CI check. Datasets: WINE (n = 6497, d = 12) for all three losses
// (logistic: quality >= 6 against below; Huber: quality scaled to [0, 1];
// softmax: three quality bins), at l2 = 0.01 (dp_svrg needs l2 > 0, the
// softmax minimiser needs it to be unique). bench/reports/algorithms.md has BANK and
// the other sets.
//
// (a) at epsilon = 1e4 the default's excess risk (training seed 1) is below
//     kLargeEpsilonBound (the defaults converge when the noise is small);
// (b) at epsilon = 1 (seed 1) it is below the zero model's;
// (c) it improves with epsilon: over kEpsilons = 0.1, 1, 10, 1e4 the excess
//     never rises by more than its seed noise from one epsilon to the next
//     (CheckImproves below).
// kLargeEpsilonBound: the largest passing excess at epsilon = 1e4 measured
// when (a) was added was 0.0051 (objective, logistic: its lambda ||w||^2
// term does not vanish with epsilon); 0.015 leaves a margin of about 3 and
// is below the smallest zero-model excess (0.035, Huber). Largest passing
// value now: 0.0107 (dp_lssgd softmax, its step tuned for every epsilon).
// bench/scripts/algorithms/default_risk.sh prints these cells with more seeds.
//
// KNOWN GAPS: cells that fail (a) or (b), each with the value measured
// (training seed 1) and the reason; the test asserts the value stays below
// 1.5x the measurement (a regression guard; fixing one means moving it out
// of this list); bench/reports/algorithms.md explains them.
const double kLargeEpsilon = 1e4;
const double kLargeEpsilonBound = 0.015;
const double kEpsilons[] = {0.1, 1, 10, kLargeEpsilon};

struct KnownGap {
  Algorithm algorithm;
  LossKind loss;
  double epsilon;
  double measured;  // excess; +inf: the release is refused (an Error)
};
const KnownGap kKnownGaps[] = {
    // (Closed: dp_sgd's four on n = 6497 by the PLD calibration;
    // dp_lssgd logistic / softmax at 1e4 by the noise-balanced step; the
    // SVRG cells at epsilon = 1 (dp_svrg Huber by the Huber F(0) bound in
    // its T balance, dp_svrg_pp Huber / softmax by the noise-balanced step);
    // objective_approx at 1e4 by calibrating at min(epsilon, 16).)
    //
    // rrpsgd softmax at 1e4: one-row steps (T = 10 n = 64970 of them, all
    // charged) keep per-coordinate noise s ~ 0.5 L even at epsilon = 1e4
    // (WBK Thm 9 above epsilon 10; the tighter dominating-pair RDP gives
    // 0.28 L but takes 15 s to calibrate), and with dim = 39 that noise,
    // not the step count, sets the error: 2 n steps give 0.024 +- 0.012
    // against 0.023 +- 0.011 at n (4 seeds). See bench/reports/algorithms.md.
    {Algorithm::kRrpsgd, LossKind::kSoftmax, kLargeEpsilon, 0.0178},
};

const KnownGap* FindGap(Algorithm a, LossKind loss, double epsilon) {
  for (const KnownGap& g : kKnownGaps)
    if (g.algorithm == a && g.loss == loss && g.epsilon == epsilon) return &g;
  return nullptr;
}

// One algorithm's default at one epsilon: its plan (plans do not depend on
// the seed) and the excess of the seeds trained so far (excess[0]: seed 1).
struct Cell {
  bool planned = false;
  std::string error;
  Plan plan;
  std::vector<double> excess;
  double Mean() const {
    double sum = 0;
    for (double e : excess) sum += e;
    return sum / double(excess.size());
  }
  // The standard error of Mean() (sample sd / sqrt(seeds)).
  double StandardError() const {
    const double m = Mean();
    double sq = 0;
    for (double e : excess) sq += (e - m) * (e - m);
    return std::sqrt(sq / double(excess.size() - 1) / double(excess.size()));
  }
};

// Trains seeds excess.size() + 1 .. seeds.
void TrainSeeds(const Problem& pr, Cell& c, int seeds) {
  std::unique_ptr<Objective> f = MakeObjective(c.plan, pr.data.rows.data());
  for (int s = int(c.excess.size()) + 1; s <= seeds; s++)
    c.excess.push_back(f->Value(TrainSeeded(c.plan, pr.data.rows, uint64_t(s))) - pr.best);
}

Cell Train(const Problem& pr, Algorithm a, double epsilon) {
  Cell c;
  try {
    c.plan = PlanRelease(DefaultOptions(pr, a, epsilon), pr.loss, pr.data.n(), pr.data.d);
  } catch (const Error& e) {
    c.error = e.what();
    return c;
  }
  c.planned = true;
  TrainSeeds(pr, c, 1);
  return c;
}

// (a) / (b) on seed 1: the default at epsilon below `bound`, or within its
// known gap.
double CheckCell(const Problem& pr, Algorithm a, double epsilon, const Cell& c, double bound,
                 const char* what) {
  const KnownGap* gap = FindGap(a, pr.loss, epsilon);
  if (gap != nullptr && std::isinf(gap->measured)) {
    EXPECT_FALSE(c.planned) << "known gap: it plans now; update kKnownGaps";
    return INFINITY;
  }
  EXPECT_TRUE(c.planned) << c.error;
  if (!c.planned) return INFINITY;
  if (gap != nullptr)
    EXPECT_LT(c.excess[0], 1.5 * gap->measured)
        << "known gap at epsilon " << epsilon << " got worse";
  else EXPECT_LT(c.excess[0], bound) << "epsilon " << epsilon << ": " << what;
  return c.excess[0];
}

// (c) ImprovesWithEpsilon, for consecutive epsilons e < e'. Seed 1 at both
// (the runs (a) and (b) need anyway) is a paired comparison: the same
// random stream drives both releases (batches, rounds, the standard normal
// draws the noise scales), so the difference is far less noisy than two
// independent runs. If the seed-1 excess does not rise (beyond a floor of
// 1e-3 of the zero model's excess, for cells that agree to rounding) the
// pair passes. Otherwise seeds 2..kSeeds are trained at both epsilons and
// the mean may rise by at most 3 standard errors of the difference of the
// means (sqrt(se^2 + se'^2), from the seeds' spread) plus the floor: a
// rise that large is not seed noise. Screening on seed 1 keeps CI cost
// near that of (a) and (b) alone (two more releases per cell).
const int kSeeds = 3;

void CheckImproves(const Problem& pr, Algorithm a, std::vector<Cell>& cells) {
  const double floor = 1e-3 * pr.zero;
  for (size_t i = 0; i + 1 < cells.size(); i++) {
    Cell &lo = cells[i], &hi = cells[i + 1];
    if (!lo.planned || !hi.planned) continue;  // (a) / (b) report refusals
    if (hi.excess[0] <= lo.excess[0] + floor) continue;
    TrainSeeds(pr, lo, kSeeds);
    TrainSeeds(pr, hi, kSeeds);
    const double se = std::hypot(lo.StandardError(), hi.StandardError());
    EXPECT_LE(hi.Mean(), lo.Mean() + 3 * se + floor)
        << AlgorithmName(a) << ": mean excess of " << kSeeds << " seeds at epsilon "
        << kEpsilons[i + 1] << " (" << hi.Mean() << ") above that at " << kEpsilons[i] << " ("
        << lo.Mean() << ") by more than 3 standard errors (" << se << ")";
  }
}

void CheckDefaults(const Problem& pr) {
  ASSERT_GT(pr.data.n(), 0) << "no data for " << pr.name;
  for (Algorithm a : AllAlgorithms()) {
    if (!Supports(a, pr.loss)) continue;
    SCOPED_TRACE(std::string(AlgorithmName(a)) + " " + LossName(pr.loss) + " on " + pr.name);
    std::vector<Cell> cells;
    const std::clock_t start = std::clock();
    for (double e : kEpsilons) cells.push_back(Train(pr, a, e));
    const double cpu = double(std::clock() - start) / CLOCKS_PER_SEC;
    const double large =
        CheckCell(pr, a, kLargeEpsilon, cells.back(), kLargeEpsilonBound, "does not converge");
    const double one = CheckCell(pr, a, 1, cells[1], pr.zero, "worse than the zero model");
    CheckImproves(pr, a, cells);
    std::printf(
        "%-16s %-8s eps 1e4 %.3g%s, eps 1 %.3g%s (zero model %.3g); eps 0.1 / 1 / 10 / 1e4:",
        AlgorithmName(a), LossName(pr.loss), large,
        FindGap(a, pr.loss, kLargeEpsilon) ? " [known gap]" : "", one,
        FindGap(a, pr.loss, 1) ? " [known gap]" : "", pr.zero);
    for (const Cell& c : cells)
      std::printf(" %.3g%s", c.planned ? c.Mean() : INFINITY, c.excess.size() > 1 ? "*" : "");
    std::printf(" (%.1f s CPU)\n", cpu);
  }
}

TEST(DefaultRisk, EveryAlgorithmLogisticOnWine) {
  DPERM_SKIP_WITHOUT_SHARED("data/raw");
  CheckDefaults(MakeProblem("wine2", LossKind::kLogistic, 0.01));
}

TEST(DefaultRisk, EveryAlgorithmHuberOnWine) {
  DPERM_SKIP_WITHOUT_SHARED("data/raw");
  CheckDefaults(MakeProblem("wine", LossKind::kHuber, 0.01));
}

TEST(DefaultRisk, EveryAlgorithmSoftmaxOnWine) {
  DPERM_SKIP_WITHOUT_SHARED("data/raw");
  CheckDefaults(MakeProblem("wine3", LossKind::kSoftmax, 0.01));
}

// ---------------------------------------------------------------------------
// The table printer (bench/scripts/algorithms/default_risk.sh). Settings, space-separated:
//   DPERM_RISK_PROBLEMS  dataset:loss:l2 ... (default "bank:logistic:0.01")
//   DPERM_RISK_EPSILONS  (default "0.1 1 10 100000")
//   DPERM_RISK_SEEDS     number of training seeds, 1..N (default 3)
//   DPERM_RISK_ALGORITHMS algorithm names (default all)
// Prints one markdown table per problem: mean excess risk over the seeds at
// each epsilon, the noiseless run of the epsilon = 1 plan, seconds per
// release at epsilon = 1.
std::vector<std::string> Words(const char* env, const char* fallback) {
  const char* v = std::getenv(env);
  std::istringstream in((v != nullptr && *v != '\0') ? v : fallback);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

LossKind LossNamed(const std::string& s) {
  return s == "huber"     ? LossKind::kHuber
         : s == "softmax" ? LossKind::kSoftmax
                          : LossKind::kLogistic;
}

std::string Cell(double mean, double sd) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g ± %.2g", mean, sd);
  return buf;
}

TEST(DefaultRiskTable, DISABLED_Print) {
  const std::vector<std::string> problems = Words("DPERM_RISK_PROBLEMS", "bank:logistic:0.01");
  std::vector<double> epsilons;
  for (const std::string& e : Words("DPERM_RISK_EPSILONS", "0.1 1 10 100000"))
    epsilons.push_back(std::strtod(e.c_str(), nullptr));
  const int seeds = std::atoi(Words("DPERM_RISK_SEEDS", "3")[0].c_str());
  std::vector<std::string> wanted = Words("DPERM_RISK_ALGORITHMS", "");
  for (const std::string& spec : problems) {
    const size_t c1 = spec.find(':'), c2 = spec.rfind(':');
    const std::string name = spec.substr(0, c1);
    Problem pr = MakeProblem(name, LossNamed(spec.substr(c1 + 1, c2 - c1 - 1)),
                             std::strtod(spec.substr(c2 + 1).c_str(), nullptr));
    ASSERT_GT(pr.data.n(), 0) << "no data for " << name;
    std::printf("\n### %s, %s, l2 = %g (n = %lld, d = %d; zero model excess %.4g)\n\n",
                name.c_str(), LossName(pr.loss), pr.l2, (long long)pr.data.n(), pr.data.d, pr.zero);
    std::printf("| algorithm |");
    for (double e : epsilons) std::printf(" ε = %g |", e);
    std::printf(" no noise (ε = 1 plan) | s per release (ε = 1) |\n|---|");
    for (size_t i = 0; i < epsilons.size() + 2; i++) std::printf("---:|");
    std::printf("\n");
    for (Algorithm a : AllAlgorithms()) {
      if (!wanted.empty() &&
          std::find(wanted.begin(), wanted.end(), AlgorithmName(a)) == wanted.end())
        continue;
      if (!Supports(a, pr.loss)) continue;
      std::printf("| %s |", AlgorithmName(a));
      double seconds = 0;
      for (double e : epsilons) {
        double sum = 0, sq = 0;
        Outcome r;
        for (int s = 1; s <= seeds; s++) {
          r = Release(pr, a, e, uint64_t(s));
          if (!r.planned) break;
          sum += r.excess;
          sq += r.excess * r.excess;
          if (e == 1) seconds += r.seconds / seeds;
        }
        if (!r.planned) {
          std::printf(" refused |");
          continue;
        }
        const double mean = sum / seeds, var = std::max(0.0, sq / seeds - mean * mean);
        std::printf(" %s |", Cell(mean, std::sqrt(var)).c_str());
        std::fflush(stdout);
      }
      Outcome quiet = Release(pr, a, 1, 1, /*noiseless=*/true);
      std::printf(" %s | %.2f |\n", quiet.planned ? Cell(quiet.excess, 0).c_str() : "refused",
                  seconds);
      std::fflush(stdout);
    }
  }
}

}  // namespace
}  // namespace dperm::testing
