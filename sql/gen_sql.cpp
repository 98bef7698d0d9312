// sql/gen_sql SOURCE: the build's SQL preprocessor (Makefile, DATA_built).
// Prints one script's source (sql/dperm.sql, sql/upgrade/*.sql.in) with what
// the core's tables generate in place of its markers, so that each list is
// kept once, in C++:
//   @DP_OPTIONS@  alone on a line: dp_options, its overloads and their
//                 COMMENTs, from the option table (DpOptionsSql)
//   @LOSS_NAMES@  anywhere: the losses' names, "logistic, huber or softmax"
//                 (losses.def)
//   @INCLUDE F@   alone on a line: the file F (a path from the including
//                 file's folder), its markers replaced in turn, so that a
//                 script is kept as parts by topic (sql/install/*.sql)
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

// Appends `path`'s lines to `out`, markers replaced, @INCLUDE lines by
// their file's; throws naming the file and line of the first error.
void ExpandFile(const std::string& path, int depth, std::string* out) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  const std::string include = "@INCLUDE ";
  std::string line;
  for (int number = 1; std::getline(in, line); number++) {
    try {
      if (line.compare(0, include.size(), include) == 0 && line.size() > include.size() + 1 &&
          line.back() == '@') {
        if (depth >= 4) throw std::runtime_error("@INCLUDE nested more than 4 deep");
        const size_t slash = path.rfind('/');
        const std::string folder = slash == std::string::npos ? "" : path.substr(0, slash + 1);
        ExpandFile(folder + line.substr(include.size(), line.size() - include.size() - 1),
                   depth + 1, out);
        continue;
      }
      *out += Expand(line);
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      if (what.rfind("gen_sql: ", 0) == 0) throw;
      throw std::runtime_error("gen_sql: " + path + ":" + std::to_string(number) + ": " + what);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SOURCE.sql > SCRIPT.sql\n", argv[0]);
    return 2;
  }
  std::string out;
  try {
    ExpandFile(argv[1], 0, &out);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    std::fprintf(stderr, "%s\n",
                 what.rfind("gen_sql: ", 0) == 0 ? what.c_str() : ("gen_sql: " + what).c_str());
    return 1;
  }
  std::cout << out;
  return std::cout.flush() ? 0 : 1;
}
