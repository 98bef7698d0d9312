// Validation of training options (docs/design.md section 1, "Option keys").
#include "dperm/options/options.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace dperm {
namespace {

[[noreturn]] void ThrowUnknownKey(const std::string& key) {
  std::string keys;
  for (const auto& k : OptionKeys()) keys += (keys.empty() ? "" : ", ") + k;
  ThrowInvalid("unknown option \"" + key + "\"", "Valid options: " + keys + ".");
}

}  // namespace

bool OptionGiven(const Options& o, const OptionSpec& spec) {
  const size_t i = static_cast<size_t>(&spec - OptionTable().data());
  return i < OptionTable().size() && (o.given >> i & 1u) != 0;
}

const OptionSpec* FindOption(const std::string& key) {
  for (const OptionSpec& s : OptionTable())
    if (key == s.key) return &s;
  return nullptr;
}

const std::vector<std::string>& OptionKeys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const OptionSpec& s : OptionTable()) k.push_back(s.key);
    return k;
  }();
  return keys;
}

std::string JoinNames(const std::vector<std::string>& names, const char* last_separator) {
  std::string out;
  for (size_t i = 0; i < names.size(); i++) {
    if (i > 0) out += i + 1 == names.size() ? last_separator : ", ";
    out += names[i];
  }
  return out;
}

Options ParseOptions(const OptionEntry* entries, int n_entries) {
  Options o;
  o.has_algorithm = false;
  o.has_l2 = false;           // DefaultL2 (plan_release.hpp) unless the key is given
  o.intercept_offset = true;  // releases fit the intercept on a private offset (offset.hpp)
  for (int i = 0; i < n_entries; i++) {
    const OptionEntry& e = entries[i];
    const OptionSpec* spec = FindOption(e.key);
    // An unknown key is refused even with a null (default) value: a
    // misspelt key must not pass.
    if (spec == nullptr) ThrowUnknownKey(e.key);
    if (e.kind == OptionEntry::Kind::kNull) continue;
    spec->store(e, CheckedOptionValue(*spec, e), o);
    o.given |= 1u << (spec - OptionTable().data());
  }
  // epsilon > 0 whenever given.
  if (!(o.epsilon > 0))
    ThrowInvalid("option \"epsilon\" is required",
                 "Pass dp_options(epsilon => 1.0) or '{\"epsilon\": 1}'::jsonb.");
  // Below the floor a release is almost pure noise, yet still shows its
  // exact n and d and costs (almost) nothing: a free count, not a model.
  if (o.epsilon < kMinEpsilon)
    ThrowInvalid("option \"epsilon\" must be at least " + FormatNumber(kMinEpsilon) + ", not " +
                     FormatNumber(o.epsilon),
                 "Releases below epsilon = " + FormatNumber(kMinEpsilon) +
                     " reveal nothing but their exact row count; dperm refuses them.");
  if (o.dimension > 0 && o.n_feature_names >= 0 && o.n_feature_names != o.dimension)
    ThrowInvalid("feature_names has " + std::to_string(o.n_feature_names) +
                 " names, but dimension is " + std::to_string(o.dimension));
  // delta > 0 below the floor: the Gaussian samplers' failure probability
  // would not be dominated by delta (options.hpp, kMinDelta).
  if (o.delta > 0 && o.delta < kMinDelta)
    ThrowInvalid("option \"delta\" must be 0 or at least " + FormatNumber(kMinDelta) + ", not " +
                     FormatNumber(o.delta),
                 "dperm's Gaussian noise samplers may fail with probability up to about 1e-55 "
                 "per draw, which a smaller delta would not cover; use delta => 0 for pure "
                 "epsilon-DP.");
  return o;
}

int DeclaredDimension(const Options& options) {
  if (options.dimension > 0) return options.dimension;
  return options.n_feature_names > 0 ? options.n_feature_names : -1;
}

double HuberDelta(const Options& options) {
  return options.huber_delta > 0 ? options.huber_delta
                                 : kHuberDeltaPerTargetBound * options.target_bound;
}

void CheckOptionsForLoss(const Options& options, LossKind loss) {
  if (LossIsMulticlass(loss) && options.classes < 2)
    ThrowInvalid(std::string(LossAggregateName(loss)) +
                     " needs the option \"classes\": the number of classes K >= 2",
                 "The class labels are 0 .. K-1; K is part of the model's public shape. "
                 "Pass dp_options(epsilon => ..., classes => K).");
  if (!LossIsMulticlass(loss) && options.classes > 0)
    ThrowInvalid("option \"classes\" applies only to dp_softmax");
}

const char* LossName(LossKind loss) {
  switch (loss) {
#define DPERM_LOSS(id, name, aggregate, label, link) \
  case LossKind::id:                                 \
    return name;
#include "dperm/options/losses.def"
#undef DPERM_LOSS
  }
  return "?";
}

const char* LossAggregateName(LossKind loss) {
  switch (loss) {
#define DPERM_LOSS(id, name, aggregate, label, link) \
  case LossKind::id:                                 \
    return aggregate;
#include "dperm/options/losses.def"
#undef DPERM_LOSS
  }
  return "?";
}

LabelKind LossLabel(LossKind loss) {
  switch (loss) {
#define DPERM_LOSS(id, name, aggregate, label, link) \
  case LossKind::id:                                 \
    return LabelKind::label;
#include "dperm/options/losses.def"
#undef DPERM_LOSS
  }
  throw Error(ErrorKind::kInternal, "unknown loss");
}

Link LossLink(LossKind loss) {
  switch (loss) {
#define DPERM_LOSS(id, name, aggregate, label, link) \
  case LossKind::id:                                 \
    return Link::link;
#include "dperm/options/losses.def"
#undef DPERM_LOSS
  }
  throw Error(ErrorKind::kInternal, "unknown loss");
}

bool LossIsMulticlass(LossKind loss) { return LossLabel(loss) == LabelKind::kClass; }

bool LossForAggregate(const char* aggregate, LossKind* loss) {
  for (LossKind l : AllLosses())
    if (std::strcmp(LossAggregateName(l), aggregate) == 0) {
      *loss = l;
      return true;
    }
  return false;
}

const std::vector<LossKind>& AllLosses() {
  static const std::vector<LossKind> all = {
#define DPERM_LOSS(id, name, aggregate, label, link) LossKind::id,
#include "dperm/options/losses.def"
#undef DPERM_LOSS
  };
  return all;
}

const std::vector<Algorithm>& AllAlgorithms() {
  static const std::vector<Algorithm> all = {
#define DPERM_ALGORITHM(id, name) Algorithm::id,
#include "dperm/options/algorithms.def"
#undef DPERM_ALGORITHM
  };
  return all;
}

const char* AlgorithmName(Algorithm a) {
  switch (a) {
#define DPERM_ALGORITHM(id, name) \
  case Algorithm::id:             \
    return name;
#include "dperm/options/algorithms.def"
#undef DPERM_ALGORITHM
  }
  return "?";
}
const char* AccountantName(Accountant a) { return a == Accountant::kPaper ? "paper" : "tight"; }
const char* NeighborsName(Neighbors) { return "replace_one"; }

}  // namespace dperm
