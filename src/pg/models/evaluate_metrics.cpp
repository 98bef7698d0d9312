// dperm.evaluate's metrics as SQL (evaluate_metrics.hpp).
#include "dperm/model/feature_spec.hpp"
#include "dperm/options/options.hpp"

#include "models/evaluate_metrics.hpp"
#include "base/internal_sql.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
}

namespace dperm::pg {

// The label of a row as training reads it, as an SQL expression of the
// column `label`: logistic positive when true or > 0 (NULL and NaN
// negative), softmax classes clamped into 0 .. K-1 (NULL: 0), Huber targets
// NULL: 0.
char* ColumnLabel(dperm::LossKind loss, const TrainTarget& target, int32 classes,
                  const char* label) {
  const char* y = quote_identifier(label);
  const dperm::LabelKind kind = dperm::LossLabel(loss);
  if (kind == dperm::LabelKind::kTarget) return psprintf("COALESCE(%s::pg_catalog.float8, 0)", y);
  if (kind == dperm::LabelKind::kClass)
    return psprintf(
        "pg_catalog.int4larger(0, pg_catalog.int4smaller(%d, COALESCE(%s::pg_catalog.int4, 0)))",
        classes - 1, y);
  if (strcmp(target.label_cast, "pg_catalog.bool") == 0)
    return psprintf("CASE WHEN %s THEN 1 ELSE 0 END", y);
  return psprintf(
      "CASE WHEN %s OPERATOR(pg_catalog.>) 0 AND %s OPERATOR(pg_catalog.<>) "
      "'NaN'::pg_catalog.float8 THEN 1 ELSE 0 END",
      y, y);
}

// The same through a spec's label (`encoded`: its dperm.encode_label, NULL
// outside the domain, imputed as training imputes it): logistic positive
// when 1, softmax the class index (NULL: 0), Huber the target mapped back
// to [lo, hi] from its scaled value (NULL: the middle).
char* SpecLabel(dperm::LossKind loss, const dperm::FeatureColumn& label, const char* encoded) {
  if (dperm::LossLabel(loss) == dperm::LabelKind::kTarget)
    return psprintf(
        "(%.17g::pg_catalog.float8 OPERATOR(pg_catalog.+) (%.17g::pg_catalog.float8"
        " OPERATOR(pg_catalog.*) COALESCE(%s, 0)))",
        dperm::TargetMapOf(label.lo, label.hi).centre,
        dperm::TargetMapOf(label.lo, label.hi).half_range, encoded);
  if (dperm::LossLabel(loss) == dperm::LabelKind::kClass)
    return psprintf("COALESCE(%s::pg_catalog.int4, 0)", encoded);
  return psprintf("CASE WHEN %s OPERATOR(pg_catalog.>) 0 THEN 1 ELSE 0 END", encoded);
}

// The query of the metric sums over the rows of `qualified` ($1 the model,
// $2 d, $3 the bound): `features` and `label` are SQL expressions of its
// columns (ColumnLabel, SpecLabel).
char* MetricSql(dperm::LossKind loss, const char* features, const char* label_expr,
                const char* qualified, const char* ext) {
  bool regression = dperm::LossLabel(loss) == dperm::LabelKind::kTarget;  // a regression's metrics
  char* rows = psprintf(
      "SELECT COALESCE(%s::pg_catalog.float8[], pg_catalog.array_fill(0::pg_catalog.float8, ARRAY[$2])) AS f,"
      "       %s AS y FROM %s",
      features, label_expr, qualified);
  const char* ok =
      "(pg_catalog.array_ndims(r.f) OPERATOR(pg_catalog.=) 1 AND "
      "pg_catalog.array_length(r.f, 1) OPERATOR(pg_catalog.=) $2)";
  // The metric sums are exact (exact_sum.hpp): each row's value v in
  // [0, B] is rounded to B 2^-40 and the integers round(v/B 2^40) summed as
  // bigint (an exact numeric sum, whatever the row order or the parallel
  // plan), then rounded once to a double; the slack passed to
  // ReleaseBoundedSums counts the grid and that rounding. The count (the
  // third column, released by dperm.evaluate_query) is exact.
  char* sql;
  if (regression)
    sql = psprintf(
        "SELECT COALESCE(pg_catalog.sum(pg_catalog.round((CASE WHEN %s THEN pg_catalog.power(pg_catalog.float8larger("
        "         OPERATOR(pg_catalog.-) $3, pg_catalog.float8smaller($3, r.y OPERATOR(pg_catalog.-) %s.dp_predict($1, r.f))), 2)"
        "         ELSE $3 OPERATOR(pg_catalog.*) $3 END) OPERATOR(pg_catalog./) ($3 OPERATOR(pg_catalog.*) $3)"
        "         OPERATOR(pg_catalog.*) 1099511627776::pg_catalog.float8)::pg_catalog.int8), 0)::pg_catalog.float8"
        "         OPERATOR(pg_catalog.*) ($3 OPERATOR(pg_catalog.*) $3) OPERATOR(pg_catalog./) 1099511627776::pg_catalog.float8,"
        "       0, pg_catalog.count(*)::pg_catalog.float8 FROM (%s) r",
        ok, ext, rows);
  else
    sql = psprintf(
        "SELECT COALESCE(pg_catalog.sum(CASE WHEN %s AND %s.dp_predict_class($1, r.f) OPERATOR(pg_catalog.=) r.y"
        "         THEN 1 ELSE 0 END), 0)::pg_catalog.float8,"
        "       COALESCE(pg_catalog.sum(pg_catalog.round((CASE WHEN %s THEN pg_catalog.float8smaller($3,"
        "         OPERATOR(pg_catalog.-) pg_catalog.ln(pg_catalog.float8larger(1e-300,"
        "           (%s.dp_predict_proba($1, r.f))[r.y OPERATOR(pg_catalog.+) 1])))"
        "         ELSE $3 END) OPERATOR(pg_catalog./) $3"
        "         OPERATOR(pg_catalog.*) 1099511627776::pg_catalog.float8)::pg_catalog.int8), 0)::pg_catalog.float8"
        "         OPERATOR(pg_catalog.*) $3 OPERATOR(pg_catalog./) 1099511627776::pg_catalog.float8,"
        "       pg_catalog.count(*)::pg_catalog.float8 FROM (%s) r",
        ok, ext, ok, ext, rows);
  return sql;
}

void ReadMetricSums(void* arg, double* sums) {
  const MetricRead* m = static_cast<const MetricRead*>(arg);
  Oid types[3] = {m->model_type, INT4OID, FLOAT8OID};
  Datum args[3] = {m->model, Int32GetDatum(m->d), Float8GetDatum(m->bound)};
  RunInternalSql(m->reader, m->sql, 3, types, args, nullptr, SPI_OK_SELECT, true);
  bool isnull;
  sums[0] = DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
  sums[1] = DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
  if (m->count_index >= 0)
    sums[m->count_index] =
        DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
}

}  // namespace dperm::pg
