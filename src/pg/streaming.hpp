// Streaming mode of dperm.train (streaming.cpp).
#pragma once

#include "dperm/options/options.hpp"
#include "boundary.hpp"
#include "options_pg.hpp"

extern "C" {
#include "utils/jsonb.h"
}

namespace dperm::pg {

// One streaming release of dperm.train (streaming.cpp), everything public
// already checked: plans, charges `relations` once, then trains by passes of
// `pass_sql` ($1 = w, $2 = spec) run as `reader`. NULL (*isnull) for n = 0.
struct StreamingRequest {
  Oid reader;
  const char* pass_sql;
  LossKind loss;
  const ParsedOptions* parsed;
  Jsonb* options;
  int64 n;
  int d;
  const Oid* relations;
  int n_relations;
  bool sign_passes;  // a Citus table: every pass carries a token (citus.cpp)
};
Datum TrainStreamingRelease(const StreamingRequest& request, bool* isnull);

}  // namespace dperm::pg
