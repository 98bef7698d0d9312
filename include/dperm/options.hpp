// Training options: the public inputs every plan is derived from.
//
// Options arrive as jsonb (aggregates cannot take named arguments); the
// boundary turns the jsonb into a flat list of OptionEntry values and the core
// validates them here, so every range rule lives in one place.
#pragma once
#include "dperm/core.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace dperm {

enum class LossKind { kLogistic, kHuber, kSoftmax };
enum class Algorithm {
  kOutputGd, kDpSgd, kRrpsgd, kDpLssgd, kBolton,
  kDpGd, kDpSvrg, kDpSvrgPp, kDpAccmd, kObjective, kObjectiveApprox
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
  double l1 = 0;
  bool fit_intercept = true;
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
};

// Validates the entries and returns the options; throws Error naming the key.
// The smallest epsilon a release may ask for (README "Trust model").
constexpr double kMinEpsilon = 1e-3;

// The default huber_delta is kHuberDeltaPerTargetBound * target_bound: the
// Huber loss is quadratic for residuals up to a tenth of the public target
// scale B and linear beyond. The constant was chosen by held-out R² on the
// regression sets of ../shared/data (docs/heldout.md, "Huber default
// huber_delta"; generator bench/huber_delta_sweep.py). Only public inputs
// enter (an option and a constant), so L = huber_delta R (plan_common.hpp)
// stays a public constant.
constexpr double kHuberDeltaPerTargetBound = 0.1;

// The Huber loss's delta: the option when given, else
// kHuberDeltaPerTargetBound * target_bound. BasePlan stores it in
// plan.options.huber_delta, which every later reader uses.
double HuberDelta(const Options& options);

Options ParseOptions(const OptionEntry* entries, int n_entries);

// Checks the options that depend on the model: dp_softmax needs `classes`
// (K >= 2, part of the model's public shape), the binary losses refuse it.
// Throws Error naming the option.
void CheckOptionsForLoss(const Options& options, LossKind loss);

// Names used in JSON output and error messages.
const char* LossName(LossKind loss);
const char* AlgorithmName(Algorithm algorithm);
// Every algorithm, in documentation order.
const std::vector<Algorithm>& AllAlgorithms();
const char* AccountantName(Accountant accountant);
const char* NeighborsName(Neighbors neighbors);

// The option keys, in documentation order (DESIGN.md section 1).
const std::vector<std::string>& OptionKeys();

}  // namespace dperm
