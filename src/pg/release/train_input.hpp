// dperm.train's input (train_input.cpp): its arguments resolved, who reads
// the relation, and the column resolution it shares with the named models
// and dperm.evaluate (the type of a column, dperm's aggregate for a label).
#pragma once

#include "dperm/options/options.hpp"

#include "base/boundary.hpp"
#include "types/feature_spec_pg.hpp"
#include "release/row_buffer.hpp"

extern "C" {
#include "utils/jsonb.h"
}

namespace dperm::pg {

struct AutoDomains;  // auto_domain_pg.hpp

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

// How dperm.train reads the rows.
enum class TrainMode { kAuto, kInMemory, kStreaming };

// A mode's name (auto, in_memory, streaming), or 22023.
TrainMode ParseTrainMode(const char* mode);

// dperm.train's input as its arguments give it, resolved: the relation,
// the columns it reads and the features and label as SQL of them, the loss,
// the mode; then who reads it (CheckReader).
struct TrainInput {
  Oid relid;
  char* name;       // the relation, for messages
  char* qualified;  // the relation, schema-qualified and quoted
  Oid owner;
  Oid caller;
  LossKind loss;
  const char* loss_name;
  TrainMode mode;
  Jsonb* options;  // as given
  bool has_spec;   // features: a feature spec (jsonb) of raw columns
  SpecFeatures spec;
  // The spec's auto columns' domain step (PlanAutoDomains; nullptr: none),
  // run after the charge: the model states its resolved spec.
  AutoDomains* domains;
  bool spec_label;           // the spec declares the label's domain
  const char* features;      // the features column ("features" through a spec)
  const char* label;         // the label column
  const char* features_sql;  // the features and the label as SQL of the columns
  const char* label_sql;
  const char** read_columns;
  int n_read;
  // Who reads (CheckReader): the owner of a protected relation, else the caller.
  bool is_protected;
  Oid reader;
  Oid label_type;
  TrainTarget target;
  // Features of any numeric array type, cast to float8[] as dperm's
  // aggregate would (a named model's run on a relation it reads:
  // model_versions.cpp); otherwise float8[] only.
  bool numeric_arrays;
};

// Step 1 of dperm.train: its arguments (`fcinfo`), the relation locked, the
// columns read and the features and label as SQL expressions of them.
TrainInput ResolveInput(FunctionCallInfo fcinfo);

// The same from values (a named model's run, model_versions.cpp): the
// features a column's name, or (feature_spec set, features unused) a
// feature spec of raw columns.
TrainInput ResolveTrainInput(Oid relid, const char* features, Jsonb* feature_spec,
                             const char* label, const char* loss_name, Jsonb* options,
                             TrainMode mode);

// Step 2: who reads. A protected relation is read as its owner by the
// analysts the owner listed (refused while row-level security is enabled
// in its family); any other with the caller's own rights. Then the columns'
// types and dperm's aggregate for them. Needs SPI.
void CheckReader(TrainInput* in);

}  // namespace dperm::pg
