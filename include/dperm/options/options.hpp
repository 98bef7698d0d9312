// Training options: the public inputs every plan is derived from.
//
// Options arrive as jsonb (aggregates cannot take named arguments); the
// boundary turns the jsonb into a flat list of OptionEntry values and the core
// validates them here, so every range rule lives in one place.
#pragma once
#include "dperm/util/errors.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace dperm {

// The losses: one line each in losses.def.
enum class LossKind {
#define DPERM_LOSS(id, name, aggregate, label, link) id,
#include "dperm/options/losses.def"
#undef DPERM_LOSS
};
// What a loss's label is (losses.def's fourth column). The boundary's
// label rules follow from it alone: the SQL label types and their cast,
// how a label is stored, the per-pass aggregate, a privacy unit's dummy
// label, a feature spec's label column, dperm.evaluate's metrics; so does
// the shape of the coefficients (one vector, or one per class).
enum class LabelKind {
  kBinary,  // a binary margin label y in {-1, +1} (SQL boolean, or float8 > 0)
  kTarget,  // a real target clipped to [-target_bound, target_bound] (SQL float8)
  kClass,   // a class index 0 .. K-1 (SQL integer; the `classes` option)
};
// How a model's scores become its prediction (losses.def's fifth column).
enum class Link {
  kSigmoid,   // the probability 1/(1 + exp(-m)) of the positive label
  kIdentity,  // the score itself (a regression)
  kSoftmax,   // the class probabilities softmax(s_1 .. s_K)
};
// The algorithms: one line each in algorithms.def.
enum class Algorithm {
#define DPERM_ALGORITHM(id, name) id,
#include "dperm/options/algorithms.def"
#undef DPERM_ALGORITHM
};
enum class Accountant { kTight, kPaper };
enum class Neighbors { kReplaceOne };

// One jsonb key/value, as the boundary read it. Strings point into memory the
// boundary owns for the duration of the call.
struct OptionEntry {
  enum class Kind { kNumber, kString, kBool, kNull, kStringArray, kOther };
  const char* key = nullptr;
  Kind kind = Kind::kOther;
  double number = 0;
  const char* text = nullptr;
  bool boolean = false;
  int n_items = 0;  // kStringArray: number of strings in `items`
  const char* const* items = nullptr;
};

// Plain data: safe to keep in PostgreSQL memory (no destructors).
struct Options {
  double epsilon = 0;
  double delta = 0;
  Algorithm algorithm = Algorithm::kOutputGd;
  // false: PlanRelease picks DefaultAlgorithm. ParseOptions sets it only
  // when the key is given; code that fills Options directly keeps its choice.
  bool has_algorithm = true;
  double l2 = 0;  // mu: the objective gets l2/2 * ||w||^2
  // false: `l2` was not given; with no algorithm given either, PlanRelease
  // and PlanStreamingDefault use DefaultL2 (plan_release.hpp). ParseOptions sets it
  // only when the key is given ('auto' included); code that fills Options
  // directly keeps its l2, as with has_algorithm.
  bool has_l2 = true;
  // l2 => 'auto': dperm selects l2 among L2Grid() privately
  // (select_l2.hpp); l2 above is then 0 until a candidate sets it.
  bool l2_auto = false;
  double l1 = 0;
  bool fit_intercept = true;
  // With fit_intercept: fit the intercept on a private offset (offset.hpp,
  // stage 0). false: the intercept is an ordinary coordinate, regularised
  // toward 0 and noised with the weights (the behaviour up to 0.6.0, and
  // streaming mode's). Not a SQL option: ParseOptions sets it, so every
  // release from SQL has the offset; code that fills Options directly (a
  // mechanism's own tests) keeps the plain intercept unless it asks, as
  // with has_algorithm.
  bool intercept_offset = false;
  double feature_bound = 1;  // rows are clipped to this L2 norm
  double huber_delta = 0;    // 0: not given: HuberDelta derives it from target_bound
  double target_bound = 1;   // B: Huber targets are clipped to [-B, B]
  double radius = 0;         // 0: not given
  int64_t iterations = 0;    // 0: plan chooses
  double step_size = 0;      // 0: plan chooses
  int64_t batch_size = 0;    // 0: not given
  double ls_sigma = -1;      // <0: not given
  int classes = 0;           // dp_softmax: number of classes K (0: not given)
  Accountant accountant = Accountant::kTight;
  Neighbors neighbors = Neighbors::kReplaceOne;
  bool has_seed = false;
  uint64_t seed = 0;
  bool has_dataset = false;
  int n_feature_names = -1;  // -1: not given
  int dimension = 0;         // the declared d (0: not given; see DeclaredDimension)
  // Rows per privacy unit (unit_level.hpp): 0 for a row-level release. Set
  // by dperm.train from the relation's budget, which also bounds the rows.
  int64_t max_rows_per_unit = 0;
  // A public estimate of the number of units (rows without a unit) a
  // release that counts them will find (0: none): the count's share of
  // epsilon (planning/unit_count.hpp). The caller's statement, never read
  // from the data.
  int64_t units_estimate = 0;
  // Bit i: OptionTable()[i] was given (ParseOptions sets it; code that fills
  // Options directly sets none). dp_explain's "options_given".
  uint32_t given = 0;
};

