// float8[] and oid[] values from C arrays: the one place dperm builds them.
#include "base/arrays.hpp"

#include <cmath>

extern "C" {
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/arrayaccess.h"
}

namespace dperm::pg {

Datum Float8ArrayDatum(const double* values, int n) {
  Datum* datums = static_cast<Datum*>(palloc(sizeof(Datum) * Max(n, 1)));
  for (int i = 0; i < n; i++) datums[i] = Float8GetDatum(values[i]);
  return PointerGetDatum(
      construct_array(datums, n, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

Datum OidArrayDatum(const Oid* oids, int n) {
  Datum* datums = static_cast<Datum*>(palloc(sizeof(Datum) * Max(n, 1)));
  for (int i = 0; i < n; i++) datums[i] = ObjectIdGetDatum(oids[i]);
  return PointerGetDatum(construct_array(datums, n, OIDOID, sizeof(Oid), true, TYPALIGN_INT));
}

int Float8ArrayPrefix(ArrayType* array, int limit, double* out) {
  const int n = Min(ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array)), Max(limit, 0));
  if (!ARR_HASNULL(array)) {
    memcpy(out, ARR_DATA_PTR(array), sizeof(double) * n);
    return n;
  }
  array_iter it;
  array_iter_setup(&it, reinterpret_cast<AnyArrayType*>(array));
  for (int i = 0; i < n; i++) {
    bool isnull;
    Datum v = array_iter_next(&it, &isnull, i, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
    out[i] = isnull ? NAN : DatumGetFloat8(v);
  }
  return n;
}

}  // namespace dperm::pg
