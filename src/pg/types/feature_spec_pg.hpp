// Feature specs in PostgreSQL (the core's feature_spec.hpp): the encoder SQL
// calls (dperm.encode_values), and what dperm.train needs to read raw
// columns through a spec.
#pragma once

#include "dperm/model/feature_spec.hpp"
#include "dperm/options/options.hpp"

#include "base/boundary.hpp"

extern "C" {
#include "access/htup_details.h"
#include "utils/jsonb.h"
}

namespace dperm::pg {

// The features of a release read through a spec: the SQL expression that
// encodes a row of `relid` (its columns by unqualified name), and the spec.
struct SpecFeatures {
  const char* sql;             // dperm.encode_values(spec, ARRAY[col::text, ...])
  const char* const* columns;  // the spec's columns, in order
  int n_columns;
  const dperm::FeatureSpec* spec;  // lives in the caller's memory context
  // The spec's column marked "label", read through its domain:
  // dperm.encode_label(spec, col::text), float8 (NULL when the value is not
  // in the domain); nullptr when the spec marks no label.
  const char* label_sql;
};

// Parses `spec` and checks it against `relid` before anything is read or
// charged: every column exists (42703) and has a type its declaration can
// encode (42804: bounds need a number type, type boolean a boolean).
SpecFeatures SpecFeaturesFor(Oid relid, Jsonb* spec);

// The features and label SQL of `spec` (its FeatureSpecJson: a spec whose
// auto bounds were chosen), as SpecFeaturesFor writes them; the columns
// were checked by SpecFeaturesFor already.
void SpecSqlFor(const dperm::FeatureSpec& spec, const char** features_sql, const char** label_sql);

// Checks a spec's label against the release before anything is read or
// charged (22023): it is the column `label` names, and its domain is one
// `loss` reads (logistic: "values" [negative, positive] or boolean; softmax:
// "values", the classes; Huber: "bounds"). Returns the type the encoded
// label is passed to the aggregate as (float8, or int4 for softmax).
Oid CheckSpecLabel(const dperm::FeatureSpec& spec, const char* label, dperm::LossKind loss);

// A stored spec's text parsed into `mcxt` (destroyed with it).
const dperm::FeatureSpec* ParsedSpec(MemoryContext mcxt, const char* text);

// Encodes a row of any composite type by `spec` into out[0..d): each spec
// column by name (42703 when the row type has no such column: the query's
// shape, not a value); values through their type's output function.
void EncodeRecord(const dperm::FeatureSpec& spec, HeapTupleHeader row, double* out);

// `options` with the spec's public shape: dimension (d), feature_names (the
// encoded coordinates) and feature_bound (sqrt(columns)), and with a label:
// classes (softmax's values) or target_bound 1 (Huber's bounds, scaled);
// refuses (22023) options that set any of them otherwise, and a Huber label
// with bounds off centre without fit_intercept.
Datum WithSpecOptions(Jsonb* options, const dperm::FeatureSpec& spec, dperm::LossKind loss);

}  // namespace dperm::pg
