// dperm.train (train_pg.cpp): the column resolution it shares with the
// named models and dperm.evaluate.
#pragma once

#include "dperm/options/options.hpp"
#include "boundary.hpp"
#include "row_buffer.hpp"

namespace dperm::pg {

// Raises 42703 unless `relid` has a column named `name`
// (dperm.train and dperm.train_model take column names); returns its type.
Oid ColumnType(Oid relid, const char* name);

// dperm's aggregate for a loss and the label cast to its exact argument
// type, or a 42804 error if the label column's type does not fit the loss.
struct TrainTarget {
  const char* aggregate;
  const char* label_cast;
  const char* pass_aggregate;  // streaming mode's per-pass aggregate in schema dperm
  LabelRule rule;              // how the cast label is stored (row_buffer.hpp)
};
TrainTarget TargetFor(LossKind loss, Oid label_type, const char* label, const char* loss_name);

}  // namespace dperm::pg
