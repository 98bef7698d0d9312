// audit_main's command line (bench/audit/audit_main.cpp): its settings and
// the rows of its report.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include "../lib/audit_harness.hpp"

namespace dperm::audit {

struct Settings {
  int64_t runs = 100000;  // releases per side (half choose the test, half evaluate it)
  double alpha = 0.05;    // per audit: P(epsilon_lb > true epsilon) <= alpha
  double epsilon = 1, delta = 1e-5, divisor = 10;
  std::string only;   // ",a,b," or empty: every algorithm
  int64_t rerun = 4;  // a broken case not flagged is audited again with rerun x runs
  uint64_t seed = 0;
  bool has_seed = false;
  int threads = 0;         // 0: all cores
  int64_t unit = 0;        // > 1: audit privacy units of this many slots (UnitCases)
  std::string runs_for;    // ",algo=N,...,": per-algorithm runs
  bool table = false;      // --table 1: the 13-algorithm table, honest / noise / 2 / noise / 10
  bool white_box = false;  // --white-box 1: white-box canaries where the harness has an oracle
};

// One line of the report: an honest audit, the broken one, and its rerun.
struct Row {
  Result honest, broken, rerun;
  bool reran = false;
};

// Parses --key value pairs into settings; exits on a bad flag.
inline Settings ParseArgs(int argc, char** argv) {
  Settings s;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    const char* v = argv[i + 1];
    if (k == "--runs") s.runs = std::atoll(v);
    else if (k == "--alpha") s.alpha = std::atof(v);
    else if (k == "--epsilon") s.epsilon = std::atof(v);
    else if (k == "--delta") s.delta = std::atof(v);
    else if (k == "--divisor") s.divisor = std::atof(v);
    else if (k == "--rerun") s.rerun = std::atoll(v);
    else if (k == "--seed") s.seed = std::strtoull(v, nullptr, 10), s.has_seed = true;
    else if (k == "--threads") s.threads = std::atoi(v);
    else if (k == "--only") s.only = "," + std::string(v) + ",";
    else if (k == "--unit") s.unit = std::atoll(v);
    else if (k == "--runs-for") s.runs_for = "," + std::string(v) + ",";
    else if (k == "--table") s.table = std::atoi(v) != 0;
    else if (k == "--white-box") s.white_box = std::atoi(v) != 0;
    else {
      std::fprintf(stderr, "unknown flag %s\n", k.c_str());
      std::exit(2);
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "flag %s needs a value\n", argv[argc - 1]);
    std::exit(2);
  }
  if (!s.has_seed) {
    std::random_device rd;  // a fresh seed per benchmark run, printed for replay
    s.seed = (uint64_t(rd()) << 32 | rd()) >> 12;  // room for per-case offsets
  }
  if (s.threads <= 0) s.threads = std::max(1u, std::thread::hardware_concurrency());
  return s;
}

}  // namespace dperm::audit
