// The steps of a query's private evaluation (evaluate_query.cpp), shared by
// dperm.evaluate_query (a named model) and dperm.evaluate_query_groups (one
// model per declared group, evaluate_query_groups.cpp).
#pragma once

#include "dperm/options/options.hpp"

#include "base/boundary.hpp"
#include "guard/privacy_unit.hpp"
#include "guard/query_input.hpp"
#include "models/model_evaluate.hpp"
#include "release/release_sums.hpp"

namespace dperm::pg {

// The model evaluated: its loss (loss_name nullptr: no model, so no label
// rule: CheckEvaluationQuery checks the query only), type, value and sizes.
struct EvaluatedModel {
  const char* loss_name;
  dperm::LossKind loss;
  Oid type;  // dp_model's OID
  Datum model;
  int32 d;
  int32 classes;
};

// A query's evaluation input, checked before anything is charged: the
// query (dperm.train_query's rules), who reads it, its features and label
// columns, the label as the metric's SQL, the relations charged and the
// unit (the row when no budget of the family names one). Needs SPI.
struct EvaluationQuery {
  QueryInput q;
  Oid caller;
  Oid reader;
  const char* relation;  // the private relation's name
  const char* features;
  const char* label;
  const char* label_sql;
  Oid* relations;
  int n_relations;
  PrivacyUnit unit;
  const char* unit_column;  // nullptr at the row
  const char* schema;       // dperm's schema, quoted
};
EvaluationQuery CheckEvaluationQuery(const char* query, const char* features, const char* label,
                                     const EvaluatedModel& m);

// One released evaluation: the noisy count (at least 0) and the metrics
// (accuracy and log-loss, or RMSE and 0) over max(1, noisy count).
struct QueryMetrics {
  bool regression;
  double bound;  // the per-row loss (or residual) bound
  double n;
  double m1;
  double m2;
  SumsRelease released;
};

// Releases model `m`'s metric sums and their count over the rows of
// `canonical` (CanonicalQueryText of e.q), each unit bounded to k rows:
// one ReleaseSums, charged (its ledger row's neighbours `neighbors`, or
// nullptr: the unit's) unless `charged`. Needs SPI.
QueryMetrics ReleaseQueryMetrics(const EvaluationQuery& e, const char* canonical,
                                 const EvaluatedModel& m, const EvaluateOptions& o, bool charged,
                                 const char* neighbors);

// The evaluation as JSON text (in `context`): `head` (a JSON object's
// text: the version, or the group) joined to the query, the noisy n, the
// options, the mechanism, the unit and the metrics.
char* QueryEvaluationJson(const char* head, const char* query, const EvaluationQuery& e,
                          const EvaluateOptions& o, const QueryMetrics& r, MemoryContext context);

}  // namespace dperm::pg
