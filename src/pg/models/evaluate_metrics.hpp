// dperm.evaluate's metrics as SQL (evaluate_metrics.cpp): the label of a
// row as training reads it, the query of the exact clipped sums, and their
// read after the charge.
#pragma once

#include "dperm/model/feature_spec.hpp"
#include "dperm/options/options.hpp"

#include "base/boundary.hpp"
#include "release/train_input.hpp"

namespace dperm::pg {

// The label of a row as training reads it, as an SQL expression of the
// column `label`: logistic positive when true or > 0 (NULL and NaN
// negative), softmax classes clamped into 0 .. K-1 (NULL: 0), Huber targets
// NULL: 0.
char* ColumnLabel(dperm::LossKind loss, const TrainTarget& target, int32 classes,
                  const char* label);

// The same through a spec's label (`encoded`: its dperm.encode_label, NULL
// outside the domain, imputed as training imputes it): logistic positive
// when 1, softmax the class index (NULL: 0), Huber the target mapped back
// to [lo, hi] from its scaled value (NULL: the middle).
char* SpecLabel(dperm::LossKind loss, const dperm::FeatureColumn& label, const char* encoded);

// The query of the metric sums over the rows of `qualified` ($1 the model,
// $2 d, $3 the bound): `features` and `label` are SQL expressions of its
// columns (ColumnLabel, SpecLabel); `ext` dperm's schema, quoted. Its
// columns: the metric sums (the second 0 for a regression), then count(*).
char* MetricSql(dperm::LossKind loss, const char* features, const char* label_expr,
                const char* qualified, const char* ext);

// The exact clipped sums of dperm.evaluate (MetricSql), read as `reader`
// after the charge (ReleaseSums' ReadSums).
struct MetricRead {
  Oid reader;
  char* sql;
  Oid model_type;
  Datum model;
  int32 d;
  double bound;
  // Where the read puts the number of rows (MetricSql's third column) among
  // the sums: after the metric sums (dperm.evaluate_query), or -1: not read.
  int count_index = -1;
};
void ReadMetricSums(void* arg, double* sums);

}  // namespace dperm::pg
