// Running time of objective and objective_approx on neighbouring tables:
// each release is timed many times, the two
// neighbours interleaved (S, S', S, S', ...) with the same seeds, and the
// ratio of the median times is printed. With a data-independent schedule
// it is 1 up to floating-point timing and machine noise.
//
// Build and run (from the repository root, after `make`):
//   g++ -std=c++17 -O2 -Iinclude -I/usr/include/eigen3 bench/scripts/time/objective_timing.cpp
//       src/core/*.o -o /tmp/objective_timing
//   python3 bench/load_datasets.py --copy bank > /tmp/bank.copy
//   /tmp/objective_timing /tmp/bank.copy 41      # BANK and its neighbour, 41 runs each
//   /tmp/objective_timing - 101                  # the crafted pair only
//
// The pairs:
//  * crafted0 (n = 200, d = 5, noise off so that only the data matter): S
//    holds pairs (x, +1), (x, -1), so grad F(0) = 0 and w* = 0; S' flips
//    one label, so w* is far from 0. A solver that stops at a gradient test
//    does no work on S and several Newton steps on S'. With a fixed
//    schedule every iterate on S is exactly 0, so every exp() in the loss
//    takes glibc's fast path for a zero argument: the floating-point
//    channel at its extreme (it needs b = 0, which a release never has).
//  * crafted: the same pair with the release's noise (epsilon = 1).
//  * BANK (n = 45211, d = 42, epsilon = 1, delta = 1e-5, the real noise):
//    S' replaces row 0 by the unit vector e_1 with the opposite label.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "dperm/algorithms/objective_perturbation.hpp"
#include "dperm/plan/plan.hpp"
#include "dperm/noise/random.hpp"
#include "dperm/rows/rows.hpp"
#include "dperm/planning/plan_release.hpp"
#include "dperm/release/train_model.hpp"

namespace {

struct Table {
  int n = 0, d = 0;
  std::vector<double> rows;  // stride d + 1: features, then the +-1 label
};

// COPY text of bench/load_datasets.py --copy: "{f1,f2,...}\tt|f".
Table ReadCopy(const std::string& path) {
  std::ifstream in(path);
  Table t;
  std::string line;
  while (std::getline(in, line)) {
    size_t open = line.find('{'), close = line.find('}');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::stringstream fields(line.substr(open + 1, close - open - 1));
    std::vector<double> x;
    std::string v;
    while (std::getline(fields, v, ',')) x.push_back(std::stod(v));
    if (t.d == 0) t.d = int(x.size());
    std::vector<double> clipped(x.size());
    dperm::ClipRow(x.data(), t.d, 1.0, clipped.data());
    t.rows.insert(t.rows.end(), clipped.begin(), clipped.end());
    t.rows.push_back(line.substr(close + 1).find('t') != std::string::npos ? 1.0 : -1.0);
    t.n++;
  }
  return t;
}

Table Crafted(int pairs, int d, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0, 1);
  Table t;
  t.n = 2 * pairs;
  t.d = d;
  std::vector<double> raw(d), x(d);
  for (int i = 0; i < pairs; i++) {
    for (double& v : raw) v = normal(gen);
    dperm::ClipRow(raw.data(), d, 1.0, x.data());
    for (double label : {1.0, -1.0}) {
      t.rows.insert(t.rows.end(), x.begin(), x.end());
      t.rows.push_back(label);
    }
  }
  return t;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double Ms(const dperm::Plan& p, const Table& t, uint64_t seed) {
  dperm::SecureRng rng = dperm::SecureRng::FromSeed(seed);
  auto start = std::chrono::steady_clock::now();
  std::vector<double> w = dperm::TrainModel(p, t.rows.data(), rng);
  auto stop = std::chrono::steady_clock::now();
  if (!std::isfinite(w[0])) std::cerr << "non-finite model\n";
  return std::chrono::duration<double, std::milli>(stop - start).count();
}

void Compare(const char* label, dperm::Algorithm a, const Table& s, const Table& s2, double epsilon,
             bool noise_off, int reps) {
  dperm::Options o;
  o.epsilon = epsilon;
  o.delta = 1e-5;
  o.algorithm = a;
  dperm::Plan p = dperm::PlanRelease(o, dperm::LossKind::kLogistic, s.n, s.d);
  if (noise_off) {
    p.mechanism_fields.Set(dperm::kObjectiveNoise, 0);
    if (a == dperm::Algorithm::kObjective) p.noise_scale = 0;
  }
  std::vector<double> t1, t2;
  Ms(p, s, 1);  // warm-up
  Ms(p, s2, 1);
  for (int r = 0; r < reps; r++) {
    t1.push_back(Ms(p, s, 1000 + r));
    t2.push_back(Ms(p, s2, 1000 + r));
  }
  double m1 = Median(t1), m2 = Median(t2);
  std::printf(
      "%-8s %-16s n=%-6d planned evaluations %-10lld median ms S %9.3f  S' %9.3f  ratio S'/S %.3f\n",
      label, dperm::AlgorithmName(a), s.n, static_cast<long long>(p.gradient_evaluations), m1, m2,
      m2 / m1);
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : "-";
  int reps = argc > 2 ? std::atoi(argv[2]) : 41;
  Table s = Crafted(100, 5, 3);
  Table s2 = s;
  s2.rows[size_t(s.n - 1) * (s.d + 1) + s.d] = 1.0;  // flip the last label
  for (dperm::Algorithm a : {dperm::Algorithm::kObjective, dperm::Algorithm::kObjectiveApprox}) {
    Compare("crafted0", a, s, s2, 1.0, true, reps);
    Compare("crafted", a, s, s2, 1.0, false, reps);
  }
  if (path == "-") return 0;
  Table bank = ReadCopy(path);
  Table bank2 = bank;
  for (int j = 0; j < bank.d; j++) bank2.rows[j] = j == 0 ? 1.0 : 0.0;
  bank2.rows[bank.d] = -bank.rows[bank.d];
  for (dperm::Algorithm a : {dperm::Algorithm::kObjective, dperm::Algorithm::kObjectiveApprox})
    Compare("bank", a, bank, bank2, 1.0, false, reps);
  return 0;
}
