// The in-memory training aggregates (aggregate.cpp): their buffer limit,
// and the label rule they share with the per-pass aggregates.
#pragma once

#include "dperm/rows/rows.hpp"

#include <cmath>

#include "boundary.hpp"

namespace dperm::pg {

// Refuses an in-memory release whose rows pass dperm.max_buffer (SQLSTATE
// 54000, hint: dperm.train). Uncharged: it depends only on n and d, which
// are public under replace-one neighbours (docs/design.md section 4).
[[noreturn]] void RaiseBufferRefusal();

// Whether n rows of d features fit in dperm.max_buffer (in-memory mode).
bool InMemoryFits(int64 n, int d);

// How a training aggregate's label argument becomes the stored label.
enum class LabelRule { kBoolean, kLogisticFloat, kHuberTarget, kClass };

// The stored label of a row, argument 2 of a training or per-pass
// aggregate: the sanitising rule of docs/design.md section 4, one rule for
// both (every row is kept, so n is the number of rows read whatever their
// values). A NULL label is imputed as a NaN one (logistic: negative; Huber:
// 0), a NULL class as class 0, and a class outside 0 .. K-1 is clamped into
// it, as features are clipped. Inline: it runs once a row.
inline double StoredLabel(FunctionCallInfo fcinfo, LabelRule rule, double target_bound,
                          int classes) {
  bool null_label = PG_ARGISNULL(2);
  switch (rule) {
    case LabelRule::kBoolean: return !null_label && PG_GETARG_BOOL(2) ? 1.0 : -1.0;
    case LabelRule::kLogisticFloat: return LogisticLabel(null_label ? NAN : PG_GETARG_FLOAT8(2));
    case LabelRule::kHuberTarget:
      return HuberTarget(null_label ? NAN : PG_GETARG_FLOAT8(2), target_bound);
    case LabelRule::kClass: return null_label ? 0 : Max(0, Min(classes - 1, PG_GETARG_INT32(2)));
  }
  return 0;
}

}  // namespace dperm::pg
