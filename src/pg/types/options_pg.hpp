// Options from jsonb (options_pg.cpp).
#pragma once

#include "dperm/options/options.hpp"
#include "base/boundary.hpp"

extern "C" {
#include "utils/jsonb.h"
}

namespace dperm::pg {

// Options read from a jsonb value; `dataset` and `feature_names` stay as
// palloc'd strings for the boundary's own use.
struct ParsedOptions {
  Options options;
  const char* dataset = nullptr;
  const char* const* feature_names = nullptr;  // options.n_feature_names of them
};

// Validates `options` (errors name the key) and returns the parsed values.
ParsedOptions ParseOptionsJsonb(Jsonb* options);

// The jsonb as text, palloc'd.
char* JsonbText(Jsonb* value);

// `options` with `key` set to the integer `value` (jsonb ||), as a Datum.
Datum WithOption(Jsonb* options, const char* key, int64 value);
// The same with a float8 value.
Datum WithNumberOption(Jsonb* options, const char* key, double value);

// The options of a unit-level release's model (privacy_unit.hpp), from the
// parsed options of the whole release without parsing them again: epsilon
// the model's share, max_rows_per_unit = k, each stored and checked as
// ParseOptions stores and checks a given one (its range, epsilon's floor).
// Returns `options` with both keys set, the JSON the model records.
Jsonb* UnitModelOptions(ParsedOptions* parsed, Jsonb* options, double epsilon, int64 k);

// `options` (and `parsed`) with epsilon set to the model's share (a
// feature spec's auto domains take the rest: auto_domain_pg.hpp), held to
// the floor every given epsilon is.
Jsonb* ModelEpsilonOptions(ParsedOptions* parsed, Jsonb* options, double epsilon);

// Loss named in SQL ("logistic", "huber" or "softmax"), or an error.
LossKind ParseLossName(const char* name);

}  // namespace dperm::pg
