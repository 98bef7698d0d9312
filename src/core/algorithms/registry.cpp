// The algorithm table (registry.hpp): the list of algorithms.def joined to
// each algorithm's SpecOf, and the checks every algorithm shares.
#include "dperm/algorithms/registry.hpp"

#include "dperm/losses/loss.hpp"
#include "dperm/losses/loss_spec.hpp"
#include "dperm/plan/plan_noise.hpp"
#include "dperm/plan/plan_steps.hpp"

#include <algorithm>

namespace dperm {

// Each is defined in the algorithm's own file.
#define DPERM_ALGORITHM(id, name) \
  template <>                     \
  const AlgorithmSpec& SpecOf<Algorithm::id>();
#include "dperm/options/algorithms.def"
#undef DPERM_ALGORITHM

const AlgorithmSpec& SpecFor(Algorithm algorithm) {
  switch (algorithm) {
#define DPERM_ALGORITHM(id, name) \
  case Algorithm::id:             \
    return SpecOf<Algorithm::id>();
#include "dperm/options/algorithms.def"
#undef DPERM_ALGORITHM
  }
  throw Error(ErrorKind::kInternal, "unknown algorithm");
}

const Mechanism& MechanismFor(Algorithm algorithm) { return *SpecFor(algorithm).mechanism; }

bool TakesOption(Algorithm algorithm, const std::string& key) {
  for (const std::string& k : SpecFor(algorithm).options)
    if (k == key) return true;
  return false;
}

bool LossHas(LossKind loss, LossProperty property) {
  const LossSpec& spec = LossSpecFor(loss);
  switch (property) {
    case LossProperty::kMarginLoss: return !LossIsMulticlass(loss);
    case LossProperty::kSmoothCurvature: return spec.SmoothCurvature();
    case LossProperty::kLabelFreeCurvature: return spec.LabelFreeCurvature();
  }
  return false;
}

bool TakesLoss(Algorithm algorithm, LossKind loss) {
  for (const LossNeed& r : SpecFor(algorithm).loss_needs)
    if (!LossHas(loss, r.property)) return false;
  return true;
}

namespace {

template <class Keep>
std::vector<std::string> NamesWhere(Keep keep) {
  std::vector<std::string> names;
  for (Algorithm a : AllAlgorithms())
    if (keep(SpecFor(a))) names.push_back(AlgorithmName(a));
  return names;
}

void CheckSpec(const AlgorithmSpec& spec, const Options& o, LossKind loss) {
  const char* name = AlgorithmName(spec.algorithm);
  for (const LossNeed& r : spec.loss_needs)
    if (!LossHas(loss, r.property))
      ThrowInvalid(std::string("algorithm ") + name + " does not support " +
                       LossAggregateName(loss) + ": " + r.why,
                   r.hint);
  for (const OptionSpec& option : OptionTable()) {
    if (option.given == nullptr || !option.given(o) || TakesOption(spec.algorithm, option.key))
      continue;
    const char* why = option.unused;
    for (const OptionRefusal& r : spec.refusals)
      if (std::string(r.key) == option.key) why = r.why;
    RejectOption(spec.algorithm, option.key, why);
  }
  if (spec.needs_delta != nullptr && !(o.delta > 0))
    ThrowInvalid(std::string("algorithm ") + name + " needs delta > 0: " + spec.needs_delta,
                 "Pass delta => 1e-6 (or smaller than 1/n), or use algorithm " +
                     JoinNames(PureDpAlgorithms(), " or ") + " for pure epsilon-DP.");
}

}  // namespace

std::vector<std::string> PureDpAlgorithms() {
  return NamesWhere([](const AlgorithmSpec& s) { return s.needs_delta == nullptr; });
}

std::vector<std::string> StreamingAlgorithms() {
  return NamesWhere([](const AlgorithmSpec& s) { return s.streams; });
}

Plan PlanFor(Algorithm algorithm, const Options& options, LossKind loss, int64_t n, int d) {
  const AlgorithmSpec& spec = SpecFor(algorithm);
  CheckSpec(spec, options, loss);
  Plan plan = spec.mechanism->MakePlan(options, loss, n, d);
  // delta must dominate the samplers' failure for this plan's draws
  // (noise.hpp, SAMPLER FAILURE): refused while planning, before any charge.
  CheckDeltaFloor(plan);
  return plan;
}

}  // namespace dperm