// Validates the entries and returns the options; throws Error naming the key.
// The smallest epsilon a release may ask for (docs/user-guide.md, "Trust model").
constexpr double kMinEpsilon = 1e-3;
// The smallest delta > 0 a release accepts. dperm's exact normal sampler
// aborts (releases nothing) with probability up to 3 exp(-128) ~ 1e-55 per
// draw and truncates at 256 sigma; delta must dominate that for the
// (epsilon, delta) claim to hold (noise.hpp, SAMPLER FAILURE: at this floor
// both stay below 2^-20 delta for every plan of fewer than 10^18 draws).
// delta = 0 (pure epsilon-DP) uses the exact discrete Laplace sampler only.
constexpr double kMinDelta = 1e-30;

// The default huber_delta is kHuberDeltaPerTargetBound * target_bound: the
// Huber loss is quadratic for residuals up to a tenth of the public target
// scale B and linear beyond. The constant was chosen by held-out R² on the
// regression sets of ../shared/data (bench/reports/heldout_huber_delta.md;
// generator bench/scripts/heldout/huber_delta_sweep.py). Only public inputs
// enter (an option and a constant), so L = huber_delta R (huber.cpp)
// stays a public constant.
constexpr double kHuberDeltaPerTargetBound = 0.1;

// The Huber loss's delta: the option when given, else
// kHuberDeltaPerTargetBound * target_bound. BasePlan stores it in
// plan.options.huber_delta, which every later reader uses.
double HuberDelta(const Options& options);

Options ParseOptions(const OptionEntry* entries, int n_entries);

// The largest declared dimension d (the option `dimension`).
constexpr int kMaxDimension = 1000000;

// The largest max_rows_per_unit (dperm.set_budget, the option): a unit's
// rows are group privacy's k, and epsilon / k must stay above kMinEpsilon.
constexpr int64_t kMaxRowsPerUnit = 100000;

// d as the options declare it: `dimension`, else the number of
// `feature_names`; -1 when neither is given (then d is not public, and a
// release charged to a budgeted or protected relation is refused).
int DeclaredDimension(const Options& options);

// Checks the options that depend on the model: dp_softmax needs `classes`
// (K >= 2, part of the model's public shape), the binary losses refuse it.
// Throws Error naming the option.
void CheckOptionsForLoss(const Options& options, LossKind loss);

// Names used in JSON output and error messages.
const char* LossName(LossKind loss);
// The SQL aggregate that trains the loss (dp_logreg, ...).
const char* LossAggregateName(LossKind loss);
// Its label's kind and its link (losses.def).
LabelKind LossLabel(LossKind loss);
Link LossLink(LossKind loss);
// Whether the loss is multi-class (takes the `classes` option): a class label.
bool LossIsMulticlass(LossKind loss);
// The loss whose SQL aggregate is `aggregate` (LossAggregateName); false
// when none is.
bool LossForAggregate(const char* aggregate, LossKind* loss);
// Every loss, in losses.def order.
const std::vector<LossKind>& AllLosses();
const char* AlgorithmName(Algorithm algorithm);
// Every algorithm, in documentation order.
const std::vector<Algorithm>& AllAlgorithms();
const char* AccountantName(Accountant accountant);
const char* NeighborsName(Neighbors neighbors);

