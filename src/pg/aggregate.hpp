// The in-memory training aggregates (aggregate.cpp): their buffer limit.
#pragma once

#include "boundary.hpp"

namespace dperm::pg {

// Refuses an in-memory release whose rows pass dperm.max_buffer (SQLSTATE
// 54000, hint: dperm.train). Uncharged: it depends only on n and d, which
// are public under replace-one neighbours (docs/design.md section 4).
[[noreturn]] void RaiseBufferRefusal();

// Whether n rows of d features fit in dperm.max_buffer (in-memory mode).
bool InMemoryFits(int64 n, int d);

}  // namespace dperm::pg
