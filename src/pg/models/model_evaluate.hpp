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

}  // namespace dperm::pg
