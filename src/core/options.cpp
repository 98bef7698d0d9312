// Validation of training options (DESIGN.md section 1, "Option keys").
#include "dperm/options.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace dperm {
namespace {

const double kMaxIntegral = 9007199254740992.0;  // 2^53: exact in a double
const int64_t kMaxClasses = 100000;

const OptionEntry& Expect(const OptionEntry& e, OptionEntry::Kind kind,
                          const char* what) {
  if (e.kind != kind)
    ThrowInvalid(std::string("option \"") + e.key + "\" must be " + what);
  return e;
}

// Shortest decimal form that reads back as the same double.
std::string Shortest(double v) {
  char buf[32];
  for (int precision = 1; precision <= 17; precision++) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

// A finite number above lo (or at lo unless lo_open) and below hi (or at hi
// unless hi_open); hi = INFINITY means no upper bound.
double Number(const OptionEntry& e, double lo, bool lo_open, double hi,
              bool hi_open = false, const std::string& hint = "") {
  if (e.kind != OptionEntry::Kind::kNumber)
    ThrowInvalid(std::string("option \"") + e.key + "\" must be a finite number", hint);
  double v = e.number;
  bool ok = std::isfinite(v) && (lo_open ? v > lo : v >= lo) &&
            (hi_open ? v < hi : v <= hi);
  if (!ok) {
    std::string range = std::string(lo_open ? "> " : ">= ") + Shortest(lo);
    if (std::isfinite(hi)) range += std::string(hi_open ? " and < " : " and <= ") + Shortest(hi);
    ThrowInvalid(std::string("option \"") + e.key + "\" is " + Shortest(v) +
                 ", must be " + range, hint);
  }
  return v;
}

int64_t Integer(const OptionEntry& e, int64_t lo, int64_t hi) {
  double v = Number(e, static_cast<double>(lo), false, static_cast<double>(hi));
  if (v != std::floor(v))
    ThrowInvalid(std::string("option \"") + e.key + "\" must be an integer");
  return static_cast<int64_t>(v);
}

std::string Text(const OptionEntry& e) {
  Expect(e, OptionEntry::Kind::kString, "a string");
  return e.text;
}

[[noreturn]] void ThrowChoice(const OptionEntry& e, const std::string& choices) {
  ThrowInvalid(std::string("option \"") + e.key + "\" has unknown value \"" +
                   e.text + "\"",
               "Valid values: " + choices + ".");
}

Algorithm ParseAlgorithm(const OptionEntry& e) {
  std::string v = Text(e);
  for (Algorithm a : AllAlgorithms())
    if (v == AlgorithmName(a)) return a;
  std::string names;
  for (Algorithm a : AllAlgorithms())
    names += std::string(names.empty() ? "" : ", ") + AlgorithmName(a);
  ThrowChoice(e, names);
}

Accountant ParseAccountant(const OptionEntry& e) {
  std::string v = Text(e);
  if (v == "tight") return Accountant::kTight;
  if (v == "paper") return Accountant::kPaper;
  ThrowChoice(e, "tight (default), paper");
}

Neighbors ParseNeighbors(const OptionEntry& e) {
  std::string v = Text(e);
  if (v == "replace_one") return Neighbors::kReplaceOne;
  ThrowChoice(e, "replace_one");
}

void CheckFeatureNames(const OptionEntry& e) {
  Expect(e, OptionEntry::Kind::kStringArray, "an array of strings");
  for (int i = 0; i < e.n_items; i++) {
    if (e.items[i] == nullptr || e.items[i][0] == '\0')
      ThrowInvalid("option \"feature_names\" must not contain empty names");
    if (std::strcmp(e.items[i], "intercept") == 0)
      ThrowInvalid("option \"feature_names\" must not use the name \"intercept\"");
  }
}

[[noreturn]] void ThrowUnknownKey(const std::string& key);

}  // namespace

const std::vector<std::string>& OptionKeys() {
  static const std::vector<std::string> keys = {
      "epsilon", "delta", "algorithm", "l2", "l1", "fit_intercept",
      "feature_bound", "huber_delta", "target_bound", "radius", "iterations", "step_size",
      "batch_size", "ls_sigma", "accountant", "neighbors", "dataset", "seed",
      "feature_names", "classes"};
  return keys;
}

namespace {

void ThrowUnknownKey(const std::string& key) {
  std::string keys;
  for (const auto& k : OptionKeys()) keys += (keys.empty() ? "" : ", ") + k;
  ThrowInvalid("unknown option \"" + key + "\"", "Valid options: " + keys + ".");
}

}  // namespace

Options ParseOptions(const OptionEntry* entries, int n_entries) {
  Options o;
  o.has_algorithm = false;
  bool has_epsilon = false;
  for (int i = 0; i < n_entries; i++) {
    const OptionEntry& e = entries[i];
    std::string key = e.key;
    if (e.kind == OptionEntry::Kind::kNull) {  // JSON null = default
      // ... but only for a known key: a misspelt key must not pass.
      const auto& known = OptionKeys();
      if (std::find(known.begin(), known.end(), key) == known.end())
        ThrowUnknownKey(key);
      continue;
    }
    if (key == "epsilon") {
      o.epsilon = Number(e, 0, true, INFINITY);
      has_epsilon = true;
    } else if (key == "delta") {
      o.delta = Number(e, 0, false, 1, true);
    } else if (key == "algorithm") {
      o.algorithm = ParseAlgorithm(e);
      o.has_algorithm = true;
    } else if (key == "l2") {
      o.l2 = Number(e, 0, false, INFINITY);
    } else if (key == "l1") {
      o.l1 = Number(e, 0, false, INFINITY);
    } else if (key == "fit_intercept") {
      o.fit_intercept = Expect(e, OptionEntry::Kind::kBool, "a boolean").boolean;
    } else if (key == "feature_bound") {
      o.feature_bound = Number(e, 0, true, 1e150);
    } else if (key == "huber_delta") {
      o.huber_delta = Number(e, 0, true, 1e150);
    } else if (key == "target_bound") {
      o.target_bound = Number(e, 0, true, 1e150, false,
                              "target_bound is the public bound B on |target|: dp_huber clips "
                              "targets to [-B, B]. Pass B >= the largest |target| you expect, "
                              "e.g. 1 for targets scaled to [0, 1].");
    } else if (key == "radius") {
      o.radius = Number(e, 0, true, 1e150);
    } else if (key == "iterations") {
      o.iterations = Integer(e, 1, 100000000);
    } else if (key == "step_size") {
      o.step_size = Number(e, 0, true, INFINITY);
    } else if (key == "batch_size") {
      o.batch_size = Integer(e, 1, static_cast<int64_t>(kMaxIntegral));
    } else if (key == "ls_sigma") {
      o.ls_sigma = Number(e, 0, false, 1e6);
    } else if (key == "classes") {
      o.classes = static_cast<int>(Integer(e, 2, kMaxClasses));
    } else if (key == "accountant") {
      o.accountant = ParseAccountant(e);
    } else if (key == "neighbors") {
      o.neighbors = ParseNeighbors(e);
    } else if (key == "dataset") {
      if (Text(e).empty()) ThrowInvalid("option \"dataset\" must not be empty");
      o.has_dataset = true;
    } else if (key == "seed") {
      o.seed = static_cast<uint64_t>(
          Integer(e, -static_cast<int64_t>(kMaxIntegral),
                  static_cast<int64_t>(kMaxIntegral)));
      o.has_seed = true;
    } else if (key == "feature_names") {
      CheckFeatureNames(e);
      o.n_feature_names = e.n_items;
    } else {
      ThrowUnknownKey(key);
    }
  }
  if (!has_epsilon)
    ThrowInvalid("option \"epsilon\" is required",
                 "Pass dp_options(epsilon => 1.0) or '{\"epsilon\": 1}'::jsonb.");
  // Below the floor a release is almost pure noise, yet still shows its
  // exact n and d and costs (almost) nothing: a free count, not a model.
  if (o.epsilon < kMinEpsilon)
    ThrowInvalid("option \"epsilon\" must be at least " + FormatNumber(kMinEpsilon) + ", not " +
                     FormatNumber(o.epsilon),
                 "Releases below epsilon = " + FormatNumber(kMinEpsilon) +
                     " reveal nothing but their exact row count; dperm refuses them.");
  return o;
}

double HuberDelta(const Options& options) {
  return options.huber_delta > 0 ? options.huber_delta
                                 : kHuberDeltaPerTargetBound * options.target_bound;
}

void CheckOptionsForLoss(const Options& options, LossKind loss) {
  if (loss == LossKind::kSoftmax && options.classes < 2)
    ThrowInvalid("dp_softmax needs the option \"classes\": the number of classes K >= 2",
                 "The class labels are 0 .. K-1; K is part of the model's public shape. "
                 "Pass dp_options(epsilon => ..., classes => K).");
  if (loss != LossKind::kSoftmax && options.classes > 0)
    ThrowInvalid("option \"classes\" applies only to dp_softmax");
}

const char* LossName(LossKind loss) {
  switch (loss) {
    case LossKind::kLogistic: return "logistic";
    case LossKind::kHuber: return "huber";
    case LossKind::kSoftmax: return "softmax";
  }
  return "?";
}

const std::vector<Algorithm>& AllAlgorithms() {
  static const std::vector<Algorithm> all = {
      Algorithm::kOutputGd, Algorithm::kDpSgd, Algorithm::kRrpsgd,
      Algorithm::kDpLssgd, Algorithm::kBolton, Algorithm::kDpGd,
      Algorithm::kDpSvrg, Algorithm::kDpSvrgPp, Algorithm::kDpAccmd,
      Algorithm::kObjective, Algorithm::kObjectiveApprox};
  return all;
}

const char* AlgorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::kOutputGd: return "output_gd";
    case Algorithm::kDpSgd: return "dp_sgd";
    case Algorithm::kRrpsgd: return "rrpsgd";
    case Algorithm::kDpLssgd: return "dp_lssgd";
    case Algorithm::kBolton: return "bolton";
    case Algorithm::kDpGd: return "dp_gd";
    case Algorithm::kDpSvrg: return "dp_svrg";
    case Algorithm::kDpSvrgPp: return "dp_svrg_pp";
    case Algorithm::kDpAccmd: return "dp_accmd";
    case Algorithm::kObjective: return "objective";
    case Algorithm::kObjectiveApprox: return "objective_approx";
  }
  return "?";
}
const char* AccountantName(Accountant a) {
  return a == Accountant::kPaper ? "paper" : "tight";
}
const char* NeighborsName(Neighbors) { return "replace_one"; }

}  // namespace dperm
