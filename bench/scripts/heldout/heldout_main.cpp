// dperm's side of the held-out quality benchmark (bench/scripts/heldout/heldout.sh writes
// bench/reports/heldout.md): trains many configurations in one process and prints
// the released coefficients; bench/scripts/heldout/heldout.py does the splits, the peers
// and the metrics.
//
// Inputs (written by bench/scripts/heldout/heldout.py):
//   DATA   binary: int64 n, int32 d, int32 loss (0 logistic, 1 Huber), then
//          n rows of d + 1 doubles (features of norm <= 1, then the label:
//          +-1 for logistic, the target for Huber) -- dperm's row layout;
//   SPLITS binary: int32 splits, int64 m, then splits x m int64 row indices
//          (each split's training rows, in order);
//   stdin  one job a line: id split epsilon delta l2 huber_delta method seed
//          (l2 "none": not given -- with no algorithm, DefaultL2's l2,
//          include/dperm/planning/plan_release.hpp; a number: l2 given, 0 included;
//          huber_delta 0: not given, dperm's default from target_bound = 1)
//          method "default": PlanRelease with no algorithm (dperm's default
//          rule) and SecureRng::FromSeed(seed) -- a seeded benchmark run,
//          never a private release; "newton": the non-private minimiser of
//          the same objective (damped Newton, bench/lib/reference_solvers.hpp);
//          "algo=NAME": like "default" with `algorithm => NAME`; "auto":
//          l2 => 'auto' (PlanL2Selection, plan_l2_selection.hpp, then
//          TrainL2Selection, select_l2.hpp; the job's l2 is ignored),
//          printed as "auto:L2:ALGORITHM" with the chosen l2 and its
//          candidate's algorithm; "pnewton=K" or
//          "pnewton=K:SHARE:RIDGE": K private Newton passes
//          (bench/lib/private_newton.hpp, logistic).
// Environment: DPERM_HELDOUT_INTERCEPT=fitted turns the private offset off
//          (Options::intercept_offset = false, offset.hpp);
//          DPERM_HELDOUT_THREADS=N runs full passes on N threads (1 unset).
// Output: one line a job, "id algorithm seconds w_1 ... w_dim" (the feature
// weights, then the intercept; "default" jobs print "ALGORITHM@L2", the l2
// the plan used), or "id ERROR message".
//
// Build (after make): g++ -std=c++17 -O2 -Iinclude -I/usr/include/eigen3
//   bench/scripts/heldout/heldout_main.cpp src/core/*.o -o /tmp/dperm_heldout
// Usage: dperm_heldout DATA SPLITS < jobs > results
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "../../lib/private_newton.hpp"
#include "../../lib/reference_solvers.hpp"
#include "dperm/options/options.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"
#include "dperm/release/select_l2.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"
#include "dperm/planning/plan_l2_selection.hpp"
#include "dperm/rows/row_parts.hpp"

namespace {

using dperm::LossKind;

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "heldout_main: %s\n", message.c_str());
  std::exit(2);
}

template <typename T>
T ReadOne(std::FILE* f, const char* what) {
  T v;
  if (std::fread(&v, sizeof v, 1, f) != 1) Die(std::string("short read: ") + what);
  return v;
}

struct Data {
  int64_t n = 0;
  int d = 0;
  LossKind loss = LossKind::kLogistic;
  std::vector<double> rows;  // n x (d + 1)
};

Data ReadData(const char* path) {
  std::FILE* f = std::fopen(path, "rb");
  if (f == nullptr) Die(std::string("cannot open ") + path);
  Data data;
  data.n = ReadOne<int64_t>(f, "n");
  data.d = ReadOne<int32_t>(f, "d");
  int32_t loss = ReadOne<int32_t>(f, "loss");
  if (data.n <= 0 || data.d <= 0 || (loss != 0 && loss != 1)) Die("bad data header");
  data.loss = loss == 0 ? LossKind::kLogistic : LossKind::kHuber;
  data.rows.resize(size_t(data.n) * (data.d + 1));
  if (std::fread(data.rows.data(), sizeof(double), data.rows.size(), f) != data.rows.size())
    Die("short read: rows");
  std::fclose(f);
  return data;
}

