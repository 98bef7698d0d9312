// Full passes over the rows on several threads of one backend.
//
// WHY. A default release spends almost all of its time in full gradient
// passes (dp_gd's 100 steps, objective perturbation's fixed schedule),
// each a sum over rows that is exact (exact_sum.hpp): its value does not
// depend on how the rows are split, so parts summed on different threads
// and merged give the same bits as one thread. docs/benchmarks.md measures
// what it buys.
//
// HOW. ForRowParts(n, parts, body) runs body(part, begin, end) for `parts`
// contiguous ranges of [0, n): part 0 on the calling thread, the others
// on threads started for the pass and joined before it returns (no pool
// outlives a pass, so nothing runs while PostgreSQL code does). The helper
// threads start with every signal blocked (PostgreSQL's handlers run on
// the backend's own thread only); they call no PostgreSQL code: the core
// never does, and its interrupt probe reads flags only (interrupt.hpp). An
// exception in any part (a cancel, memory) is rethrown on the calling
// thread after every thread has been joined; a thread that cannot be
// started runs its part on the calling thread instead.
//
// HOW MANY. RowParts: at most the limit the boundary sets from
// dperm.training_threads (SetRowThreadLimit; 1 until then), and 1 for
// passes too small to repay starting a thread. Both depend on n, d and a
// setting only (public), never on the rows' values.
#pragma once
#include <cstdint>
#include <functional>

namespace dperm {

void SetRowThreadLimit(int threads);

// Work (about one multiply-add a unit, as CountWork's) each part must have
// for a pass to be split: twice what starting and joining a thread costs
// (some 50 microseconds, about 2^17 units).
inline constexpr uint64_t kMinPartWork = uint64_t(1) << 18;

// Parts for a pass of n rows of `work_per_row` units each.
int RowParts(int64_t n, uint64_t work_per_row);

using RowPartBody = std::function<void(int part, int64_t begin, int64_t end)>;
void ForRowParts(int64_t n, int parts, const RowPartBody& body);

class ExactSum;
// An exact sum over n rows of `work_per_row` units, in RowParts parts: each
// part's add(begin, end, sum) fills its own ExactSum of total's size and
// grid; all are merged into total (exact: the same integers as one part).
using ExactRowsAdd = std::function<void(int64_t begin, int64_t end, ExactSum& sum)>;
void SumRowParts(int64_t n, uint64_t work_per_row, ExactSum& total, const ExactRowsAdd& add);

}  // namespace dperm
