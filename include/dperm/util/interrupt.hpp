// Cooperative cancellation: the boundary installs a function that reports a
// pending interrupt; long loops call CheckInterrupt(), which throws
// Error(kCancelled) so that the boundary can raise the real interrupt once no
// C++ object is alive. Depends on errors.hpp only, so any module may probe.
//
// The rule: no stretch of the core computes for more than about a
// millisecond of arithmetic without a probe, whatever n, d or K. Loops whose
// iterations cost different amounts (a row of d features, a softmax row of
// K (d + 1), a noise coordinate) count their work with CountWork, which
// probes once kInterruptQuantum units have accumulated; one unit is about
// one multiply-add.
//
// Progress: the boundary may also install a function that publishes how
// many iterations of a training loop are done of how many planned
// (dperm.progress). Loops whose length the plan fixes (public: it depends
// on the options, n and d only) call ReportIterations at the start of each
// iteration and once after the last; loops of a secret, random length
// (rrpsgd's random round, an SVRG epoch's random stop) never do.
#pragma once
#include "dperm/util/errors.hpp"

#include <cstdint>

namespace dperm {

using InterruptProbe = bool (*)();
void SetInterruptProbe(InterruptProbe probe);
void CheckInterrupt();

// Units of work (about one multiply-add each) between two probes of
// CountWork: frequent enough for a prompt cancel, rare enough to cost nothing.
inline constexpr uint64_t kInterruptQuantum = uint64_t(1) << 20;
// The work of drawing one exact noise coordinate (Karney's sampler, the
// discrete samplers: some hundred multiply-adds' time), in those units.
inline constexpr uint64_t kNoiseCoordinateWork = 256;

using IterationHook = void (*)(int64_t done, int64_t planned);
void SetIterationHook(IterationHook hook);

namespace detail {
extern thread_local uint64_t work_since_probe;
extern IterationHook iteration_hook;
}  // namespace detail

// `done` of `planned` iterations of a training loop are done: a test when
// no hook is installed; the hook throttles what it publishes.
inline void ReportIterations(int64_t done, int64_t planned) {
  if (detail::iteration_hook != nullptr) detail::iteration_hook(done, planned);
}

// Counts `work` units and probes (CheckInterrupt) once a quantum has
// accumulated since the last probe. Cheap enough to call per row.
inline void CountWork(uint64_t work) {
  detail::work_since_probe += work;
  if (detail::work_since_probe >= kInterruptQuantum) CheckInterrupt();
}

}  // namespace dperm
