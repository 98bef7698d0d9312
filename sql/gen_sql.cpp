// sql/gen_sql SOURCE: the build's SQL preprocessor (Makefile, DATA_built).
// Prints one script's source (sql/dperm.sql, sql/upgrade/*.sql.in) with what
// the core's tables generate in place of its markers, so that each list is
// kept once, in C++:
//   @DP_OPTIONS@  alone on a line: dp_options, its overloads and their
//                 COMMENTs, from the option table (DpOptionsSql)
//   @LOSS_NAMES@  anywhere: the losses' names, "logistic, huber or softmax"
//                 (losses.def)
// Any other @NAME@ (capitals and _) is an error, naming the file and line.
// Built from this file and the core's objects, never installed.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "dperm/options/options.hpp"

namespace {

std::string LossNames() {
  std::vector<std::string> names;
  for (dperm::LossKind loss : dperm::AllLosses()) names.push_back(dperm::LossName(loss));
  return dperm::JoinNames(names, " or ");
}

// The source's line `line` (1-based) with its markers replaced; throws on
// one it does not know or one out of place.
std::string Expand(std::string line) {
  if (line == "@DP_OPTIONS@") return dperm::DpOptionsSql();
  const std::string loss_names = "@LOSS_NAMES@";
  for (size_t at; (at = line.find(loss_names)) != std::string::npos;)
    line.replace(at, loss_names.size(), LossNames());
  std::smatch marker;
  if (std::regex_search(line, marker, std::regex("@[A-Z_]+@")))
    throw std::runtime_error(marker.str() == "@DP_OPTIONS@"
                                 ? "@DP_OPTIONS@ must stand alone on its line"
                                 : "unknown marker " + marker.str());
  return line + "\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SOURCE.sql > SCRIPT.sql\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "gen_sql: cannot read %s\n", argv[1]);
    return 1;
  }
  std::string out, line;
  int number = 0;
  try {
    while (std::getline(in, line)) {
      number++;
      out += Expand(line);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gen_sql: %s:%d: %s\n", argv[1], number, e.what());
    return 1;
  }
  std::cout << out;
  return std::cout.flush() ? 0 : 1;
}
