// Full privacy audit of every algorithm (bench/audit.sh writes bench/reports/audit.md).
//
// Audited with bench/lib/audit_harness.hpp, each twice: as released
// (epsilon_lb must stay <= epsilon) and with the noise divided by --divisor
// (a broken mechanism the audit must flag: epsilon_lb > epsilon):
//  * every algorithm x every loss it supports (AlgorithmCase), delta > 0,
//    plus output_gd and bolton at delta = 0 (per-coordinate discrete Laplace noise)
//    and objective at delta = 0 (the Gamma-norm b);
//  * output_gd's variants: loss (logistic, Huber) x l2 (0.1, 0) x accountant
//    (tight, paper) x noise (Gaussian, Laplace) (MakeCase).
// A broken case not flagged at --runs is audited once more with --rerun
// times the runs and fresh noise; both bounds are shown. Prints markdown;
// exits 1 when an honest case exceeds its epsilon or a broken case stays
// unflagged.
//
// With --unit K (K > 1) it audits privacy units instead (UnitCases): one
// case per algorithm (Huber; objective perturbation: logistic) whose
// neighbours differ in all K slots of one unit; honest = planned with
// max_rows_per_unit = K (epsilon / K per slot, as dperm.train plans a unit
// relation), broken = the same release planned per row at epsilon (the unit
// ignored). --runs-for ALGO=N,ALGO=N sets the runs of slow algorithms.
//
// Build (after make): g++ -std=c++17 -O2 -Iinclude -I/usr/include/eigen3
//   bench/audit/audit_main.cpp src/core/*/*.o -o /tmp/dperm_audit
// Usage: dperm_audit [--runs N] [--alpha A] [--epsilon E] [--delta D]
//   [--divisor K] [--rerun F] [--seed S] [--threads J] [--only A,B]
//   [--unit K] [--runs-for A=N,B=N]
// --only keeps the cases whose algorithm (the first word of the case's
// name) is one of the comma-separated names.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../lib/audit_harness.hpp"
#include "audit_settings.hpp"

namespace dperm::audit {
namespace {

// The honest cases, in report order: every algorithm x loss, output
// and objective perturbation at delta = 0, then output_gd's 16 variants.
std::vector<Case> HonestCases(const Settings& s) {
  std::vector<Case> cases;
  for (Algorithm a : AllAlgorithms())
    for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber, LossKind::kSoftmax})
      if (Supports(a, loss)) cases.push_back(AlgorithmCase(a, loss, s.epsilon, s.delta));
  for (Algorithm a : {Algorithm::kOutputGd, Algorithm::kBolton, Algorithm::kObjective})
    for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber})
      if (Supports(a, loss)) cases.push_back(AlgorithmCase(a, loss, s.epsilon, 0.0));
  for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber})
    for (double l2 : {0.1, 0.0})
      for (Accountant acc : {Accountant::kTight, Accountant::kPaper})
        for (double delta : {s.delta, 0.0}) {
          cases.push_back(MakeCase(loss, l2, acc, s.epsilon, delta));
          cases.back().name = "output_gd " + cases.back().name;
        }
  if (!s.only.empty()) {
    std::vector<Case> kept;
    for (const Case& c : cases)
      if (s.only.find("," + c.name.substr(0, c.name.find(' ')) + ",") != std::string::npos)
        kept.push_back(c);
    cases.swap(kept);
  }
  return cases;
}

// The algorithm of a case: the first word of its name.
std::string AlgorithmOf(const Case& c) { return c.name.substr(0, c.name.find(' ')); }

// The runs per side of a case: --runs-for's entry for its algorithm, else --runs.
int64_t RunsOf(const Settings& s, const Case& c) {
  const std::string key = "," + AlgorithmOf(c) + "=";
  const size_t at = s.runs_for.find(key);
  return at == std::string::npos ? s.runs : std::atoll(s.runs_for.c_str() + at + key.size());
}