std::vector<std::vector<int64_t>> ReadSplits(const char* path, int64_t n) {
  std::FILE* f = std::fopen(path, "rb");
  if (f == nullptr) Die(std::string("cannot open ") + path);
  int32_t splits = ReadOne<int32_t>(f, "splits");
  int64_t m = ReadOne<int64_t>(f, "m");
  if (splits <= 0 || m <= 0 || m > n) Die("bad splits header");
  std::vector<std::vector<int64_t>> out(splits, std::vector<int64_t>(m));
  for (auto& s : out) {
    if (std::fread(s.data(), sizeof(int64_t), m, f) != size_t(m)) Die("short read: splits");
    for (int64_t i : s)
      if (i < 0 || i >= n) Die("split index out of range");
  }
  std::fclose(f);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) Die("usage: dperm_heldout DATA SPLITS < jobs");
  // DPERM_HELDOUT_THREADS: full passes on that many threads (as
  // dperm.training_threads; row_parts.hpp); 1 when unset.
  if (const char* t = std::getenv("DPERM_HELDOUT_THREADS")) dperm::SetRowThreadLimit(std::atoi(t));
  const Data data = ReadData(argv[1]);
  const auto splits = ReadSplits(argv[2], data.n);
  const int stride = data.d + 1;

  int current = -1;
  std::vector<double> train;  // the current split's training rows
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::istringstream in(line);
    std::string id, method;
    int split = 0;
    double epsilon = 0, delta = 0, huber_delta = 0;
    std::string l2_text;
    uint64_t seed = 0;
    if (!(in >> id >> split >> epsilon >> delta >> l2_text >> huber_delta >> method >> seed))
      Die("bad job line: " + line);
    const bool has_l2 = l2_text != "none";
    char* end = nullptr;
    const double l2 = has_l2 ? std::strtod(l2_text.c_str(), &end) : 0.0;
    if (has_l2 && (end == l2_text.c_str() || *end != '\0')) Die("bad l2 in: " + line);
    if (split < 0 || split >= int(splits.size())) Die("bad split in: " + line);
    if (split != current) {
      const auto& idx = splits[split];
      train.resize(idx.size() * stride);
      for (size_t r = 0; r < idx.size(); r++)
        std::memcpy(&train[r * stride], &data.rows[size_t(idx[r]) * stride],
                    sizeof(double) * stride);
      current = split;
    }
    dperm::Options o;
    o.epsilon = epsilon;
    o.delta = delta;
    o.l2 = l2;
    o.has_l2 = has_l2;  // "none": as a SQL release without l2 (ParseOptions)
    o.huber_delta = huber_delta;
    o.fit_intercept = true;
    o.feature_bound = 1;
    o.has_algorithm = false;  // dperm's default rule
    // As a SQL release (ParseOptions): the intercept on a private offset
    // (offset.hpp), unless DPERM_HELDOUT_INTERCEPT=fitted -- the intercept
    // as an ordinary coordinate, the "before" of the private offset.
    const char* mode = std::getenv("DPERM_HELDOUT_INTERCEPT");
    o.intercept_offset = !(mode != nullptr && std::string(mode) == "fitted");
    // Sweeps (bench/reports/heldout_huber.md): DPERM_HELDOUT_ITERATIONS sets
    // T; DPERM_HELDOUT_L2_NE sets l2 = c / (n epsilon) where l2 is not given.
    if (const char* t = std::getenv("DPERM_HELDOUT_ITERATIONS")) o.iterations = std::atoll(t);
    if (const char* c = std::getenv("DPERM_HELDOUT_L2_NE"); c != nullptr && !has_l2) {
      o.l2 = std::atof(c) / (double(train.size() / stride) * epsilon);
      o.has_l2 = true;
    }
    if (method.rfind("algo=", 0) == 0) {
      bool found = false;
      for (dperm::Algorithm a : dperm::AllAlgorithms())
        if (method.substr(5) == dperm::AlgorithmName(a)) o.algorithm = a, found = true;
      if (!found) Die("unknown algorithm in: " + line);
      o.has_algorithm = true;
      method = "default";
    }
    const int64_t m = int64_t(train.size() / stride);
    auto start = std::chrono::steady_clock::now();
    std::vector<double> w;
    std::string name;
    double l2_used = 0;
    try {
      if (method == "auto") {
        o.l2_auto = true;
        o.l2 = 0;
        const dperm::L2Selection sel = dperm::PlanL2Selection(o, data.loss, m, data.d);
        dperm::SecureRng rng = dperm::SecureRng::FromSeed(seed);
        dperm::L2SelectionResult r = dperm::TrainL2Selection(sel, train.data(), rng);
        w = std::move(r.w);
        char label[64];
        std::snprintf(label, sizeof label, "auto:%g:%s", sel.grid[size_t(r.chosen)],
                      dperm::AlgorithmName(sel.candidates[size_t(r.chosen)].algorithm));
        name = label;
      } else if (method == "default") {
        dperm::Plan plan = dperm::PlanRelease(o, data.loss, m, data.d);
        dperm::SecureRng rng = dperm::SecureRng::FromSeed(seed);
        w = dperm::TrainModel(plan, train.data(), rng);
        name = dperm::AlgorithmName(plan.algorithm);
        l2_used = plan.mu;
      } else if (method.rfind("pnewton=", 0) == 0) {
        // K private Newton passes from 0 (bench/lib/private_newton.hpp), the
        // intercept a coordinate, at the cost of dp_gd with T = K.
        if (data.loss != LossKind::kLogistic) Die("pnewton is logistic only: " + line);
        // "pnewton=K:SHARE:RIDGE" sets the gradient share and the ridge scale.
        int passes = 0;
        double share = 0.9, ridge = 1;
        if (std::sscanf(method.c_str() + 8, "%d:%lf:%lf", &passes, &share, &ridge) < 1 ||
            passes <= 0 || !(share > 0 && share < 1) || !(ridge >= 0))
          Die("bad pnewton=K[:SHARE:RIDGE] in: " + line);
        o.has_algorithm = true;
        o.algorithm = dperm::Algorithm::kDpGd;
        o.iterations = passes;
        o.intercept_offset = false;
        const dperm::Plan plan = dperm::PlanRelease(o, data.loss, m, data.d);
        Eigen::VectorXd v = dperm::testing::PrivateNewtonPasses(
            train.data(), m, data.d, Eigen::VectorXd::Zero(data.d + 1), passes,
            plan.noise_scale / plan.sensitivity, plan.sensitivity * double(m), seed, share, ridge);
        w.assign(v.data(), v.data() + v.size());
        name = "pnewton";
      } else if (method == "newton") {
        dperm::Plan plan = dperm::PlanRelease(o, data.loss, m, data.d);
        auto objective = dperm::MakeObjective(plan, train.data());
        Eigen::VectorXd v = dperm::testing::NewtonMinimiser(*objective);
        w.assign(v.data(), v.data() + v.size());
        name = "newton";
      } else {
        Die("unknown method " + method);
      }
    } catch (const std::exception& e) {
      std::printf("%s ERROR %s\n", id.c_str(), e.what());
      std::fflush(stdout);
      continue;
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (method == "default") {  // the l2 used: "ALGORITHM@L2"
      char at[32];
      std::snprintf(at, sizeof at, "@%.17g", l2_used);
      name += at;
    }
    std::printf("%s %s %.6f", id.c_str(), name.c_str(), seconds);
    for (double v : w) std::printf(" %.17g", v);
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
