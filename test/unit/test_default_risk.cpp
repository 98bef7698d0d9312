// No algorithm ships a default worse than the zero model (issue 15, item 4):
// every algorithm x loss, at its default plan (only epsilon, delta, l2 and,
// for softmax, classes given), on a real dataset, with fixed seeds.
//
// Excess empirical risk F(w) - F(w*), F = mean loss + l2/2 ||w||^2 (the
// objective the mechanisms minimise, intercept included), w* by damped
// Newton (reference_solvers.hpp). The zero model's excess F(0) - F(w*) is
// the bar at epsilon = 1.
//
// The same code prints the tables of docs/algorithms.md ("Defaults against
// the zero model") through the disabled test DefaultRiskTable.Print, which
// bench/default_risk.sh runs with its settings in DPERM_RISK_* variables.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "dperm/options.hpp"
#include "dperm/plan.hpp"
#include "dperm/train.hpp"
#include "real_datasets.hpp"
#include "reference_solvers.hpp"

namespace dperm::testing {
namespace {

// One loss on one real dataset at a fixed l2.
struct Problem {
  std::string name;  // "bank", "wine", "wine3"
  LossKind loss;
  int classes;       // softmax only
  double l2;
  Dataset data;
  double best = 0;   // F(w*)
  double zero = 0;   // F(0) - F(w*)
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
Outcome Release(const Problem& pr, Algorithm a, double epsilon, uint64_t seed, bool noiseless = false) {
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
  Eigen::VectorXd w = TrainSeeded(p, pr.data.rows, seed);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.excess = MakeObjective(p, pr.data.rows.data())->Value(w) - pr.best;
  return r;
}

bool Supports(Algorithm a, LossKind loss) {
  // objective and objective_approx need a twice-differentiable loss with a
  // rank-1 Hessian: logistic only (README, Algorithms).
  return loss == LossKind::kLogistic ||
         (a != Algorithm::kObjective && a != Algorithm::kObjectiveApprox);
}

// ---------------------------------------------------------------------------
// The CI check. Datasets: WINE (n = 6497, d = 12) for all three losses
// (logistic: quality >= 6 against below; Huber: quality scaled to [0, 1];
// softmax: three quality bins), at l2 = 0.01 (dp_svrg needs l2 > 0, the
// softmax minimiser needs it to be unique). WINE keeps the 58 releases under
// a minute on two cores; docs/algorithms.md has BANK and the other sets.
//
// (a) at epsilon = 1e4 the default's excess risk is below kLargeEpsilonBound
//     (the defaults converge when the noise is negligible);
// (b) at epsilon = 1 it is below the zero model's.
// Training seed 1. kLargeEpsilonBound: the largest passing excess at
// epsilon = 1e4 measured when this test was added is 0.0051 (objective,
// logistic: its lambda ||w||^2 term does not vanish with epsilon); 0.015
// leaves a margin of about 3 and is 4x below the smallest zero-model excess
// (0.069). bench/default_risk.sh prints these cells with more seeds.
//
// KNOWN GAPS: cells that fail (a) or (b) today, each with the value measured
// when this test was added (training seed 1). For them the test asserts the
// value stays below 1.5x the measurement (a regression guard; fixing one
// means moving it out of this list); docs/algorithms.md explains them.
const double kLargeEpsilon = 1e4;
const double kLargeEpsilonBound = 0.015;

struct KnownGap {
  Algorithm algorithm;
  LossKind loss;
  double epsilon;
  double measured;  // excess; +inf: the release is refused (an Error)
};
const KnownGap kKnownGaps[] = {
    // (dp_sgd's four gaps on n = 6497 -- few, very noisy steps under WBK
    // Thm 9 -- closed with the PLD calibration of issue 15: excess at
    // epsilon = 1 now 0.0032 / 3.7e-5 / 0.018, at 1e4 (Huber) 1e-6.)
    // dp_lssgd / rrpsgd: their default T stops short (optimisation error).
    {Algorithm::kDpLssgd, LossKind::kLogistic, kLargeEpsilon, 0.0212},
    {Algorithm::kDpLssgd, LossKind::kSoftmax, kLargeEpsilon, 0.0329},
    {Algorithm::kRrpsgd, LossKind::kSoftmax, kLargeEpsilon, 0.0178},
    // objective_approx: the planned SVRG epochs miss the distance
    // certificate at epsilon = 1e4, so nothing is released.
    {Algorithm::kObjectiveApprox, LossKind::kLogistic, kLargeEpsilon, INFINITY},
    // The SVRG methods on a small set (n = 6497) with Huber (beta = 2) and
    // softmax at epsilon = 1: mini-batches amplify only when n eps is large
    // against sqrt(K); on BANK (n = 45211) they pass by far
    // (docs/algorithms.md).
    {Algorithm::kDpSvrg, LossKind::kHuber, 1, 0.189},
    {Algorithm::kDpSvrgPp, LossKind::kHuber, 1, 0.115},
    // (0.144 with discrete Gaussian noise; 0.216 with the rounded exact
    // Gaussian's draws at the same seed, issue 15: same sigma, other noise.)
    {Algorithm::kDpSvrgPp, LossKind::kSoftmax, 1, 0.216},
};

const KnownGap* FindGap(Algorithm a, LossKind loss, double epsilon) {
  for (const KnownGap& g : kKnownGaps)
    if (g.algorithm == a && g.loss == loss && g.epsilon == epsilon) return &g;
  return nullptr;
}

// One cell: the default at epsilon below `bound`, or within its known gap.
double CheckCell(const Problem& pr, Algorithm a, double epsilon, double bound, const char* what) {
  const KnownGap* gap = FindGap(a, pr.loss, epsilon);
  if (gap != nullptr && std::isinf(gap->measured)) {
    EXPECT_THROW(Release(pr, a, epsilon, 1), Error) << "known gap: it releases now; update kKnownGaps";
    return INFINITY;
  }
  Outcome r = Release(pr, a, epsilon, 1);
  EXPECT_TRUE(r.planned) << r.error;
  if (gap != nullptr)
    EXPECT_LT(r.excess, 1.5 * gap->measured) << "known gap at epsilon " << epsilon << " got worse";
  else
    EXPECT_LT(r.excess, bound) << "epsilon " << epsilon << ": " << what;
  return r.excess;
}

void CheckDefaults(const Problem& pr) {
  ASSERT_GT(pr.data.n(), 0) << "no data for " << pr.name;
  for (Algorithm a : AllAlgorithms()) {
    if (!Supports(a, pr.loss)) continue;
    SCOPED_TRACE(std::string(AlgorithmName(a)) + " " + LossName(pr.loss) + " on " + pr.name);
    const double large = CheckCell(pr, a, kLargeEpsilon, kLargeEpsilonBound, "does not converge");
    const double one = CheckCell(pr, a, 1, pr.zero, "worse than the zero model");
    std::printf("%-16s %-8s excess at eps 1e4 %.3g%s, at eps 1 %.3g%s (zero model %.3g)\n",
                AlgorithmName(a), LossName(pr.loss), large,
                FindGap(a, pr.loss, kLargeEpsilon) ? " [known gap]" : "", one,
                FindGap(a, pr.loss, 1) ? " [known gap]" : "", pr.zero);
  }
}

TEST(DefaultRisk, EveryAlgorithmLogisticOnWine) {
  CheckDefaults(MakeProblem("wine2", LossKind::kLogistic, 0.01));
}

TEST(DefaultRisk, EveryAlgorithmHuberOnWine) {
  CheckDefaults(MakeProblem("wine", LossKind::kHuber, 0.01));
}

TEST(DefaultRisk, EveryAlgorithmSoftmaxOnWine) {
  CheckDefaults(MakeProblem("wine3", LossKind::kSoftmax, 0.01));
}

// ---------------------------------------------------------------------------
// The table printer (bench/default_risk.sh). Settings, space-separated:
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
  return s == "huber" ? LossKind::kHuber : s == "softmax" ? LossKind::kSoftmax : LossKind::kLogistic;
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
    std::printf("\n### %s, %s, l2 = %g (n = %lld, d = %d; zero model excess %.4g)\n\n", name.c_str(),
                LossName(pr.loss), pr.l2, (long long)pr.data.n(), pr.data.d, pr.zero);
    std::printf("| algorithm |");
    for (double e : epsilons) std::printf(" ε = %g |", e);
    std::printf(" no noise (ε = 1 plan) | s per release (ε = 1) |\n|---|");
    for (size_t i = 0; i < epsilons.size() + 2; i++) std::printf("---:|");
    std::printf("\n");
    for (Algorithm a : AllAlgorithms()) {
      if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), AlgorithmName(a)) == wanted.end())
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
      std::printf(" %s | %.2f |\n", quiet.planned ? Cell(quiet.excess, 0).c_str() : "refused", seconds);
      std::fflush(stdout);
    }
  }
}

}  // namespace
}  // namespace dperm::testing