// The unit-level cases: one per algorithm (Huber, whose canary reaches the
// sensitivity; objective perturbation: logistic), neighbours differing in
// s.unit slots, planned with max_rows_per_unit = s.unit. UnitBroken is the
// same case planned per row.
std::vector<Case> UnitCases(const Settings& s) {
  std::vector<Case> cases;
  for (Algorithm a : AllAlgorithms()) {
    LossKind loss = Supports(a, LossKind::kHuber) ? LossKind::kHuber : LossKind::kLogistic;
    Case c = AlgorithmCase(a, loss, s.epsilon, s.delta);
    if (a == Algorithm::kRrpsgd) c.n = int(s.unit);  // every row a slot of the unit
    else if (c.conditioned_base > 0) c.n = c.conditioned_base + int(s.unit);
    if (c.conditioned_base == 0 && c.n % s.unit != 0) {
      std::fprintf(stderr, "--unit %lld does not divide n = %d of %s\n",
                   static_cast<long long>(s.unit), c.n, c.name.c_str());
      std::exit(2);
    }
    c.unit_rows = s.unit;
    c.options.max_rows_per_unit = s.unit;
    if (s.only.empty() || s.only.find("," + AlgorithmOf(c) + ",") != std::string::npos)
      cases.push_back(c);
  }
  return cases;
}

// A unit case planned per row at epsilon: the release that ignores the unit.
Case UnitBroken(Case c) {
  c.options.max_rows_per_unit = 0;
  c.name += ", unit ignored (broken)";
  return c;
}

// Audits every unit case (honest and broken, no rerun) on `threads` workers.
std::vector<Row> AuditUnits(const Settings& s, const std::vector<Case>& cases) {
  std::vector<Row> rows(cases.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < cases.size(); i = next++) {
      Row& row = rows[i];
      const int64_t runs = RunsOf(s, cases[i]);
      row.honest = RunAudit(cases[i], runs, s.alpha, s.seed + 4 * i);
      row.broken = RunAudit(UnitBroken(cases[i]), runs, s.alpha, s.seed + 4 * i + 1);
      std::fprintf(stderr, "%s: %.3f / %.3f (%.0f s)\n", cases[i].name.c_str(),
                   row.honest.test.epsilon_lb, row.broken.test.epsilon_lb,
                   row.honest.seconds + row.broken.seconds);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < s.threads; t++) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return rows;
}

// Audits every case on `threads` workers (one case per worker; the runs of
// a case stay on it); case i uses seeds seed + 4i .. + 4i + 2.
std::vector<Row> AuditAll(const Settings& s, const std::vector<Case>& cases) {
  std::vector<Row> rows(cases.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < cases.size(); i = next++) {
      Row& row = rows[i];
      Case broken = Broken(cases[i], s.divisor);
      row.honest = RunAudit(cases[i], s.runs, s.alpha, s.seed + 4 * i);
      row.broken = RunAudit(broken, s.runs, s.alpha, s.seed + 4 * i + 1);
      if (!(row.broken.test.epsilon_lb > s.epsilon)) {
        row.reran = true;
        row.rerun = RunAudit(broken, s.rerun * s.runs, s.alpha, s.seed + 4 * i + 2);
      }
      std::fprintf(stderr, "%s: %.3f / %.3f (%.0f s)\n", cases[i].name.c_str(),
                   row.honest.test.epsilon_lb, (row.reran ? row.rerun : row.broken).test.epsilon_lb,
                   row.honest.seconds + row.broken.seconds + (row.reran ? row.rerun.seconds : 0));
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < s.threads; t++) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return rows;
}

// "%.3f" of a number.
std::string F3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

// A test as "{s > 1.234}: 56 vs 7 of 50000".
std::string TestText(const Test& t) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "{s %s %.4g}: %lld vs %lld of %lld", t.upper_tail ? ">" : "&le;",
                t.threshold, static_cast<long long>(t.k_num), static_cast<long long>(t.k_den),
                static_cast<long long>(t.n));
  return buf;
}

// "yes" or a bold "**NO**".
const char* YesNo(bool ok) { return ok ? "yes" : "**NO**"; }

// Whether a row's broken release was flagged (first audit or rerun).
bool Flagged(const Settings& s, const Row& r) {
  return r.broken.test.epsilon_lb > s.epsilon || (r.reran && r.rerun.test.epsilon_lb > s.epsilon);
}

// The noise of a case, as text: "Gaussian", "Laplace", "objective".
std::string NoiseText(const Plan& p) {
  if (p.mechanism_fields.Get(dperm::kObjectiveNoise) > 0)
    return p.options.delta > 0 ? "objective + Gaussian" : "objective (Gamma-norm b) + Laplace";
  return p.noise == NoiseKind::kGaussian ? "Gaussian" : "Laplace";
}

