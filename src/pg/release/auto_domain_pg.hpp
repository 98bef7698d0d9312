// The domain step of dperm.train for a feature spec's auto columns
// (dperm/model/auto_domain.hpp): planned before anything is charged
// (PlanAutoDomains), run after the charge and before the rows are read
// (RunAutoDomains, through Release's DomainStep).
#pragma once

#include "dperm/model/feature_spec.hpp"

#include "base/boundary.hpp"
#include "release/release_request.hpp"

namespace dperm::pg {

struct TrainInput;

// What the domain step reads and what it chose.
struct AutoDomains {
  Oid reader;
  const char* from;                    // the relation, qualified and quoted
  const dperm::FeatureSpec* declared;  // the spec as written
  double epsilon;                      // the step's share, split over the auto columns
  bool seeded;
  uint64 seed;
  MemoryContext context;  // outlives SPI: `resolved` and this struct live here
  // After RunAutoDomains: the spec with the chosen bounds, and the features
  // and label as SQL of the columns through it.
  const dperm::FeatureSpec* resolved;
  const char* features_sql;
  const char* label_sql;
};

// Before anything is charged (every refusal here costs nothing): when the
// spec of `in` has auto columns, takes kAutoDomainShare of the options'
// epsilon for the domain step (request->domain_epsilon; the options keep
// the model's share, so the charge is the epsilon asked) and returns the
// step, palloc'd; nullptr when the spec has none. Refuses (0A000) a
// release at a privacy unit: the step's quantiles are per row.
AutoDomains* PlanAutoDomains(const TrainInput& in, ReleaseRequest* request);

// After the charge: reads the auto columns' values as the reader (one scan;
// each value's text parsed as the encoder parses it, so no value raises),
// chooses each column's bounds (ChooseAutoBounds at epsilon / columns, its
// own key: the options' seed, or pg_strong_random), and sets `resolved`,
// `features_sql` and `label_sql`.
void RunAutoDomains(AutoDomains* domains);

}  // namespace dperm::pg
