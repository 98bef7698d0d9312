// Protected relations and dperm.train (protect.cpp): the checks a release
// shares with the aggregates and named models.
#pragma once

#include "dperm/options/options.hpp"
#include "boundary.hpp"

namespace dperm::pg {

// Refuses a release whose coefficient count (from the options and the
// features' dimension d, the public shape) exceeds dperm.max_coefficients.
void CheckCoefficientCount(LossKind loss, int d, const Options& options);

// Refuses the seed option unless dperm.allow_seed is on.
void CheckSeedAllowed(const Options& options);

// Protects `relid` (a table, partitioned table or materialized view; the
// caller checked ownership): revokes every direct privilege on it, its
// partitions and inheritance children from every grantee but their owners,
// and records them in dperm.protected with `analysts` (a regrole[]; NULL:
// every role). Refused (2BP01) while a view or materialized view exposes
// their rows to another role. dperm.protect, and dperm.move_budget for the
// relation that replaces a protected one.
void ProtectRelation(Oid relid, Datum analysts, bool analysts_null);
// Refuses (0A000 when protecting, else 55000) a relation with row-level
// security enabled anywhere in its family (RowSecurityInFamily): dperm reads a
// protected relation as its owner, so its policies would be evaluated for
// the owner, not for the analyst. `name` is the relation's name for the
// message.
void RefuseRowSecurity(Oid relid, const char* name, bool protecting);

// Raises 42703 unless `relid` has a column named `name`
// (dperm.train and dperm.train_model take column names); returns its type.
Oid ColumnType(Oid relid, const char* name);

// dperm's aggregate for a loss and the label cast to its exact argument
// type, or a 42804 error if the label column's type does not fit the loss.
struct TrainTarget {
  const char* aggregate;
  const char* label_cast;
  const char* pass_aggregate;  // streaming mode's per-pass aggregate in schema dperm
};
TrainTarget TargetFor(LossKind loss, Oid label_type, const char* label, const char* loss_name);

}  // namespace dperm::pg