// --table: one case per algorithm with its strongest canary (Huber where
// the algorithm takes it, whose gradient gap is the full 2L; logistic for
// objective, objective_approx, ssp and dp_newton), at row level or, with
// --unit K, at unit level (neighbours differ in all K slots of one unit,
// planned with max_rows_per_unit = K: epsilon / K per slot). Each case is
// audited honest, with noise / 2 and with noise / 10.
const double kTableDivisors[] = {2, 10};

std::vector<Case> TableCases(const Settings& s) {
  std::vector<Case> cases;
  for (Algorithm a : AllAlgorithms()) {
    LossKind loss = Supports(a, LossKind::kHuber) ? LossKind::kHuber : LossKind::kLogistic;
    Case c = AlgorithmCase(a, loss, s.epsilon, s.delta);
    // --white-box: the mechanisms no real pair of rows drives to their
    // calibrated sensitivity get WhiteBoxNeighbours (audit_whitebox.hpp):
    // an oracle canary and the noisy releases read through Plan::audit_seam
    // (objective perturbation: the linear canary, and w itself).
    const bool white =
        s.white_box && (a == Algorithm::kDpSvrg || a == Algorithm::kDpSvrgPp ||
                        a == Algorithm::kSsp || a == Algorithm::kDpNewton ||
                        a == Algorithm::kObjective || a == Algorithm::kObjectiveApprox);
    if (white) c = WhiteBoxCase(c);
    if (s.unit > 1) {
      c.unit_rows = s.unit;
      c.options.max_rows_per_unit = s.unit;
      // rrpsgd: every row is a canary slot (its one step draws one of them);
      // the conditioned base keeps its size; the others keep n.
      if (a == Algorithm::kRrpsgd) c.n = int(s.unit);
      else if (c.conditioned_base > 0) c.n = c.conditioned_base + int(s.unit);
      c.name += " (unit of " + std::to_string(s.unit) + ")";
    }
    if (s.only.empty() || s.only.find("," + AlgorithmOf(c) + ",") != std::string::npos)
      cases.push_back(c);
  }
  return cases;
}

// One line of the table: the honest audit and one per divisor.
struct TableRow {
  Result honest;
  std::vector<Result> broken;
};

std::vector<TableRow> AuditTable(const Settings& s, const std::vector<Case>& cases) {
  std::vector<TableRow> rows(cases.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < cases.size(); i = next++) {
      TableRow& row = rows[i];
      const int64_t runs = RunsOf(s, cases[i]);
      // Thresholds from ModelTest (all runs evaluate; see RunAudit).
      row.honest = RunAudit(cases[i], runs, s.alpha, s.seed + 4 * i, 1, 0, true);
      uint64_t j = 1;
      for (double divisor : kTableDivisors)
        row.broken.push_back(
            RunAudit(Broken(cases[i], divisor), runs, s.alpha, s.seed + 4 * i + j++, 1, 0, true));
      std::fprintf(stderr, "%s: %.3f / %.3f / %.3f (pair epsilon %.3f / %.3f / %.3f) (%.0f s)\n",
                   cases[i].name.c_str(), row.honest.test.epsilon_lb, row.broken[0].test.epsilon_lb,
                   row.broken[1].test.epsilon_lb, row.honest.pair_epsilon,
                   row.broken[0].pair_epsilon, row.broken[1].pair_epsilon,
                   row.honest.seconds + row.broken[0].seconds + row.broken[1].seconds);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < s.threads; t++) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return rows;
}

