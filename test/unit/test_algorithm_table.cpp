// Unit tests of the algorithm table (registry.hpp, algorithms.def) and the
// option table (options.hpp): every algorithm is reachable by its SQL name
// and explains itself; each refuses exactly the per-algorithm options it does
// not take, the losses it declares and delta = 0 when it needs delta > 0;
// the SQL reference's options table matches the option table, and the SQL
// of dp_options generated from it declares every option.
//
// docs/sql-reference.md and the SQL scripts' sources are read from the working
// directory (the repository root, as `make unit` runs the tests). After
// changing the option table, `scripts/gen_sql_reference.py` regenerates the
// reference (from an installed dperm).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dperm/planning/explain.hpp"
#include "dperm/options/options.hpp"
#include "dperm/algorithms/registry.hpp"
#include "dperm/planning/plan_release.hpp"
#include "test_helpers.hpp"

namespace {

using dperm::Algorithm;
using dperm::AlgorithmName;
using dperm::AllAlgorithms;
using dperm::LossKind;
using dperm::OptionEntry;
using dperm::Options;
using dperm::OptionSpec;
using dperm::Plan;

// Options every algorithm plans with (dp_svrg needs l2 > 0, the gradient
// methods delta > 0).
Options Valid(Algorithm a) {
  Options o;
  o.epsilon = 1;
  o.delta = 1e-5;
  o.l2 = 0.1;
  o.algorithm = a;
  o.has_algorithm = true;
  return o;
}

// A value of each per-algorithm option that is in range for the option.
void SetOption(Options& o, const std::string& key) {
  if (key == "l1") o.l1 = 0.01;
  else if (key == "radius") o.radius = 5;
  else if (key == "iterations") o.iterations = 3;
  else if (key == "step_size") o.step_size = 1e-3;
  else if (key == "batch_size") o.batch_size = 1;
  else if (key == "ls_sigma") o.ls_sigma = 0.5;
  else ADD_FAILURE() << "no test value for the per-algorithm option " << key;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string PlanError(const Options& o, LossKind loss) {
  try {
    dperm::PlanRelease(o, loss, 1000, 3);
  } catch (const dperm::Error& e) {
    return e.what();
  }
  return "";
}

TEST(AlgorithmTable, EveryAlgorithmIsParsedPlannedAndExplainedByName) {
  std::set<std::string> names;
  ASSERT_FALSE(AllAlgorithms().empty());
  for (Algorithm a : AllAlgorithms()) {
    const std::string name = AlgorithmName(a);
    SCOPED_TRACE(name);
    EXPECT_TRUE(names.insert(name).second) << "duplicate name";
    EXPECT_EQ(dperm::SpecFor(a).algorithm, a) << "SpecOf<" << name << "> names another algorithm";
    EXPECT_EQ(&dperm::MechanismFor(a), dperm::SpecFor(a).mechanism);
    // The SQL name parses to the algorithm.
    OptionEntry entries[3];
    entries[0].key = "epsilon";
    entries[0].kind = OptionEntry::Kind::kNumber;
    entries[0].number = 1;
    entries[1].key = "algorithm";
    entries[1].kind = OptionEntry::Kind::kString;
    entries[1].text = name.c_str();
    entries[2].key = "delta";
    entries[2].kind = OptionEntry::Kind::kNumber;
    entries[2].number = 1e-5;
    Options o = dperm::ParseOptions(entries, 3);
    EXPECT_TRUE(o.has_algorithm);
    EXPECT_EQ(o.algorithm, a);
    o.l2 = 0.1;
    // It plans and explains itself under its name.
    Plan p = dperm::PlanRelease(o, LossKind::kLogistic, 1000, 3);
    EXPECT_EQ(p.algorithm, a);
    EXPECT_NE(dperm::ExplainJson(p).find("\"algorithm\":\"" + name + "\""), std::string::npos);
  }
  // An unknown name is refused, listing every algorithm.
  OptionEntry bad;
  bad.key = "algorithm";
  bad.kind = OptionEntry::Kind::kString;
  bad.text = "no_such_algorithm";
  std::string all;
  for (Algorithm a : AllAlgorithms())
    all += std::string(all.empty() ? "" : ", ") + AlgorithmName(a);
  dperm::testing::ExpectInvalid([&] { dperm::ParseOptions(&bad, 1); }, "no_such_algorithm",
                                "Valid values: " + all + ".");
}

TEST(AlgorithmTable, SpecsNameOnlyPerAlgorithmOptions) {
  for (Algorithm a : AllAlgorithms()) {
    SCOPED_TRACE(AlgorithmName(a));
    const dperm::AlgorithmSpec& s = dperm::SpecFor(a);
    for (const std::string& key : s.options) {
      const OptionSpec* option = dperm::FindOption(key);
      ASSERT_NE(option, nullptr) << key << " is not an option";
      EXPECT_NE(option->given, nullptr) << key << " is taken by every algorithm anyway";
    }
    for (const dperm::OptionRefusal& r : s.refusals) {
      const OptionSpec* option = dperm::FindOption(r.key);
      ASSERT_NE(option, nullptr) << r.key << " is not an option";
      EXPECT_NE(option->given, nullptr) << r.key;
      EXPECT_FALSE(dperm::TakesOption(a, r.key)) << r.key << " is both taken and refused";
    }
  }
}

// Each per-algorithm option is refused, naming it and the algorithm, by
// exactly the algorithms that do not take it; the others do not call it
// inapplicable (they may still refuse its value for their own reasons).
TEST(AlgorithmTable, UnusedOptionsAreRefusedGenerically) {
  int refused = 0, taken = 0;
  for (Algorithm a : AllAlgorithms()) {
    for (const OptionSpec& option : dperm::OptionTable()) {
      if (option.given == nullptr) continue;
      SCOPED_TRACE(std::string(AlgorithmName(a)) + " " + option.key);
      Options o = Valid(a);
      SetOption(o, option.key);
      ASSERT_TRUE(option.given(o));
      const std::string inapplicable = std::string("option \"") + option.key +
                                       "\" does not apply to algorithm " + AlgorithmName(a) + ": ";
      if (dperm::TakesOption(a, option.key)) {
        EXPECT_EQ(PlanError(o, LossKind::kLogistic).find(inapplicable), std::string::npos);
        taken++;
      } else {
        dperm::testing::ExpectInvalid(dperm::testing::Planning(o, LossKind::kLogistic, 1000, 3),
                                      inapplicable);
        refused++;
      }
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(taken, 0);
}

// The reason an algorithm gives is its own when it has one, else the
// option table's, written once ("does no Laplacian smoothing").
TEST(AlgorithmTable, RefusalReasons) {
  Options o = Valid(Algorithm::kOutputGd);
  o.ls_sigma = 0.5;
  dperm::testing::ExpectInvalid(
      dperm::testing::Planning(o, LossKind::kLogistic, 1000, 3),
      "option \"ls_sigma\" does not apply to algorithm output_gd: it does no Laplacian smoothing");
  o = Valid(Algorithm::kDpSgd);
  o.l1 = 0.01;
  dperm::testing::ExpectInvalid(
      dperm::testing::Planning(o, LossKind::kLogistic, 1000, 3),
      "option \"l1\" does not apply to algorithm dp_sgd: ANSGD has no proximal step; use l2");
}

TEST(AlgorithmTable, DeltaZeroAndLossesFollowTheSpec) {
  const std::vector<std::string> pure = dperm::PureDpAlgorithms();
  ASSERT_FALSE(pure.empty());
  for (Algorithm a : AllAlgorithms()) {
    const dperm::AlgorithmSpec& s = dperm::SpecFor(a);
    const std::string name = AlgorithmName(a);
    SCOPED_TRACE(name);
    Options o = Valid(a);
    o.delta = 0;
    if (s.needs_delta != nullptr) {
      dperm::testing::ExpectInvalid(
          dperm::testing::Planning(o, LossKind::kLogistic, 1000, 3),
          "algorithm " + name + " needs delta > 0: " + s.needs_delta,
          "use algorithm " + dperm::JoinNames(pure, " or ") + " for pure epsilon-DP");
      EXPECT_EQ(std::count(pure.begin(), pure.end(), name), 0);
    } else {
      EXPECT_EQ(PlanRelease(o, LossKind::kLogistic, 1000, 3).options.delta, 0.0);
      EXPECT_EQ(std::count(pure.begin(), pure.end(), name), 1);
    }
    for (LossKind loss : {LossKind::kLogistic, LossKind::kHuber, LossKind::kSoftmax}) {
      Options ol = Valid(a);
      if (loss == LossKind::kSoftmax) ol.classes = 3;
      const std::string refusal = "algorithm " + name + " does not support dp_" +
                                  (loss == LossKind::kLogistic ? "logreg"
                                   : loss == LossKind::kHuber  ? "huber"
                                                               : "softmax");
      if (dperm::TakesLoss(a, loss))
        EXPECT_EQ(PlanError(ol, loss).find(refusal), std::string::npos);
      else dperm::testing::ExpectInvalid(dperm::testing::Planning(ol, loss, 1000, 3), refusal);
    }
  }
  // Objective perturbation's losses, the two that refuse any.
  EXPECT_FALSE(dperm::TakesLoss(Algorithm::kObjective, LossKind::kHuber));
  EXPECT_FALSE(dperm::TakesLoss(Algorithm::kObjectiveApprox, LossKind::kSoftmax));
  EXPECT_TRUE(dperm::TakesLoss(Algorithm::kObjective, LossKind::kLogistic));
}

TEST(OptionTable, KeysParseAndUnknownKeysAreRefused) {
  std::set<std::string> keys;
  for (const OptionSpec& s : dperm::OptionTable()) {
    EXPECT_TRUE(keys.insert(s.key).second) << "duplicate key " << s.key;
    EXPECT_EQ(dperm::FindOption(s.key), &s);
    EXPECT_NE(s.store, nullptr) << s.key;
    EXPECT_NE(s.doc, nullptr) << s.key;
    EXPECT_EQ((s.given == nullptr), (s.unused == nullptr)) << s.key;
    EXPECT_NE(s.read, nullptr) << s.key;
  }
  EXPECT_LE(dperm::OptionTable().size(), 32u) << "Options::given has 32 bits";
  EXPECT_EQ(dperm::OptionKeys().size(), dperm::OptionTable().size());
  EXPECT_EQ(dperm::FindOption("no_such_option"), nullptr);
  OptionEntry e;
  e.key = "no_such_option";
  e.kind = OptionEntry::Kind::kNull;
  dperm::testing::ExpectInvalid([&] { dperm::ParseOptions(&e, 1); }, "unknown option",
                                "Valid options: epsilon, delta, algorithm,");
}

// OptionSpec::read gives back what ParseOptions stored, and ParseOptions
// marks the key given: for each option, a value inside its range (or a
// valid text) is parsed alone (with epsilon) and read back. dataset and
// feature_names read null: the boundary keeps their values.
TEST(OptionTable, ReadGivesBackTheParsedValue) {
  const char* names[] = {"a", "b"};
  for (const OptionSpec& s : dperm::OptionTable()) {
    SCOPED_TRACE(s.key);
    OptionEntry e;
    e.key = s.key;
    double v = 0;
    switch (s.type) {
      case OptionSpec::Type::kNumber:
      case OptionSpec::Type::kInteger:
        v = std::isfinite(s.hi) ? (s.lo + s.hi) / 2 : s.lo + 1;
        if (s.type == OptionSpec::Type::kInteger) v = std::floor(v);
        e.kind = OptionEntry::Kind::kNumber;
        e.number = v;
        break;
      case OptionSpec::Type::kBoolean:
        e.kind = OptionEntry::Kind::kBool;
        e.boolean = false;  // the default is true
        break;
      case OptionSpec::Type::kText:
        e.kind = OptionEntry::Kind::kString;
        e.text = std::string(s.key) == "algorithm"    ? "dp_sgd"
                 : std::string(s.key) == "accountant" ? "paper"
                 : std::string(s.key) == "neighbors"  ? "replace_one"
                 : std::string(s.key) == "intercept"  ? "fitted"  // the default is offset
                                                      : "some_relation";
        break;
      case OptionSpec::Type::kTextArray:
        e.kind = OptionEntry::Kind::kStringArray;
        e.items = names;
        e.n_items = 2;
        break;
    }
    OptionEntry entries[2] = {e, e};
    entries[1].key = "epsilon";
    entries[1].kind = OptionEntry::Kind::kNumber;
    entries[1].number = 1;
    const bool is_epsilon = std::string(s.key) == "epsilon";
    Options o = dperm::ParseOptions(entries, is_epsilon ? 1 : 2);
    EXPECT_TRUE(dperm::OptionGiven(o, s));
    int given = 0;
    for (const OptionSpec& t : dperm::OptionTable()) given += dperm::OptionGiven(o, t);
    EXPECT_EQ(given, is_epsilon ? 1 : 2);
    const OptionEntry r = s.read(o);
    if (s.type == OptionSpec::Type::kTextArray || std::string(s.key) == "dataset") {
      EXPECT_EQ(r.kind, OptionEntry::Kind::kNull);
    } else if (e.kind == OptionEntry::Kind::kNumber) {
      ASSERT_EQ(r.kind, OptionEntry::Kind::kNumber);
      EXPECT_EQ(r.number, v);
    } else if (e.kind == OptionEntry::Kind::kBool) {
      ASSERT_EQ(r.kind, OptionEntry::Kind::kBool);
      EXPECT_FALSE(r.boolean);
    } else {
      ASSERT_EQ(r.kind, OptionEntry::Kind::kString);
      EXPECT_STREQ(r.text, e.text);
    }
  }
}

// dp_explain's "options" (ExplainJson) lists every key of the table, in
// table order, with the value the plan used, and "options_given" the keys
// the caller gave. A model's plan (PlanJson) keeps its shape without them.
TEST(OptionTable, PlanJsonShowsEveryOption) {
  std::vector<OptionEntry> entries(7);
  auto number = [&](int i, const char* key, double v) {
    entries[i].key = key;
    entries[i].kind = OptionEntry::Kind::kNumber;
    entries[i].number = v;
  };
  number(0, "seed", 7);
  number(1, "epsilon", 1);
  number(2, "delta", 1e-5);
  number(3, "ls_sigma", 0.5);
  number(4, "batch_size", 10);
  entries[5].key = "algorithm";
  entries[5].kind = OptionEntry::Kind::kString;
  entries[5].text = "dp_lssgd";
  entries[6].key = "radius";
  entries[6].kind = OptionEntry::Kind::kNull;  // null: the default, not given
  Options o = dperm::ParseOptions(entries.data(), static_cast<int>(entries.size()));
  Plan p = dperm::PlanRelease(o, LossKind::kLogistic, 1000, 3);
  EXPECT_EQ(dperm::PlanJson(p).find("\"options"), std::string::npos);
  {
    const std::string json = dperm::ExplainJson(p);
    const size_t at = json.find("\"options\":{");
    ASSERT_NE(at, std::string::npos) << json;
    const std::string section = json.substr(at, json.find('}', at) - at);
    size_t last = 0;
    for (const OptionSpec& s : dperm::OptionTable()) {
      const size_t k = section.find(std::string("\"") + s.key + "\":");
      ASSERT_NE(k, std::string::npos) << s.key << " missing from " << section;
      EXPECT_GT(k, last) << s.key << " out of table order";
      last = k;
    }
    for (const char* pair :
         {"\"epsilon\":1,", "\"delta\":1e-05,", "\"algorithm\":\"dp_lssgd\"", "\"l2\":0,",
          "\"fit_intercept\":true", "\"target_bound\":1,", "\"radius\":null", "\"iterations\":null",
          "\"batch_size\":10,", "\"ls_sigma\":0.5,", "\"accountant\":\"tight\"", "\"seed\":7,",
          "\"classes\":null"})
      EXPECT_NE(section.find(pair), std::string::npos) << pair << " not in " << section;
    EXPECT_NE(json.find("\"options_given\":[\"epsilon\",\"delta\",\"algorithm\",\"batch_size\","
                        "\"ls_sigma\",\"seed\"]"),
              std::string::npos)
        << json;
  }
}

// docs/sql-reference.md, section "Options": the table OptionsMarkdown
// renders. scripts/gen_sql_reference.py writes that file from an installed
// dperm (dperm.option_reference()); this test catches a stale reference
// without a server, and `gen_sql_reference.py --check` (scripts/test.sh) the
// rest of the file.
TEST(OptionTable, SqlReferenceTableMatches) {
  const std::string path = "docs/sql-reference.md";
  const std::string reference = ReadFile(path);
  ASSERT_FALSE(reference.empty()) << "cannot read " << path << " (run from the repository root)";
  const std::string heading = "\n## Options\n\n";
  const size_t at = reference.find(heading);
  ASSERT_NE(at, std::string::npos) << path << " has no \"## Options\" section";
  const size_t begin = at + heading.size();
  size_t end = begin;
  while (end < reference.size() && reference[end] == '|') end = reference.find('\n', end) + 1;
  EXPECT_EQ(reference.substr(begin, end - begin), dperm::OptionsMarkdown())
      << path
      << "'s options table differs from the option table; regenerate it with "
         "`pg_virtualenv -t python3 scripts/gen_sql_reference.py` after make install";
}

// dp_options as sql/gen_sql splices it into the install and upgrade scripts
// (DpOptionsSql): each function declares every option of the table once, in
// sql_position order (an option that also takes text first, as text,
// without a default, in its overload), builds every key under its own name,
// and has a COMMENT on its signature.
TEST(OptionTable, DpOptionsSqlDeclaresEveryOption) {
  std::vector<const OptionSpec*> by_position;
  for (const OptionSpec& s : dperm::OptionTable()) by_position.push_back(&s);
  std::sort(by_position.begin(), by_position.end(), [](const OptionSpec* a, const OptionSpec* b) {
    return a->sql_position < b->sql_position;
  });
  std::vector<const OptionSpec*> text_first{nullptr};  // the overloads' first parameters
  for (const OptionSpec* s : by_position)
    if (s->also_text != nullptr) text_first.push_back(s);
  const std::string sql = dperm::DpOptionsSql();
  size_t at = 0;
  for (const OptionSpec* first : text_first) {
    SCOPED_TRACE(first == nullptr ? std::string("dp_options")
                                  : std::string("overload ") + first->key);
    std::vector<std::string> want, types;  // "key type[ DEFAULT d]"; the signature's types
    std::string build;                     // jsonb_build_object's arguments
    if (first != nullptr)
      want.push_back(std::string(first->key) + " text"), types.push_back("text");
    for (const OptionSpec* s : by_position) {
      build += std::string(build.empty() ? "" : ", ") + "'" + s->key + "', " + s->key;
      if (s == first) continue;
      want.push_back(std::string(s->key) + " " + s->sql_type +
                     (s->sql_default ? std::string(" DEFAULT ") + s->sql_default : ""));
      types.push_back(s->sql_type);
    }
    at = sql.find("CREATE FUNCTION dp_options(\n", at);
    ASSERT_NE(at, std::string::npos) << sql;
    const size_t end = sql.find(";\n", sql.find(";\n", at) + 2);  // the function, its COMMENT
    const std::string function = sql.substr(at, end - at);
    std::string declared = function.substr(function.find('(') + 1);
    declared = declared.substr(0, declared.find(")\nRETURNS"));
    std::vector<std::string> params;
    std::stringstream lines(declared);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty()) continue;  // after "dp_options("
      const size_t from = line.find_first_not_of(' ');
      params.push_back(line.substr(from, line.find_last_not_of(',') + 1 - from));
    }
    EXPECT_EQ(params, want) << function;
    std::string flat = std::regex_replace(function, std::regex("\\s+"), " ");
    EXPECT_NE(flat.find("jsonb_build_object( " + build + ")))"), std::string::npos)
        << "jsonb_build_object does not build " << build << " in " << function;
    std::string signature;
    for (const std::string& t : types) signature += (signature.empty() ? "" : ", ") + t;
    EXPECT_NE(flat.find("COMMENT ON FUNCTION dp_options( " + signature + ") IS '"),
              std::string::npos)
        << function;
    at = end;
  }
  EXPECT_EQ(sql.find("CREATE FUNCTION", at), std::string::npos) << "more functions than overloads";
}

// A table whose positions or defaults cannot make dp_options is refused.
TEST(OptionTable, DpOptionsSqlRefusesBrokenPositions) {
  std::vector<OptionSpec> table = dperm::OptionTable();
  ASSERT_GE(table.size(), 3u);
  std::vector<OptionSpec> twice = table;
  twice[2].sql_position = twice[1].sql_position;  // one position twice, one missing
  std::vector<OptionSpec> required_late = table;
  for (OptionSpec& s : required_late)
    if (s.sql_position == static_cast<int>(table.size())) s.sql_default = nullptr;
  for (const auto& broken : {twice, required_late}) {
    try {
      dperm::DpOptionsSql(broken);
      ADD_FAILURE() << "a broken table was accepted";
    } catch (const dperm::Error& e) {
      EXPECT_EQ(e.kind(), dperm::ErrorKind::kInternal);
      EXPECT_NE(std::string(e.what()).find("dp_options' parameter"), std::string::npos) << e.what();
    }
  }
}

// The SQL scripts' sources declare dp_options only through the marker
// sql/gen_sql replaces: the install script's source once, and no source of a
// built script by hand.
TEST(OptionTable, SqlSourcesSpliceDpOptions) {
  std::vector<std::string> sources{"sql/dperm.sql"};
  DIR* dir = opendir("sql/upgrade");
  ASSERT_NE(dir, nullptr) << "no sql/upgrade folder (run from the repository root)";
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.size() > 7 && name.compare(name.size() - 7, 7, ".sql.in") == 0)
      sources.push_back("sql/upgrade/" + name);
  }
  closedir(dir);
  const std::regex create("CREATE\\s+(OR\\s+REPLACE\\s+)?FUNCTION\\s+(\\w+\\.)?dp_options\\b",
                          std::regex::icase);
  for (const std::string& path : sources) {
    const std::string sql = ReadFile(path);
    ASSERT_FALSE(sql.empty()) << "cannot read " << path;
    EXPECT_FALSE(std::regex_search(sql, create))
        << path << " creates dp_options by hand; write the line @DP_OPTIONS@ instead";
    if (path == "sql/dperm.sql") {
      const size_t marker = sql.find("\n@DP_OPTIONS@\n");
      EXPECT_NE(marker, std::string::npos) << path << " lacks the line @DP_OPTIONS@";
      EXPECT_EQ(sql.find("\n@DP_OPTIONS@\n", marker + 1), std::string::npos)
          << path << " has @DP_OPTIONS@ twice";
    }
  }
}

}  // namespace
