// The real datasets of $DPERM_SHARED/data/raw in tests and benches: loaded
// through bench/load_datasets.py (the benches' one preprocessing, run as a
// child process like test/sql/utility.sql does; needs the repository root as the
// working directory), in dperm's row layout. DPERM_SHARED (SharedDir(),
// reference_csv.hpp) is the one variable that locates them: a test that
// reads them starts with DPERM_SKIP_WITHOUT_SHARED("data/raw") (skipped,
// naming the variable, when it is unset or names no such folder); a missing
// dataset inside the folder is a test failure naming the path.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "reference_csv.hpp"

namespace dperm::testing {

// A dataset as bench/load_datasets.py --copy prints it: rows of d features
// (norm <= 1) and the label (+-1 for a boolean, the [0, 1] target otherwise),
// in dperm's row layout (stride d + 1).
struct Dataset {
  int d = 0;
  std::vector<double> rows;
  int64_t n() const { return d == 0 ? 0 : int64_t(rows.size() / (d + 1)); }
};

// The folder of the raw dataset files.
inline std::string RealDataDir() { return SharedDir() + "/data/raw"; }

// Dataset `name` (a name load_datasets.py knows); an empty Dataset and a
// test failure when it cannot be loaded.
inline Dataset LoadCopy(const std::string& name) {
  const std::string dir = RealDataDir();
  Dataset out;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    ADD_FAILURE() << "real dataset directory " << dir << " not found: " << SharedDirAdvice();
    return out;
  }
  const std::string cmd =
      "python3 bench/load_datasets.py --copy " + name + " --data-dir '" + dir + "'";
  std::FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run " << cmd;
    return out;
  }
  std::string line;
  int c;
  while (true) {
    line.clear();
    while ((c = std::fgetc(pipe)) != EOF && c != '\n') line.push_back(char(c));
    if (line.empty()) {
      if (c == EOF) break;
      continue;
    }
    // "{f1,f2,...}\tlabel"
    size_t close = line.find('}');
    std::vector<double> row;
    const char* p = line.c_str() + 1;
    const char* end = line.c_str() + close;
    while (p < end) {
      char* next = nullptr;
      row.push_back(std::strtod(p, &next));
      p = next + 1;  // skip the comma
    }
    std::string label = line.substr(close + 2);
    if (out.d == 0) out.d = int(row.size());
    if (int(row.size()) != out.d) {
      ADD_FAILURE() << "ragged row in " << name;
      break;
    }
    out.rows.insert(out.rows.end(), row.begin(), row.end());
    out.rows.push_back(label == "t"   ? 1.0
                       : label == "f" ? -1.0
                                      : std::strtod(label.c_str(), nullptr));
    if (c == EOF) break;
  }
  EXPECT_EQ(pclose(pipe), 0) << cmd;
  if (out.n() == 0)
    ADD_FAILURE() << "no rows of " << name << " read from " << dir << ": " << SharedDirAdvice();
  return out;
}

// WINE as a binary problem for dp_logreg: quality (3..9, stored as
// (q - 3)/6) at least 6 (label +1, 63.3 %) against below.
inline Dataset WineBinary(Dataset wine) {
  const int stride = wine.d + 1;
  for (int64_t i = 0; i < wine.n(); i++) {
    double& y = wine.rows[size_t(i) * stride + wine.d];
    y = std::lround(3 + 6 * y) >= 6 ? 1.0 : -1.0;
  }
  return wine;
}

// WINE as a three-class problem for dp_softmax: quality (3..9, stored as
// (q - 3)/6) binned to 0 (q <= 5), 1 (q = 6), 2 (q >= 7), shares 36.7 %,
// 43.7 %, 19.6 %. (The shared data have no small multi-class set; the
// Fashion-MNIST package is too large for a unit test.)
inline Dataset WineThreeClasses(Dataset wine) {
  const int stride = wine.d + 1;
  for (int64_t i = 0; i < wine.n(); i++) {
    double& y = wine.rows[size_t(i) * stride + wine.d];
    const long q = std::lround(3 + 6 * y);
    y = q <= 5 ? 0 : q == 6 ? 1 : 2;
  }
  return wine;
}

}  // namespace dperm::testing
