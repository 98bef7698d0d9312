// Reading the reference CSV files of $DPERM_SHARED/accounting in unit tests.
#pragma once

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace dperm::testing {

using CsvRow = std::map<std::string, double>;

// The shared folder: $DPERM_SHARED, else ../shared from the repo root.
inline std::string SharedDir() {
  const char* env = std::getenv("DPERM_SHARED");
  return (env != nullptr && *env != '\0') ? env : "../shared";
}

// Why the shared folder's `sub` (accounting, data/raw) cannot be read, or
// "" when it can: DPERM_SHARED unset (the fast tier runs without the shared
// data) or naming no such directory.
inline std::string SharedMissing(const std::string& sub) {
  const char* env = std::getenv("DPERM_SHARED");
  if (env == nullptr || *env == '\0')
    return "DPERM_SHARED is not set: this test reads the shared " + sub +
           " folder (make unit sets DPERM_SHARED=../shared)";
  const std::string path = std::string(env) + "/" + sub;
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return "DPERM_SHARED=" + std::string(env) + " has no " + sub + " folder (" + path + ")";
  return "";
}

// What a failure to find a shared file tells the reader to do.
inline std::string SharedDirAdvice() {
  return "set DPERM_SHARED to the shared folder (holding accounting/ and data/raw; "
         "unset, it is ../shared from the repository root)";
}

// Splits one CSV line on commas (the reference files have no quoting).
inline std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, ',')) out.push_back(field);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

// Reads $DPERM_SHARED/accounting/<name> into rows keyed by header name
// (empty fields are NaN, "inf" is +inf). A missing file is a test failure.
inline std::vector<CsvRow> ReadAccountingCsv(const std::string& name) {
  const std::string path = SharedDir() + "/accounting/" + name;
  std::ifstream file(path);
  if (!file) ADD_FAILURE() << "cannot open reference file " << path << ": " << SharedDirAdvice();
  std::vector<CsvRow> rows;
  std::string line;
  if (!std::getline(file, line)) return rows;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const std::vector<std::string> header = SplitCsvLine(line);
  while (std::getline(file, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string> fields = SplitCsvLine(line);
    CsvRow row;
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i)
      row[header[i]] = fields[i].empty() ? std::numeric_limits<double>::quiet_NaN()
                                         : std::strtod(fields[i].c_str(), nullptr);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace dperm::testing

// Skips the calling test, naming DPERM_SHARED, when the shared folder's
// `sub` cannot be read (SharedMissing): the unit tests stand alone in a
// clone without ../shared, and every shared-data test runs where it exists.
#define DPERM_SKIP_WITHOUT_SHARED(sub)                                       \
  do {                                                                       \
    const std::string dperm_missing_ = ::dperm::testing::SharedMissing(sub); \
    if (!dperm_missing_.empty()) GTEST_SKIP() << dperm_missing_;             \
  } while (0)
