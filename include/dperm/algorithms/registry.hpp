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

// A loss the algorithm cannot train: the error says why and hints at others.
struct LossRefusal {
  LossKind loss;
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
  // Losses it refuses (the others it trains).
  std::vector<LossRefusal> refused_losses;
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
std::vector<std::string> PureDpAlgorithms();      // needs_delta == nullptr
std::vector<std::string> StreamingAlgorithms();   // streams

// Checks the options against the algorithm's spec (a refused loss, an
// option it does not take, delta = 0 where it needs delta > 0), then asks
// its mechanism for the plan. The only way to a mechanism's plan.
Plan PlanFor(Algorithm algorithm, const Options& options, LossKind loss, int64_t n, int d);

}  // namespace dperm
