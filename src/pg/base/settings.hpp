// dperm's settings (settings.cpp): the GUC variables other files read, and
// their definitions. The settings that belong to one mechanism are declared
// beside it: dperm.ledger_wait_timeout (ledger_request.hpp), dperm.pass_key
// (citus.hpp), dperm.internal_pass (pass_aggregate.hpp).
#pragma once

#include "base/boundary.hpp"

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
// may need besides its rows (ReleaseMemoryBytes, planning/memory.hpp); a release
// above it is refused before it is charged (release.cpp).
extern int g_max_release_memory_kb;

// dperm.training_threads: the threads one in-memory release may use
// (the core's row thread limit follows it).
extern int g_training_threads;

// Defines the settings above (DefineCustom...Variable). Called from _PG_init.
void DefineSettings();

}  // namespace dperm::pg
