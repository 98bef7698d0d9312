// Module load (module.cpp): the settings other files read.
#pragma once

#include "boundary.hpp"

namespace dperm::pg {

// dperm.allow_seed: the superuser-only setting that lets `seed` work.
extern bool g_allow_seed;

// dperm.max_coefficients: the most coefficients one release may have,
// checked from the options and the public shape before the rows are read.
extern int g_max_coefficients;

// dperm.max_buffer (kB): the most row data an in-memory training aggregate
// may buffer; dperm.train streams relations estimated to need more.
extern int g_max_buffer_kb;
// dperm.streaming_spill: a streaming release keeps its rows after the first pass (streaming.cpp).
extern bool g_streaming_spill;

// dperm.max_release_memory (kB): the most memory one release's training
// may need besides its rows (ReleaseMemoryBytes, registry.hpp); a release
// above it is refused before it is charged (release.cpp).
extern int g_max_release_memory_kb;

}  // namespace dperm::pg