// Prints the table report; returns the number of failed checks (an honest
// epsilon_lb above epsilon, or a broken release not flagged).
int TableReport(const Settings& s, const std::vector<TableRow>& rows, double seconds) {
  const int n = int(rows.size());
  int honest_ok = 0, flagged[2] = {0, 0};
  for (const TableRow& r : rows) {
    honest_ok += r.honest.test.epsilon_lb <= s.epsilon;
    for (int j = 0; j < 2; j++) flagged[j] += r.broken[j].test.epsilon_lb > s.epsilon;
  }
  std::printf(
      "* Settings: %s; d = 2 features, feature_bound 1, claimed (epsilon, delta) = (%g, %g)%s; "
      "options per algorithm as in `AlgorithmCase` (bench/lib/audit_harness.hpp), strongest "
      "canary (Huber where supported, else logistic); runs per side %lld%s%s, pilot a quarter "
      "of that (at least 100); confidence 1 - alpha = %g per audit; seed %llu (`--seed %llu` "
      "replays this run); %d threads; audits took %.0f s\n\n",
      s.unit > 1 ? ("unit level, k = " + std::to_string(s.unit) + " slots per unit").c_str()
                 : "row level",
      s.epsilon, s.delta, s.unit > 1 ? " per unit" : "", static_cast<long long>(s.runs),
      s.runs_for.empty() ? "" : ", except ", s.runs_for.empty() ? "" : s.runs_for.c_str(),
      1 - s.alpha, static_cast<unsigned long long>(s.seed), static_cast<unsigned long long>(s.seed),
      s.threads, seconds);
  std::printf(
      "**Honest: %d of %d audits have ε_lb ≤ ε. Noise / 2: %d of %d flagged. Noise / 10: %d "
      "of %d flagged** (flagged: ε_lb > ε).\n\n",
      honest_ok, n, flagged[0], n, flagged[1], n);
  std::printf(
      "| algorithm, loss | noise | T | Δ | claimed ε | ε_lb honest | ≤ ε | ε_lb noise/2 | flagged "
      "| ε_lb noise/10 | flagged | runs per side | seconds |\n"
      "|:---|:---|---:|---:|---:|---:|:---|---:|:---|---:|:---|---:|---:|\n");
  for (const TableRow& r : rows) {
    const Result& h = r.honest;
    std::printf(
        "| %s | %s | %lld | %.4g | %g | **%s** | %s | **%s** | %s | **%s** | %s | %lld | %.1f |\n",
        h.audit_case.name.c_str(), NoiseText(h.plan).c_str(),
        static_cast<long long>(h.plan.iterations), h.plan.sensitivity, s.epsilon,
        F3(h.test.epsilon_lb).c_str(), YesNo(h.test.epsilon_lb <= s.epsilon),
        F3(r.broken[0].test.epsilon_lb).c_str(), YesNo(r.broken[0].test.epsilon_lb > s.epsilon),
        F3(r.broken[1].test.epsilon_lb).c_str(), YesNo(r.broken[1].test.epsilon_lb > s.epsilon),
        static_cast<long long>(RunsOf(s, h.audit_case)),
        h.seconds + r.broken[0].seconds + r.broken[1].seconds);
  }
  std::printf(
      "\n| algorithm, loss | pair | base | row(s) in D | row(s) in D' | honest test | noise/2 test "
      "| noise/10 test |\n|:---|:---|:---|:---|:---|:---|:---|:---|\n");
  for (const TableRow& r : rows) {
    const Result& h = r.honest;
    char white[160];
    snprintf(white, sizeof white, "white box (exact pair ε %.3f / %.3f / %.3f)", h.pair_epsilon,
             r.broken[0].pair_epsilon, r.broken[1].pair_epsilon);
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", h.audit_case.name.c_str(),
                h.pair.seam_d      ? white
                : h.pilot_runs > 0 ? "canary"
                                   : "search",
                h.pair.base.c_str(), h.pair.row_d.c_str(), h.pair.row_dp.c_str(),
                TestText(h.test).c_str(), TestText(r.broken[0].test).c_str(),
                TestText(r.broken[1].test).c_str());
  }
  return (n - honest_ok) + (n - flagged[0]) + (n - flagged[1]);
}

