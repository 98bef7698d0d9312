// float8[] and oid[] values from C arrays: the one place dperm builds them.
#include "arrays.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "utils/array.h"
}

namespace dperm::pg {

Datum Float8ArrayDatum(const double* values, int n) {
  Datum* datums = static_cast<Datum*>(palloc(sizeof(Datum) * Max(n, 1)));
  for (int i = 0; i < n; i++) datums[i] = Float8GetDatum(values[i]);
  return PointerGetDatum(construct_array(datums, n, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL,
                                         TYPALIGN_DOUBLE));
}

Datum OidArrayDatum(const Oid* oids, int n) {
  Datum* datums = static_cast<Datum*>(palloc(sizeof(Datum) * Max(n, 1)));
  for (int i = 0; i < n; i++) datums[i] = ObjectIdGetDatum(oids[i]);
  return PointerGetDatum(construct_array(datums, n, OIDOID, sizeof(Oid), true, TYPALIGN_INT));
}

}  // namespace dperm::pg