// The option table: one entry per key, in documentation order (docs/design.md
// section 1). It drives ParseOptions, OptionKeys, the generic refusal of an
// option an algorithm does not take (registry.hpp), the options table of
// docs/sql-reference.md (OptionsMarkdown; test_algorithm_table.cpp compares
// the two),
// dp_explain's "options" (ExplainJson, OptionSpec::read) and the SQL of
// dp_options (DpOptionsSql, spliced into the install and upgrade scripts).
struct OptionSpec {
  enum class Type { kNumber, kInteger, kBoolean, kText, kTextArray };
  const char* key = nullptr;
  Type type = Type::kNumber;
  // dp_options' parameter: its type, its place among the parameters (1 is
  // first; a new option takes the next one, so that calls by position keep
  // working) and its SQL default (nullptr: none, the option is required).
  const char* sql_type = nullptr;
  int sql_position = 0;
  const char* sql_default = "NULL";
  // kNumber, kInteger: the value must lie in lo..hi (open or closed ends).
  double lo = 0, hi = 0;
  bool lo_open = false, hi_open = false;
  const char* values = nullptr;    // the reference's "values"; nullptr: the range above
  const char* fallback = nullptr;  // the reference's "default"
  const char* doc = nullptr;       // the reference's "meaning"
  const char* hint = nullptr;      // hint of an out-of-range error
  // kNumber only: the one string the option also takes (l2's "auto"),
  // stored by `store` with the entry's kind kString; nullptr: none.
  const char* also_text = nullptr;
  // Stores a checked entry (numbers: `value`, in range) in `o`; text
  // options check their own values.
  void (*store)(const OptionEntry& e, double value, Options& o) = nullptr;
  // Per-algorithm options only (nullptr: every algorithm takes it): whether
  // `o` sets it, and why an algorithm that does not take it refuses it,
  // unless the algorithm says why itself (AlgorithmSpec::refusals).
  bool (*given)(const Options& o) = nullptr;
  const char* unused = nullptr;
  // The value `o` holds, as an entry (the inverse of `store`), for
  // dp_explain's "options" (ExplainJson): kNull when not given and the plan chooses
  // (or, for dataset and feature_names, when the boundary keeps the value:
  // the ledger records the relation, the model names its coefficients).
  OptionEntry (*read)(const Options& o) = nullptr;
};
// The table (option_table.cpp).
const std::vector<OptionSpec>& OptionTable();
// The checked value of entry e of option s: a number or integer in s's
// range, a boolean as 0/1; 0 for text, whose store function checks it.
// Throws kInvalidParameter.
double CheckedOptionValue(const OptionSpec& s, const OptionEntry& e);
// Whether `o` says option `key` was given (Options::given).
bool OptionGiven(const Options& o, const OptionSpec& spec);
// The entry of `key`, or nullptr.
const OptionSpec* FindOption(const std::string& key);

// The option keys, in documentation order (docs/design.md section 1).
const std::vector<std::string>& OptionKeys();

// docs/sql-reference.md's options table (section "Options"), rendered from
// the table (scripts/gen_sql_reference.py writes it; option_reference.cpp).
std::string OptionsMarkdown();

// The SQL of dp_options, rendered from a table (the option table unless a
// test gives another): the function with one parameter per option in
// sql_position order, an overload for each option that also takes text
// (l2 => 'auto'), and their COMMENTs. sql/gen_sql splices it into the
// install and the upgrade script at the line @DP_OPTIONS@. Throws kInternal
// when the positions or defaults cannot make a function (not 1 .. n; a
// required option after one with a default).
std::string DpOptionsSql(const std::vector<OptionSpec>& table = OptionTable());

// "a, b or c" (last_separator " or ") of the names, in order.
std::string JoinNames(const std::vector<std::string>& names, const char* last_separator);

}  // namespace dperm
