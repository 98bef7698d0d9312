// dperm.evaluate (model_evaluate.cpp): a private estimate of a named
// model's quality on a relation, charged like any release.
#pragma once

#include "base/boundary.hpp"

extern "C" {
#include "utils/jsonb.h"
}

namespace dperm::pg {

// Options of dperm.evaluate, read with their kinds checked (errors name
// the key); they are public and cost nothing when wrong.
struct EvaluateOptions {
  double epsilon = 0;
  int32 version = 0;            // 0: the latest trained version
  double loss_bound = 10;       // B of the clipped per-row log-loss (classifiers)
  double residual_bound = 1;    // B of the clipped per-row residual (Huber)
  bool residual_given = false;  // residual_bound given (else a spec label's hi - lo)
  bool has_seed = false;
  int64 seed = 0;
};
EvaluateOptions ParseEvaluateOptions(Jsonb* options);

// The trained version of `owner`'s model `name` that dperm.evaluate
// evaluates (`version`, or the latest), read as the caller (row-level
// security applies); 55000 if there is none. Copies into `context`.
struct TrainedVersion {
  int32 version;
  char* loss_name;
  Oid model_type;
  Datum model;
  int32 d;
  int32 classes;
  char* label;         // the label column it was trained with
  char* feature_spec;  // the feature spec it was trained through, or nullptr
};
TrainedVersion LoadTrainedVersion(const char* name, int32 wanted, Oid owner, Oid caller,
                                  MemoryContext context);

// dperm.evaluate_query's release (defined in evaluate_query.cpp), also
// dperm.evaluate's on a relation with a privacy unit: the model `name`
// evaluated on the rows of `query` (dperm.train_query's rules, checked
// before the charge), the metric sums and their count released together
// with discrete Laplace noise, the metrics divided by the noisy count.
Datum EvaluateQueryModel(const char* name, const char* query, const char* features,
                         const char* label, EvaluateOptions o);

}  // namespace dperm::pg
