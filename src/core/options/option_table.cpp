// The option table (options.hpp, OptionTable): every key with its SQL type,
// range, default, meaning and store; the checks of one entry against its
// row. What is generated from it (the reference table, dp_options' SQL):
// option_reference.cpp.
#include "dperm/options/options.hpp"

#include <cmath>
#include <cstring>

namespace dperm {
namespace {

const double kMaxIntegral = 9007199254740992.0;  // 2^53: exact in a double
const int64_t kMaxClasses = 100000;

const OptionEntry& Expect(const OptionEntry& e, OptionEntry::Kind kind, const char* what) {
  if (e.kind != kind) ThrowInvalid(std::string("option \"") + e.key + "\" must be " + what);
  return e;
}

// A finite number above lo (or at lo unless lo_open) and below hi (or at hi
// unless hi_open); hi = INFINITY means no upper bound.
double Number(const OptionEntry& e, double lo, bool lo_open, double hi, bool hi_open = false,
              const std::string& hint = "") {
  if (e.kind != OptionEntry::Kind::kNumber)
    ThrowInvalid(std::string("option \"") + e.key + "\" must be a finite number", hint);
  double v = e.number;
  bool ok = std::isfinite(v) && (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
  if (!ok) {
    std::string range = std::string(lo_open ? "> " : ">= ") + ShortestNumber(lo);
    if (std::isfinite(hi))
      range += std::string(hi_open ? " and < " : " and <= ") + ShortestNumber(hi);
    ThrowInvalid(
        std::string("option \"") + e.key + "\" is " + ShortestNumber(v) + ", must be " + range,
        hint);
  }
  return v;
}

int64_t Integer(const OptionEntry& e, int64_t lo, int64_t hi) {
  double v = Number(e, static_cast<double>(lo), false, static_cast<double>(hi));
  if (v != std::floor(v)) ThrowInvalid(std::string("option \"") + e.key + "\" must be an integer");
  return static_cast<int64_t>(v);
}

std::string Text(const OptionEntry& e) {
  Expect(e, OptionEntry::Kind::kString, "a string");
  return e.text;
}

[[noreturn]] void ThrowChoice(const OptionEntry& e, const std::string& choices) {
  ThrowInvalid(std::string("option \"") + e.key + "\" has unknown value \"" + e.text + "\"",
               "Valid values: " + choices + ".");
}

Algorithm ParseAlgorithm(const OptionEntry& e) {
  std::string v = Text(e);
  std::vector<std::string> names;
  for (Algorithm a : AllAlgorithms()) {
    if (v == AlgorithmName(a)) return a;
    names.push_back(AlgorithmName(a));
  }
  ThrowChoice(e, JoinNames(names, ", "));
}

Accountant ParseAccountant(const OptionEntry& e) {
  std::string v = Text(e);
  if (v == "tight") return Accountant::kTight;
  if (v == "paper") return Accountant::kPaper;
  ThrowChoice(e, "tight (default), paper");
}

// `intercept`: 'offset' (the default: a private offset, offset.hpp) or
// 'fitted' (an ordinary coordinate).
bool ParseInterceptOffset(const OptionEntry& e) {
  std::string v = Text(e);
  if (v == "offset") return true;
  if (v == "fitted") return false;
  ThrowChoice(e, "offset (default), fitted");
}

Neighbors ParseNeighbors(const OptionEntry& e) {
  std::string v = Text(e);
  if (v == "replace_one") return Neighbors::kReplaceOne;
  ThrowChoice(e, "replace_one");
}

// The most bytes of one name in option "feature_names" (a feature spec's
// column=value: 63 + 1 + 1024).
constexpr size_t kMaxFeatureNameBytes = 1088;

void CheckFeatureNames(const OptionEntry& e) {
  Expect(e, OptionEntry::Kind::kStringArray, "an array of strings");
  for (int i = 0; i < e.n_items; i++) {
    if (e.items[i] == nullptr || e.items[i][0] == '\0')
      ThrowInvalid("option \"feature_names\" must not contain empty names");
    if (std::strcmp(e.items[i], "intercept") == 0)
      ThrowInvalid("option \"feature_names\" must not use the name \"intercept\"");
    // Bounded, like everything of a release that is stored (a named model's
    // record, the model): a spec's names are column=value, at most
    // 63 + 1 + 1024 bytes (feature_spec.hpp).
    if (std::strlen(e.items[i]) > kMaxFeatureNameBytes)
      ThrowInvalid("option \"feature_names\" has a name of more than " +
                   std::to_string(kMaxFeatureNameBytes) + " bytes");
  }
}

using Type = OptionSpec::Type;

// dp_options' parameter of an option (OptionSpec::sql_type, sql_position,
// sql_default): its SQL type, its place (the next one for a new option) and
// its default (nullptr: required).
struct Param {
  const char* sql_type;
  int position;
  const char* sql_default = "NULL";
};

OptionSpec Spec(const char* key, Type type, Param param, const char* fallback, const char* doc,
                void (*store)(const OptionEntry&, double, Options&),
                OptionEntry (*read)(const Options&)) {
  OptionSpec s;
  s.key = key;
  s.type = type;
  s.sql_type = param.sql_type;
  s.sql_position = param.position;
  s.sql_default = param.sql_default;
  s.fallback = fallback;
  s.doc = doc;
  s.store = store;
  s.read = read;
  return s;
}

// Entries for OptionSpec::read.
OptionEntry NumberEntry(double v) {
  OptionEntry e;
  e.kind = OptionEntry::Kind::kNumber;
  e.number = v;
  return e;
}
OptionEntry BoolEntry(bool v) {
  OptionEntry e;
  e.kind = OptionEntry::Kind::kBool;
  e.boolean = v;
  return e;
}
OptionEntry TextEntry(const char* v) {
  OptionEntry e;
  e.kind = OptionEntry::Kind::kString;
  e.text = v;
  return e;
}
OptionEntry NullEntry() {
  OptionEntry e;
  e.kind = OptionEntry::Kind::kNull;
  return e;
}
// A number whose unset sentinel fails `set`.
OptionEntry NumberIf(bool set, double v) { return set ? NumberEntry(v) : NullEntry(); }

OptionSpec Ranged(OptionSpec s, double lo, bool lo_open, double hi, bool hi_open = false) {
  s.lo = lo;
  s.lo_open = lo_open;
  s.hi = hi;
  s.hi_open = hi_open;
  return s;
}

OptionSpec PerAlgorithm(OptionSpec s, bool (*given)(const Options&), const char* unused) {
  s.given = given;
  s.unused = unused;
  return s;
}

OptionSpec WithValues(OptionSpec s, const char* values) {
  s.values = values;
  return s;
}

std::vector<OptionSpec> BuildTable() {
  std::vector<OptionSpec> t;
  t.push_back(WithValues(
      Ranged(Spec(
                 "epsilon", Type::kNumber, {"float8", 1, nullptr}, "required",
                 "ε of the release (below the floor a release shows little but its exact n)",
                 [](const OptionEntry&, double v, Options& o) { o.epsilon = v; },
                 [](const Options& o) { return NumberEntry(o.epsilon); }),
             0, true, INFINITY),
      "≥ 0.001"));
  t.push_back(Ranged(Spec(
                         "delta", Type::kNumber, {"float8", 2, "0"}, "0",
                         "δ; 0 gives pure ε-DP noise, > 0 Gaussian noise",
                         [](const OptionEntry&, double v, Options& o) { o.delta = v; },
                         [](const Options& o) { return NumberEntry(o.delta); }),
                     0, false, 1, true));
  t.push_back(WithValues(
      Spec(
          "algorithm", Type::kText, {"text", 3}, "by regulariser and δ",
          "when omitted dperm picks one (user guide, *Choosing an algorithm*) and the plan's "
          "`algorithm_rule` says why",
          [](const OptionEntry& e, double, Options& o) {
            o.algorithm = ParseAlgorithm(e);
            o.has_algorithm = true;
          },
          [](const Options& o) {
            return o.has_algorithm ? TextEntry(AlgorithmName(o.algorithm)) : NullEntry();
          }),
      "a name from the user guide's *Algorithms*"));
  OptionSpec l2 = WithValues(
      Ranged(
          Spec(
              "l2", Type::kNumber, {"float8", 4}, "by loss, n, d, ε and δ",
              "μ: the objective gets μ/2·‖w‖² (the intercept is regularised too); "
              "μ > 0 makes it strongly convex and the noise much smaller. When neither "
              "`l2` nor `algorithm` is given dperm derives μ from public n, d, ε and δ "
              "(user guide, *Choosing l2*; 0 with a given algorithm) and the plan's `l2_rule` "
              "says how; `l2 => 0` asks for none. `auto`: dperm "
              "picks μ from a public grid by a private validation score, charged as one "
              "release (user guide, *Choosing l2 privately*)",
              [](const OptionEntry& e, double v, Options& o) {
                o.has_l2 = true;
                if (e.kind == OptionEntry::Kind::kString) {
                  o.l2_auto = true;
                  o.l2 = 0;
                } else {
                  o.l2 = v;
                  o.l2_auto = false;
                }
              },
              [](const Options& o) { return o.l2_auto ? TextEntry("auto") : NumberEntry(o.l2); }),
          0, false, INFINITY),
      "≥ 0, or `auto`");
  l2.also_text = "auto";
  t.push_back(l2);
  t.push_back(PerAlgorithm(
      Ranged(Spec(
                 "l1", Type::kNumber, {"float8", 5}, "0",
                 "the objective gets l1·‖w‖₁ (every coordinate), by proximal steps; with `l2` "
                 "it is the elastic net",
                 [](const OptionEntry&, double v, Options& o) { o.l1 = v; },
                 [](const Options& o) { return NumberEntry(o.l1); }),
             0, false, INFINITY),
      [](const Options& o) { return o.l1 > 0; }, "it has no proximal step; use l2"));
  t.push_back(Spec(
      "fit_intercept", Type::kBoolean, {"boolean", 6}, "true",
      "adds a constant feature column, fitted on a private offset b₀ (a noisy base "
      "rate or mean, at most ε/10 of the budget), so `l2` shrinks it toward b₀ "
      "(user guide, *The intercept*); not in streaming mode",
      [](const OptionEntry&, double v, Options& o) { o.fit_intercept = v != 0; },
      [](const Options& o) { return BoolEntry(o.fit_intercept); }));
  t.push_back(WithValues(
      Spec(
          "intercept", Type::kText, {"text", 21}, "`offset`",
          "with `fit_intercept`: `offset` spends ε₀ ≤ ε/10 on a private base rate b₀ and "
          "fits the intercept around it (user guide, *The intercept*); `fitted`: an ordinary "
          "coordinate, shrunk toward 0 (streaming mode always, and the pure `dp_logreg` default "
          "where 5·d ≤ n·ε < 300·d unless `intercept` is given)",
          [](const OptionEntry& e, double, Options& o) {
            o.intercept_offset = ParseInterceptOffset(e);
          },
          [](const Options& o) { return TextEntry(o.intercept_offset ? "offset" : "fitted"); }),
      "`offset`, `fitted`"));
  t.push_back(Ranged(Spec(
                         "feature_bound", Type::kNumber, {"float8", 7}, "1",
                         "each row's features are clipped to this L2 norm",
                         [](const OptionEntry&, double v, Options& o) { o.feature_bound = v; },
                         [](const Options& o) { return NumberEntry(o.feature_bound); }),
                     0, true, 1e150));
  t.push_back(
      Ranged(Spec(
                 "huber_delta", Type::kNumber, {"float8", 8}, "0.1 · `target_bound`",
                 "δ of the Huber loss: quadratic for residuals up to δ, linear beyond; L = "
                 "`huber_delta`·R, so the noise scales with it. The default rule was chosen by "
                 "held-out R² (bench/reports/heldout_huber_delta.md); a given value wins",
                 [](const OptionEntry&, double v, Options& o) { o.huber_delta = v; },
                 // the plan's options hold the effective value (BasePlan)
                 [](const Options& o) { return NumberIf(o.huber_delta > 0, o.huber_delta); }),
             0, true, 1e150));
  OptionSpec target_bound = Ranged(
      Spec(
          "target_bound", Type::kNumber, {"float8", 20}, "1",
          "B, the public bound on \\|target\\| of `dp_huber`: targets are clipped to [−B, B] "
          "(sanitising, like `feature_bound`); it sets the default `huber_delta`. Scale "
          "targets to [0, 1] or pass their range",
          [](const OptionEntry&, double v, Options& o) { o.target_bound = v; },
          [](const Options& o) { return NumberEntry(o.target_bound); }),
      0, true, 1e150);
  target_bound.hint =
      "target_bound is the public bound B on |target|: dp_huber clips targets to [-B, B]. "
      "Pass B >= the largest |target| you expect, e.g. 1 for targets scaled to [0, 1].";
  t.push_back(target_bound);
  t.push_back(PerAlgorithm(
      Ranged(Spec(
                 "radius", Type::kNumber, {"float8", 9}, "from the plan",
                 "the constraint ball: an L2 ball for the projected methods (default L/l2 "
                 "when l2 > 0), the L1 ball of `dp_accmd` (default 10)",
                 [](const OptionEntry&, double v, Options& o) { o.radius = v; },
                 [](const Options& o) { return NumberIf(o.radius > 0, o.radius); }),
             0, true, 1e150),
      [](const Options& o) { return o.radius > 0; }, "it does not project onto a ball"));
  t.push_back(PerAlgorithm(
      Ranged(Spec(
                 "iterations", Type::kInteger, {"bigint", 10}, "from the plan",
                 "T (steps; passes for `bolton`; epochs for `dp_svrg`/`dp_svrg_pp`); the "
                 "privacy accounting follows the T actually used",
                 [](const OptionEntry&, double v, Options& o) {
                   o.iterations = static_cast<int64_t>(v);
                 },
                 [](const Options& o) {
                   return NumberIf(o.iterations > 0, static_cast<double>(o.iterations));
                 }),
             1, false, 100000000),
      [](const Options& o) { return o.iterations > 0; },
      "its iteration count is derived from public bounds"));
  t.push_back(PerAlgorithm(
      Ranged(Spec(
                 "step_size", Type::kNumber, {"float8", 11}, "from the plan",
                 "η; a step the analysis does not cover is an error",
                 [](const OptionEntry&, double v, Options& o) { o.step_size = v; },
                 [](const Options& o) { return NumberIf(o.step_size > 0, o.step_size); }),
             0, true, INFINITY),
      [](const Options& o) { return o.step_size > 0; }, "it chooses its own steps"));
  t.push_back(WithValues(
      PerAlgorithm(
          Ranged(Spec(
                     "batch_size", Type::kInteger, {"bigint", 12}, "from the plan",
                     "rows per step of the stochastic methods",
                     [](const OptionEntry&, double v, Options& o) {
                       o.batch_size = static_cast<int64_t>(v);
                     },
                     [](const Options& o) {
                       return NumberIf(o.batch_size > 0, static_cast<double>(o.batch_size));
                     }),
                 1, false, kMaxIntegral),
          [](const Options& o) { return o.batch_size > 0; }, "it uses the full batch"),
      "integer ≥ 1"));
  t.push_back(PerAlgorithm(
      Ranged(Spec(
                 "ls_sigma", Type::kNumber, {"float8", 13}, "1",
                 "`dp_lssgd`'s Laplacian smoothing σ (0 gives DP-SGD)",
                 [](const OptionEntry&, double v, Options& o) { o.ls_sigma = v; },
                 [](const Options& o) { return NumberIf(o.ls_sigma >= 0, o.ls_sigma); }),
             0, false, 1e6),
      [](const Options& o) { return o.ls_sigma >= 0; }, "it does no Laplacian smoothing"));
  t.push_back(WithValues(
      Spec(
          "accountant", Type::kText, {"text", 14}, "`tight`",
          "`tight`: the analysis below with the analytic Gaussian; `paper`: the seed paper's "
          "Lemma 2/3 and Algorithm 1 noise, to replicate its Table 3",
          [](const OptionEntry& e, double, Options& o) { o.accountant = ParseAccountant(e); },
          [](const Options& o) { return TextEntry(AccountantName(o.accountant)); }),
      "`tight`, `paper`"));
  t.push_back(WithValues(
      Spec(
          "neighbors", Type::kText, {"text", 15}, "`replace_one`", "the neighbouring relation",
          [](const OptionEntry& e, double, Options& o) { o.neighbors = ParseNeighbors(e); },
          [](const Options& o) { return TextEntry(NeighborsName(o.neighbors)); }),
      "`replace_one`"));
  t.push_back(WithValues(
      Spec(
          "dataset", Type::kText, {"text", 16}, "—",
          "a relation to charge in addition to those the query reads; the releasing role "
          "must be able to SELECT it (or be an analyst of it, if protected); system catalogs "
          "are refused",
          [](const OptionEntry& e, double, Options& o) {
            if (Text(e).empty()) ThrowInvalid("option \"dataset\" must not be empty");
            o.has_dataset = true;
          },
          [](const Options&) { return NullEntry(); }),
      "a relation name"));
  t.push_back(WithValues(
      Ranged(Spec(
                 "seed", Type::kInteger, {"bigint", 17}, "—",
                 "fixes the noise; needs `dperm.allow_seed` (tests only; not private)",
                 [](const OptionEntry&, double v, Options& o) {
                   o.seed = static_cast<uint64_t>(static_cast<int64_t>(v));
                   o.has_seed = true;
                 },
                 [](const Options& o) {
                   return NumberIf(o.has_seed, static_cast<double>(static_cast<int64_t>(o.seed)));
                 }),
             -kMaxIntegral, false, kMaxIntegral),
      "integer, \\|seed\\| ≤ 2⁵³"));
  t.push_back(WithValues(Spec(
                             "feature_names", Type::kTextArray, {"text[]", 18}, "`x1`, `x2`, …",
                             "names of the coefficients",
                             [](const OptionEntry& e, double, Options& o) {
                               CheckFeatureNames(e);
                               o.n_feature_names = e.n_items;
                             },
                             [](const Options&) { return NullEntry(); }),
                         "non-empty names, not `intercept`"));
  t.push_back(
      Ranged(Spec(
                 "classes", Type::kInteger, {"int", 19}, "—",
                 "K, the number of classes of `dp_softmax` (required there, an error "
                 "elsewhere); the classes are 0 … K−1",
                 [](const OptionEntry&, double v, Options& o) { o.classes = static_cast<int>(v); },
                 [](const Options& o) { return NumberIf(o.classes > 0, o.classes); }),
             2, false, kMaxClasses));
  t.push_back(Ranged(
      Spec(
          "dimension", Type::kInteger, {"int", 22}, "—",
          "d, the number of features of every row (declared, never read from a "
          "row; required for releases charged to a budgeted or protected "
          "relation unless `feature_names` gives it): rows of another length are "
          "truncated or padded with zeros",
          [](const OptionEntry&, double v, Options& o) { o.dimension = static_cast<int>(v); },
          [](const Options& o) { return NumberIf(o.dimension > 0, o.dimension); }),
      1, false, kMaxDimension));
  t.push_back(Ranged(Spec(
                         "max_rows_per_unit", Type::kInteger, {"bigint", 23}, "—",
                         "k, the rows one privacy unit contributes: a release is (ε, δ)-DP "
                         "per unit by group privacy over k row slots. Set by `dperm.train` "
                         "from the budget's `privacy_unit` (which also bounds the rows; any "
                         "other release refuses it); in `dp_explain`, n is then the number "
                         "of units",
                         [](const OptionEntry&, double v, Options& o) {
                           o.max_rows_per_unit = static_cast<int64_t>(v);
                         },
                         [](const Options& o) {
                           return NumberIf(o.max_rows_per_unit > 0,
                                           static_cast<double>(o.max_rows_per_unit));
                         }),
                     1, false, static_cast<double>(kMaxRowsPerUnit)));
  t.push_back(Ranged(
      Spec(
          "units_estimate", Type::kInteger, {"bigint", 24}, "—",
          "a public estimate of the number of units (rows, without a privacy unit) a release "
          "that counts them will find (`dperm.train` at a privacy unit, `dperm.train_query`): "
          "the noisy count then takes min(ε/10, max(ε/100, 141.4/units_estimate)) of ε instead "
          "of ε/10, the rest goes to the model. Your statement, never read from the data: a "
          "wrong one costs precision, never privacy",
          [](const OptionEntry&, double v, Options& o) {
            o.units_estimate = static_cast<int64_t>(v);
          },
          [](const Options& o) {
            return NumberIf(o.units_estimate > 0, static_cast<double>(o.units_estimate));
          }),
      1, false, kMaxIntegral));
  return t;  // at most 32 entries: Options::given (test_algorithm_table.cpp)
}

}  // namespace

const std::vector<OptionSpec>& OptionTable() {
  static const std::vector<OptionSpec> table = BuildTable();
  return table;
}

double CheckedOptionValue(const OptionSpec& s, const OptionEntry& e) {
  if (s.also_text != nullptr && e.kind == OptionEntry::Kind::kString) {
    if (std::strcmp(e.text, s.also_text) != 0)
      ThrowInvalid(std::string("option \"") + e.key + "\" has unknown value \"" + e.text + "\"",
                   std::string("Pass a number or '") + s.also_text + "'.");
    return 0;  // the store function reads the entry's kind
  }
  switch (s.type) {
    case Type::kNumber: return Number(e, s.lo, s.lo_open, s.hi, s.hi_open, s.hint ? s.hint : "");
    case Type::kInteger:
      return static_cast<double>(
          Integer(e, static_cast<int64_t>(s.lo), static_cast<int64_t>(s.hi)));
    case Type::kBoolean: return Expect(e, OptionEntry::Kind::kBool, "a boolean").boolean ? 1 : 0;
    case Type::kText:
    case Type::kTextArray: return 0;
  }
  return 0;
}

}  // namespace dperm
