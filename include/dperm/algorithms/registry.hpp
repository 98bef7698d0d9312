// The algorithm table. Each algorithm declares itself once, in its own file,
// by defining SpecOf<Algorithm::kX>(): its mechanism and what it takes. The
// list of algorithms is algorithms.def (the enum, the SQL names); this
// header turns the two into the registry (MechanismFor), the generic checks
// of options against an algorithm (PlanFor), and the lists that hints name.
//
// Kept apart from mechanism.hpp, which every algorithm includes; this header
// includes no algorithm, so it closes no include cycle.
#pragma once
#include "dperm/util/errors.hpp"
#include "dperm/algorithms/mechanism.hpp"

#include <string>
#include <vector>

namespace dperm {

// An option the algorithm refuses for its own reason (not the option
// table's OptionSpec::unused).
struct OptionRefusal {
  const char* key;
  const char* why;
};

// What a mechanism may need of a loss (its spec, loss_spec.hpp): the
// mechanism trains every loss that has all it needs, whatever its name.
enum class LossProperty {
  kMarginLoss,          // a margin loss: rank-1 row Hessians (not a class label)
  kSmoothCurvature,     // LossSpec::SmoothCurvature
  kLabelFreeCurvature,  // LossSpec::LabelFreeCurvature
};
bool LossHas(LossKind loss, LossProperty property);

// A property the algorithm needs: the error for a loss without it says why
// (the texts name the loss that first lacked it) and hints at others.
struct LossNeed {
  LossProperty property;
  const char* why;
  const char* hint;
};

struct AlgorithmSpec {
  AlgorithmSpec(Algorithm a, const Mechanism& m) : algorithm(a), mechanism(&m) {}
  Algorithm algorithm;
  const Mechanism* mechanism;
  // The per-algorithm options (OptionSpec::given) it takes. PlanFor refuses
  // the others when given, naming the option, the algorithm and the reason.
  std::vector<std::string> options;
  std::vector<OptionRefusal> refusals;
  // What it needs of a loss, checked in order (the first one missing is
  // the error); it trains every loss that has them all.
  std::vector<LossNeed> loss_needs;
  // nullptr: delta = 0 gives pure epsilon-DP; else why it needs delta > 0.
  const char* needs_delta = nullptr;
  // Trains from full-batch gradient passes only, so it can stream
  // (streaming.hpp: dperm.train above dperm.max_buffer).
  bool streams = false;
  // Why it cannot stream (streams = false), for the error.
  const char* no_streaming = "it reads single rows";
  // Its training's state (ReleaseMemoryBytes, planning/memory.hpp): the
  // vectors of the model's dimension Train keeps alive at once, its own and
  // the temporaries of the gradients it takes, and the arrays of 8 bytes per
  // row (row indices, a permutation) it allocates.
  int model_vectors = 4;
  int row_arrays = 0;
  // Arrays of dim x dim values it keeps alive at once (ssp's moments).
  int model_matrices = 0;
};

// Defined once per algorithm, in its own file (algorithms.def).
template <Algorithm A>
const AlgorithmSpec& SpecOf();

const AlgorithmSpec& SpecFor(Algorithm algorithm);
const Mechanism& MechanismFor(Algorithm algorithm);

bool TakesOption(Algorithm algorithm, const std::string& key);
bool TakesLoss(Algorithm algorithm, LossKind loss);

// The SQL names of the algorithms with a property, in documentation order.
std::vector<std::string> PureDpAlgorithms();     // needs_delta == nullptr
std::vector<std::string> StreamingAlgorithms();  // streams

// Checks the options against the algorithm's spec (a refused loss, an
// option it does not take, delta = 0 where it needs delta > 0), then asks
// its mechanism for the plan. The only way to a mechanism's plan.
Plan PlanFor(Algorithm algorithm, const Options& options, LossKind loss, int64_t n, int d);

}  // namespace dperm