// Prints the unit-level report; returns the number of failed checks.
int UnitReport(const Settings& s, const std::vector<Row>& rows, double seconds) {
  int honest_ok = 0, flagged = 0;
  for (const Row& r : rows) {
    honest_ok += r.honest.test.epsilon_lb <= s.epsilon;
    flagged += r.broken.test.epsilon_lb > s.epsilon;
  }
  const int n = int(rows.size());
  std::printf(
      "* Settings: privacy unit of k = %lld slots; d = 2 features, feature_bound 1, claimed "
      "(epsilon, delta) = (%g, %g) per unit; options per algorithm as in `AlgorithmCase`; "
      "confidence 1 - alpha = %g per audit; seed %llu (`--seed %llu` replays this run); "
      "%d threads; audits took %.0f s\n\n",
      static_cast<long long>(s.unit), s.epsilon, s.delta, 1 - s.alpha,
      static_cast<unsigned long long>(s.seed), static_cast<unsigned long long>(s.seed), s.threads,
      seconds);
  std::printf(
      "**Honest (max_rows_per_unit = %lld): %d of %d audits have epsilon_lb <= epsilon. "
      "Broken (unit ignored, planned per row at epsilon): %d of %d flagged "
      "(epsilon_lb > epsilon).**\n\n",
      static_cast<long long>(s.unit), honest_ok, n, flagged, n);
  std::printf(
      "| algorithm, loss | k | claimed ε | noise | T honest / broken | shift honest / broken "
      "| pair ε honest / broken | ε_lb honest | ≤ ε | ε_lb broken | flagged | runs per side "
      "| seconds |\n|:---|---:|---:|:---|:---|:---|:---|---:|:---|---:|:---|---:|---:|\n");
  for (const Row& r : rows) {
    const Result& h = r.honest;
    const Result& b = r.broken;
    auto pe = [](double v) { return std::isnan(v) ? std::string("–") : F3(v); };
    std::printf(
        "| %s | %lld | %g | %s | %lld / %lld | %.4g / %.4g | %s / %s | **%s** | %s | **%s** | "
        "%s | %lld | %.1f |\n",
        h.audit_case.name.c_str(), static_cast<long long>(s.unit), s.epsilon,
        NoiseText(h.plan).c_str(), static_cast<long long>(h.plan.iterations),
        static_cast<long long>(b.plan.iterations), h.pair.shift, b.pair.shift,
        pe(h.pair_epsilon).c_str(), pe(b.pair_epsilon).c_str(), F3(h.test.epsilon_lb).c_str(),
        YesNo(h.test.epsilon_lb <= s.epsilon), F3(b.test.epsilon_lb).c_str(),
        YesNo(b.test.epsilon_lb > s.epsilon), static_cast<long long>(RunsOf(s, h.audit_case)),
        h.seconds + b.seconds);
  }
  std::printf(
      "\n| algorithm, loss | base | rows in D | rows in D' | honest test | broken test |\n"
      "|:---|:---|:---|:---|:---|:---|\n");
  for (const Row& r : rows)
    std::printf("| %s | %s | %s | %s | %s | %s |\n", r.honest.audit_case.name.c_str(),
                r.honest.pair.base.c_str(), r.honest.pair.row_d.c_str(),
                r.honest.pair.row_dp.c_str(), TestText(r.honest.test).c_str(),
                TestText(r.broken.test).c_str());
  return (n - honest_ok) + (n - flagged);
}

// Prints the markdown report; returns the number of failed checks.
int Report(const Settings& s, const std::vector<Row>& rows, double seconds) {
  int honest_ok = 0, flagged = 0, flagged_rerun = 0;
  double worst_ratio = 0;
  for (const Row& r : rows) {
    honest_ok += r.honest.test.epsilon_lb <= s.epsilon;
    worst_ratio = std::max(worst_ratio, r.honest.test.epsilon_lb / s.epsilon);
    flagged += Flagged(s, r);
    flagged_rerun += Flagged(s, r) && r.reran;
  }
  const int n = int(rows.size());
  std::printf(
      "* Settings: d = 2 features, feature_bound 1, epsilon = %g, delta = %g (Gaussian) or 0 "
      "(Laplace), options per algorithm as in `AlgorithmCase` "
      "(bench/lib/audit_harness.hpp); %lld releases per side per audit, plus a pilot of a "
      "quarter of that per side for the canary pairs (%lldx the runs for a rerun); "
      "confidence 1 - alpha = %g per audit; broken = noise scale / %g; seed %llu "
      "(`--seed %llu` replays this run); %d threads; audits took %.0f s\n\n",
      s.epsilon, s.delta, static_cast<long long>(s.runs), static_cast<long long>(s.rerun),
      1 - s.alpha, s.divisor, static_cast<unsigned long long>(s.seed),
      static_cast<unsigned long long>(s.seed), s.threads, seconds);
  std::printf(
      "**Honest: %d of %d audits have epsilon_lb <= epsilon** (largest epsilon_lb / "
      "epsilon = %.3f). **Broken (noise / %g): %d of %d flagged** (epsilon_lb > "
      "epsilon)%s.\n\n",
      honest_ok, n, worst_ratio, s.divisor, flagged, n,
      flagged_rerun ? (", " + std::to_string(flagged_rerun) + " of them only by the rerun").c_str()
                    : "");
  std::printf(
      "## Results\n\n"
      "*pair*: search = worst pair of the extreme-row search, exact means; canary = the "
      "designed canary, pilot means (see Method). *Δ*: the plan's sensitivity (output "
      "perturbation: of the output; noisy methods: of one step's noised quantity). "
      "*shift*: ‖a − b‖, the distance of the two sides' mean outputs. *pair ε*: output "
      "perturbation only, the exact ε of the noise on that pair at the case's δ, the most "
      "any audit of this pair can show. *ε_lb*: the audit's lower bound "
      "(Clopper–Pearson, %g%%). *runs*: releases per side (half choose the test, half "
      "evaluate it).\n\n",
      100 * (1 - s.alpha));
  std::printf(
      "| algorithm, loss | noise | pair | T | Δ | shift | claimed ε | pair ε | honest ε_lb "
      "| ε_lb / ε | ≤ ε | runs | broken ε_lb | flagged | seconds |\n"
      "|:---|:---|:---|---:|---:|---:|---:|---:|---:|---:|:---|---:|---:|:---|---:|\n");
  for (const Row& r : rows) {
    const Result& h = r.honest;
    std::string blb = F3(r.broken.test.epsilon_lb);
    if (r.reran)
      blb += " → " + F3(r.rerun.test.epsilon_lb) + " (" + std::to_string(s.rerun) + "x runs)";
    std::string pair_eps = std::isnan(h.pair_epsilon) ? "–" : F3(h.pair_epsilon);
    std::printf(
        "| %s | %s | %s | %lld | %.4g | %.4g | %g | %s | **%s** | %.3f | %s | %lld | **%s** "
        "| %s | %.1f |\n",
        h.audit_case.name.c_str(), NoiseText(h.plan).c_str(),
        h.pilot_runs > 0 ? "canary" : "search", static_cast<long long>(h.plan.iterations),
        h.plan.sensitivity, h.pair.shift, h.audit_case.options.epsilon, pair_eps.c_str(),
        F3(h.test.epsilon_lb).c_str(), h.test.epsilon_lb / h.audit_case.options.epsilon,
        YesNo(h.test.epsilon_lb <= s.epsilon), static_cast<long long>(s.runs), blb.c_str(),
        YesNo(Flagged(s, r)), h.seconds + r.broken.seconds + (r.reran ? r.rerun.seconds : 0));
  }
  std::printf(
      "\n## Neighbours and tests\n\n"
      "D = base + row in D, D' = base + row in D' (rows as (x1, x2; label)). *s*: the "
      "statistic of a release (⟨w − a, u⟩ for Gaussian output noise, ||w − a|| − "
      "||w − b|| for the Laplace vector, ||w − a||₁ − ||w − b||₁ for the per-coordinate (discrete) Laplace of output_gd and bolton, ⟨w − a, S⁻¹(b − a)⟩ with pilot means and "
      "covariance for the canary pairs). A test reads {event}: times under the dataset it "
      "favours vs times under the other, of the evaluation runs per side. *calibration "
      "ε_lb*: the same test's bound on the first half, where it was the best of ~3600 "
      "candidates: biased upwards and not a valid bound (it can even exceed ε for an "
      "honest release), which is why the reported bound comes from runs the choice never "
      "saw.\n\n"
      "| algorithm, loss | base | row in D | row in D' | honest test | calibration ε_lb | "
      "broken test |\n|:---|:---|:---|:---|:---|---:|:---|\n");
  for (const Row& r : rows) {
    const Result& h = r.honest;
    std::printf("| %s | %s | %s | %s | %s | %s | %s |\n", h.audit_case.name.c_str(),
                h.pair.base.c_str(), h.pair.row_d.c_str(), h.pair.row_dp.c_str(),
                TestText(h.test).c_str(), F3(h.calibration.epsilon_lb).c_str(),
                TestText((r.reran ? r.rerun : r.broken).test).c_str());
  }
  return (n - honest_ok) + (n - flagged);
}

}  // namespace
}  // namespace dperm::audit

int main(int argc, char** argv) {
  using namespace dperm::audit;
  Settings s = ParseArgs(argc, argv);
  auto start = std::chrono::steady_clock::now();
  if (s.table) {
    std::vector<TableRow> rows = AuditTable(s, TableCases(s));
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return TableReport(s, rows, seconds) == 0 ? 0 : 1;
  }
  if (s.unit > 1) {
    std::vector<Row> rows = AuditUnits(s, UnitCases(s));
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return UnitReport(s, rows, seconds) == 0 ? 0 : 1;
  }
  std::vector<Row> rows = AuditAll(s, HonestCases(s));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Report(s, rows, seconds) == 0 ? 0 : 1;
}
